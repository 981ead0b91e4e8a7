"""Fixtures for the repairer's component tests: the attacker's fake Messages API, reused."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The test tree is not a package: make the fake (kept with the attacker's tests) importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "attacker"))

from fake_messages_api import FakeMessagesApi, serve


@pytest.fixture
def messages_api() -> Iterator[tuple[str, FakeMessagesApi]]:
    """(base URL, scripted fake) — point the real SDK's base_url at the URL."""
    with serve() as running:
        yield running
