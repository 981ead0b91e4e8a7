"""The sandbox builds a task's image before running it: once per image, off the event loop, and a
failed build is an infrastructure error of each run that names the task and the reason."""

from __future__ import annotations

import asyncio
from typing import Any

from hackaudit.sandbox.adapters.artifact_store import MemoryArtifactStore
from hackaudit.sandbox.adapters.fake_backend import FakeBackend
from hackaudit.sandbox.adapters.fake_images import FakeImageSource
from hackaudit.sandbox.adapters.timing_store import MemoryTimingStore
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.sandbox.task_images import NoImage, TaskImages, build_key
from hackaudit.shared.contracts import RunPurpose, RunRequested, RunStatus, Task
from tests.unit.sandbox.test_sandbox_runner import PASSING, TASK

MINED = Task.model_validate(
    TASK.model_dump(by_alias=True)
    | {"image": None, "environment": {"source": "/src/m", "pip_packages": ["pytest"]}}
)


def runner_with(source: FakeImageSource, **settings: Any) -> tuple[Runner, FakeBackend]:
    backend = FakeBackend(respond=lambda run: PASSING)
    runner = bootstrap(
        SandboxSettings(**settings),
        backend=backend,
        artifacts=MemoryArtifactStore(),
        timings=MemoryTimingStore(),
        images=source,
    )
    return runner, backend


def request(purpose: RunPurpose, task: Task = MINED, **extra: Any) -> RunRequested:
    return RunRequested(
        correlation_id="audit-1", task=task, purpose=purpose, requested_by="scorer", **extra
    )


async def test_a_task_with_an_environment_runs_in_its_built_image() -> None:
    source = FakeImageSource()
    runner, backend = runner_with(source)
    done = await runner.complete(request(RunPurpose.GOLD))

    assert done.result.status is RunStatus.COMPLETED, done.result.reason
    assert done.result.resolved is True
    assert backend.runs[0].plan.image == "hackaudit-env/fake:abc123"
    assert source.calls == [MINED.instance_id]


async def test_concurrent_runs_of_one_task_wait_for_a_single_build() -> None:
    source = FakeImageSource(build_s=0.2)
    runner, backend = runner_with(source)
    orders = [
        request(RunPurpose.GOLD, repeats=3),
        request(RunPurpose.EMPTY),
        request(RunPurpose.REFERENCE),
    ]
    done = await asyncio.gather(*(runner.complete(o) for o in orders))
    later = await runner.complete(request(RunPurpose.GOLD, attempt=1))

    assert source.calls == [MINED.instance_id]  # one build for five runs, none for the later one
    assert all(r.status is RunStatus.COMPLETED for d in [*done, later] for r in d.results)
    assert {run.plan.image for run in backend.runs} == {"hackaudit-env/fake:abc123"}


async def test_the_event_loop_keeps_running_during_a_build() -> None:
    """In-progress acks are sent by the loop while a handler waits: a build must not block it."""
    source = FakeImageSource(build_s=0.5)
    runner, _ = runner_with(source)
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    beating = asyncio.create_task(heartbeat())
    try:
        await runner.complete(request(RunPurpose.GOLD))
    finally:
        beating.cancel()
    assert ticks >= 5


async def test_a_failed_build_is_an_infrastructure_error_of_every_run_naming_the_task() -> None:
    source = FakeImageSource(fail_with="pip download nosuchpkg failed: no matching distribution")
    runner, backend = runner_with(source)
    done = await runner.complete(request(RunPurpose.GOLD, repeats=3))
    again = await runner.complete(request(RunPurpose.EMPTY))

    assert [r.status for r in done.results] == [RunStatus.INFRA_ERROR] * 3
    assert all(r.resolved is None for r in done.results)
    assert f"no image for task {MINED.instance_id}" in done.result.reason
    assert "no matching distribution" in done.result.reason
    assert again.result.status is RunStatus.INFRA_ERROR
    assert source.calls == [MINED.instance_id]  # remembered: not rebuilt for the next request
    assert backend.runs == []


async def test_a_failed_build_is_tried_again_after_the_retry_delay() -> None:
    now = [0.0]
    source = FakeImageSource(fail_with="engine down")
    images = TaskImages(lambda: source, retry_after_s=60.0, clock=lambda: now[0])

    first = await images.ready(MINED)
    now[0] = 30.0
    cached = await images.ready(MINED)
    source.fail_with = None
    now[0] = 61.0
    retried = await images.ready(MINED)

    assert isinstance(first, NoImage) and isinstance(cached, NoImage)
    assert isinstance(retried, Task) and retried.image == "hackaudit-env/fake:abc123"
    assert len(source.calls) == 2


async def test_a_task_with_only_an_image_is_not_built() -> None:
    source = FakeImageSource()
    runner, backend = runner_with(source)
    await runner.complete(request(RunPurpose.GOLD, task=TASK))

    assert source.calls == []
    assert backend.runs[0].plan.image == TASK.image


def test_tasks_share_an_image_exactly_when_their_build_inputs_match() -> None:
    other_task = MINED.model_copy(update={"instance_id": "m__m-2", "patch": "x"})
    other_commit = MINED.model_copy(update={"base_commit": "def456"})

    assert build_key(other_task) == build_key(MINED)
    assert build_key(other_commit) != build_key(MINED)
    assert build_key(MINED.model_copy(update={"image": "hackaudit-env/m:1"})) == build_key(MINED)


async def test_building_can_be_turned_off() -> None:
    backend = FakeBackend(respond=lambda run: PASSING)
    runner = bootstrap(
        SandboxSettings(build_images=False),
        backend=backend,
        artifacts=MemoryArtifactStore(),
        timings=MemoryTimingStore(),
    )
    done = await runner.complete(request(RunPurpose.GOLD))

    assert done.result.status is RunStatus.INFRA_ERROR
    assert "names no image" in done.result.reason
