"""Fixtures every tier shares: a real NATS server (embedded nats-server with JetStream); and how
the tiers share the workers when pytest-xdist runs the suite (`scripts/test` runs `-n 2`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hackaudit.shared.nats_server import EmbeddedNats

# Tiers on the real engine: they share session-scoped images, base images and the wheelhouse, and
# their timing checks were set for one of them at a time on the engine.
ON_THE_ENGINE = ("tests/integration/", "tests/e2e/")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, called only when it distributes
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Every integration and e2e test runs in one worker, in collection order, as in a run without
    xdist; the unit and component tests (pure logic, fakes, in-memory brokers, NATS on free ports,
    tmp_path state) are dealt to the workers one at a time meanwhile."""
    from xdist.scheduler import LoadScopeScheduling

    class EngineTiersInOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "engine" if nodeid.startswith(ON_THE_ENGINE) else nodeid

    return EngineTiersInOneWorker(config, log)


@pytest.fixture
def nats_url(tmp_path: Path) -> Iterator[str]:
    """A fresh nats-server with JetStream for one test: no state leaks between tests."""
    with EmbeddedNats(tmp_path / "nats") as server:
        yield server.url
