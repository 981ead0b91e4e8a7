"""Fixtures of the fault tests: a 3-node JetStream cluster per test, and the service processes
started on it, all stopped at the end of the test whatever happened."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

# The calc task's image, built from the base image and cached: the real-sandbox fault test runs it.
from tests.integration.sandbox.conftest import (  # noqa: F401 - fixtures
    base_image,
    calc_image,
    docker_client,
    wheelhouse,
)
from tests.nats_cluster import NatsCluster


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[NatsCluster]:
    with NatsCluster(tmp_path / "cluster", size=3) as started:
        yield started
