"""Fixtures for the attacker's component tests: the fake model APIs on local ports."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The test tree is not a package (pytest imports it with importlib): make the fake importable.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_chat_api import FakeChatApi, serve_chat
from fake_messages_api import FakeMessagesApi, serve


@pytest.fixture
def messages_api() -> Iterator[tuple[str, FakeMessagesApi]]:
    """(base URL, scripted fake) — point the real SDK's base_url at the URL."""
    with serve() as running:
        yield running


@pytest.fixture
def chat_api() -> Iterator[tuple[str, FakeChatApi]]:
    """(base URL ending in /v1, scripted fake) — point the real openai SDK's base_url at it."""
    with serve_chat() as running:
        yield running
