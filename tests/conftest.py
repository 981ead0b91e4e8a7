"""Fixtures every tier shares: a real NATS server (embedded nats-server with JetStream)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hackaudit.shared.nats_server import EmbeddedNats

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def nats_url(tmp_path: Path) -> Iterator[str]:
    """A fresh nats-server with JetStream for one test: no state leaks between tests."""
    with EmbeddedNats(tmp_path / "nats") as server:
        yield server.url
