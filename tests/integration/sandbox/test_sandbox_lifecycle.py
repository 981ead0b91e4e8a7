"""Containers never outlive their runner; leftovers of dead sandbox processes are swept; the
benchmark runs end to end."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import docker
import pytest
from sandbox_calc import TaskImage, calc_task, sandbox_settings

from hackaudit.sandbox.adapters.docker_backend import LABEL, OWNER_LABEL
from hackaudit.sandbox.bench import benchmark
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.shared.contracts import Candidate

pytestmark = [pytest.mark.integration, pytest.mark.docker]


async def test_leftovers_are_swept_and_no_container_outlives_the_runner(
    docker_client: Any, calc_image: TaskImage, tmp_path: Path
) -> None:
    leftover = docker_client.containers.create(
        calc_image.tag,
        entrypoint=["sleep"],
        command=["infinity"],
        network_mode="none",
        labels={LABEL: "1", OWNER_LABEL: f"{socket.gethostname()}/999999999/dead"},
    )
    runner = bootstrap(sandbox_settings(tmp_path, sweep_on_start=True, pool_size=2))
    await runner.start()
    with pytest.raises(docker.errors.NotFound):
        docker_client.containers.get(leftover.id)

    task = calc_task(calc_image)
    result = await runner.run_once(task, Candidate.gold(task), timeout_s=60)
    owner = runner.backend._owner  # type: ignore[attr-defined]
    alive = docker_client.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner}"})
    await runner.close()
    after = docker_client.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner}"})

    assert result.resolved is True
    assert alive  # the pool kept started containers ready...
    assert after == []  # ...and none survived the runner


@pytest.mark.slow
def test_benchmark_reports_every_mode(calc_image: TaskImage, tmp_path: Path) -> None:
    task = calc_task(calc_image)
    settings = sandbox_settings(tmp_path)
    figures = benchmark(calc_image.tag, task, runs=2, workers=2, settings=settings)

    assert figures["bare"]["median_s"] > 0
    assert set(figures["sandbox"]) == {"warm", "container"}
    cells = [*figures["sandbox"].values(), figures["naive"]]
    assert all(set(c) == {"1", "2"} for c in cells)
    assert all(c[w]["all_resolved"] for c in cells for w in ("1", "2"))
    for mode, by_workers in figures["sandbox"].items():
        assert figures["overhead_median_s"][mode] == pytest.approx(
            by_workers["1"]["median_s"] - figures["bare"]["median_s"], abs=1e-3
        )
        assert figures["scaling"][mode] == pytest.approx(
            by_workers["2"]["runs_per_min"] / by_workers["1"]["runs_per_min"], abs=0.01
        )
    warm = figures["sandbox"]["warm"]["2"]["containers"]
    assert warm["reused"] > 0  # the warm mode's runs reused containers
