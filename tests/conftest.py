"""Fixtures every tier shares: a real NATS server (embedded nats-server with JetStream); and how
the tiers share the workers when pytest-xdist runs the suite (`scripts/test` runs `-n 2`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hackaudit.shared.nats_server import EmbeddedNats

# Tiers on the real engine: they share session-scoped images, base images and the wheelhouse, and
# their timing checks were set for one of them at a time on the engine.
ON_THE_ENGINE = ("tests/integration/", "tests/e2e/")
TERMINAL_SIZE = ("COLUMNS", "LINES")


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


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, on the controller
def pytest_configure_node(node: Any) -> None:
    """Hands the controller's terminal size settings to each worker (see `pytest_configure`)."""
    node.workerinput["terminal_size_env"] = {name: os.environ.get(name) for name in TERMINAL_SIZE}


def pytest_configure(config: pytest.Config) -> None:
    """An xdist worker starts with COLUMNS=80 and LINES=24 whatever the controller had; the CLI's
    console takes its width from them, so a worker takes the controller's, as a run without xdist
    would have."""
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is None:
        return
    for name, value in workerinput.get("terminal_size_env", {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def nats_url(tmp_path: Path) -> Iterator[str]:
    """A fresh nats-server with JetStream for one test: no state leaks between tests."""
    with EmbeddedNats(tmp_path / "nats") as server:
        yield server.url
