"""The classification step: runs each pending task's test files without a fix and with gold
(`gold_runs` times) in hackaudit's own sandbox, and fills FAIL_TO_PASS / PASS_TO_PASS in.

Images and runs sit behind two small ports so the step runs on fakes in unit tests and on the
environment builder and the Docker sandbox (`BuilderImages`, `SandboxRuns`) for real.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hackaudit.shared.contracts import Candidate, RunPurpose, RunResult, RunStatus, Task
from realcorpus.classify import MIN_GOLD_RUNS, classify
from realcorpus.reserved import ensure_not_reserved

# The sandbox grades against FAIL_TO_PASS, which a pending row does not have yet; the runs here
# only read the per-test statuses, so a name no test carries stands in for it.
PLACEHOLDER_TEST = "hackaudit::classification-pending"


class ImageSource(Protocol):
    def images(self, tasks: Sequence[Task]) -> dict[str, str]:
        """Per task id, its image tag, or the reason it has none (prefixed `error: `)."""
        ...


class TaskRuns(Protocol):
    async def run(self, task: Task, *, gold: bool) -> RunResult: ...


@dataclass
class Classified:
    instance_id: str
    row: dict[str, Any] | None
    report: dict[str, Any] = field(default_factory=dict)


def task_for_runs(row: dict[str, Any]) -> Task:
    """The row as a runnable task: placeholder lists, environment from the SWE-bench spec table."""
    ensure_not_reserved(str(row["instance_id"]))
    task = Task.model_validate({**row, "FAIL_TO_PASS": [PLACEHOLDER_TEST], "PASS_TO_PASS": []})
    return _with_spec(task)


def _statuses(result: RunResult) -> dict[str, str]:
    return {name: status.value for name, status in result.tests.items()}


async def classify_row(
    row: dict[str, Any], task: Task, runs: TaskRuns, gold_runs: int
) -> Classified:
    instance_id = task.instance_id
    before = await runs.run(task, gold=False)
    gold = [await runs.run(task, gold=True) for _ in range(gold_runs)]
    bad = [r for r in [before, *gold] if r.status is not RunStatus.COMPLETED]
    if bad:
        why = f"{bad[0].status.value}: {bad[0].reason[:300]}"
        return Classified(instance_id, None, {"problems": [f"a run did not complete ({why})"]})
    result = classify(_statuses(before), [_statuses(r) for r in gold], min_runs=gold_runs)
    report: dict[str, Any] = {
        "fail_to_pass": len(result.fail_to_pass),
        "pass_to_pass": len(result.pass_to_pass),
        "unstable": result.unstable,
        "broken_by_gold": result.broken_by_gold,
        "problems": result.problems,
        "gold_durations_s": [r.duration_s for r in gold],
    }
    if not result.usable:
        return Classified(instance_id, None, report)
    done = {**row, "FAIL_TO_PASS": result.fail_to_pass, "PASS_TO_PASS": result.pass_to_pass}
    return Classified(instance_id, done, report)


async def classify_rows(
    rows: Sequence[dict[str, Any]],
    images: ImageSource,
    runs: TaskRuns,
    *,
    gold_runs: int = MIN_GOLD_RUNS,
) -> list[Classified]:
    """One outcome per row, in order; a task whose image or runs fail is reported, not raised."""
    tasks = [task_for_runs(row) for row in rows]
    found = images.images(tasks)
    out: list[Classified] = []
    for row, task in zip(rows, tasks, strict=True):
        image = found.get(task.instance_id, "error: the image source gave no answer")
        if image.startswith("error: "):
            out.append(Classified(task.instance_id, None, {"problems": [f"no image: {image[7:]}"]}))
            continue
        ready = task.model_copy(update={"image": image})
        out.append(await classify_row(row, ready, runs, gold_runs))
    return out


class BuilderImages:
    """Images from hackaudit's environment builder, the repository taken from `repos`."""

    def __init__(self, repos: Path) -> None:
        self.repos = repos

    def images(self, tasks: Sequence[Task]) -> dict[str, str]:
        from hackaudit.sandbox.envbuild import build_images
        from hackaudit.sandbox.envbuild.api import default_builder
        from hackaudit.sandbox.envbuild.settings import EnvBuildSettings

        builder = default_builder(EnvBuildSettings(repos=self.repos))
        return {
            o.instance_id: o.image if o.image else f"error: {o.reason}"
            for o in build_images(tasks, builder=builder)
        }


def _with_spec(task: Task) -> Task:
    """The task with the environment and test command of its (repository, version), if known."""
    try:
        from hackaudit.shared.swebench_specs.apply import with_spec
    except ImportError:  # a hackaudit without the spec table: the builder says what is missing
        return task
    return with_spec(task)


class SandboxRuns:
    """Runs in the Docker sandbox, in-process (the runner `hackaudit sandbox` serves with)."""

    def __init__(self) -> None:
        from hackaudit.sandbox.bootstrap import bootstrap

        self.runner = bootstrap()

    async def __aenter__(self) -> SandboxRuns:
        await self.runner.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.runner.close()

    async def run(self, task: Task, *, gold: bool) -> RunResult:
        candidate = Candidate.gold(task) if gold else Candidate.empty(task)
        purpose = RunPurpose.GOLD if gold else RunPurpose.EMPTY
        return await self.runner.run_once(task, candidate, purpose=purpose)
