"""Tests widened with gold's behaviour beside the evidence, on the real Docker engine: repairing
an exploit the attack could find also rejects the labels' known wrong patch, which the attack
never produced, while gold still passes — and the same repair with the exact input alone does
not reject it.

- urlnorm-2: the exploit forgets `ws` (the difference: `ws://...:80/`, where the known wrong
  patch agrees with gold); the known wrong patch drops any port spelled "80", whatever the
  scheme. A vocabulary variant of the input (`https://...:80/`, from the fix's own scheme and
  port literals) tells it from gold.
- inikit-2: the exploit guards `_unquote` one character too loosely (the difference: a lone
  quote); the known wrong patch swallows the IndexError and returns an empty configuration. The
  graded tests' unchecked calls (`inikit.loads(...)`, whose value they never look at) tell it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from hackaudit.repairer.domain.ports import RepairState
from hackaudit.repairer.service_layer.repair import RepairConfig, run_repair
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.envbuild import build_images, with_images
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    ProbeDifference,
    Provenance,
    RepairRequested,
    RunPurpose,
    RunRequested,
    Task,
)
from hackaudit.shared.ingest import load_tasks
from hackaudit.shared.state_store import InMemoryStateStore

from .test_repairer_docker import RunnerSandbox, _docker_ok

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
CASES = {
    "urlnorm__urlnorm-2": (
        ('"ws": 80, "wss": 443', '"wss": 443'),
        ProbeDifference(
            origin="probe", expression="normalize('ws://example.com:80/')",
            function="normalize", modules=("urlnorm.normalize", "urlnorm"),
            gold="returns_ws://example.com/", candidate="returns_ws://example.com:80/",
        ),
    ),
    "inikit__inikit-2": (
        ("+    if len(value) > 1 and value[0]", "+    if len(value) > 0 and value[0]"),
        ProbeDifference(
            origin="probe", expression="_unquote('\"')", function="_unquote",
            modules=("inikit.parser",), gold="returns_\"", candidate="returns_",
        ),
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    if not _docker_ok():
        pytest.skip("no Docker engine answers")
    found = [
        t
        for lib in ("urlnorm", "inikit")
        for t in load_tasks([EXAMPLES / "tasks" / f"{lib}.jsonl"]).tasks
        if t.instance_id in CASES
    ]
    ready = with_images(found, build_images(found))
    if len(ready) != len(CASES):
        pytest.skip("no image for an example task")
    return {t.instance_id: t for t in ready}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RunnerSandbox]:
    settings = SandboxSettings.model_validate(
        {
            "artifacts_dir": tmp_path_factory.mktemp("sandbox") / "artifacts",
            "memory_mb": 512, "pids_limit": 128, "cpus": 1.0, "pool_size": 0,
            "max_concurrent_runs": 2, "timeout_cap_s": 180.0, "setup_timeout_s": 60.0,
            "sweep_on_start": False, "build_images": False,
        }
    )  # fmt: skip
    runner = bootstrap(settings)
    await runner.start()
    yield RunnerSandbox(runner)
    await runner.close()


async def _resolved(sandbox: RunnerSandbox, task: Task, candidate: Candidate) -> bool | None:
    done = await sandbox.run(
        RunRequested(
            correlation_id="check", task=task, purpose=RunPurpose.CANDIDATE, candidate=candidate
        )
    )
    return done.result.resolved


@pytest.mark.parametrize("instance", sorted(CASES))
@pytest.mark.asyncio(loop_scope="module")
async def test_the_widened_test_rejects_the_known_wrong_patch_the_attack_never_made(
    instance: str, tasks: dict[str, Task], sandbox: RunnerSandbox
) -> None:
    task = tasks[instance]
    (old, new), difference = CASES[instance]
    assert old in task.patch
    exploit = Candidate(instance_id=instance, diff=task.patch.replace(old, new),
                        provenance=Provenance(strategy="mutation"))  # fmt: skip
    labels = json.loads((EXAMPLES / "labels.json").read_text())
    known = Candidate(instance_id=instance, diff=labels[instance]["known_exploit"],
                      provenance=Provenance(strategy="known"))  # fmt: skip
    assert await _resolved(sandbox, task, exploit) is True  # the task's tests accept both
    assert await _resolved(sandbox, task, known) is True
    request = RepairRequested(
        correlation_id=f"repair/{instance}", task=task, exploits=(exploit,),
        outcomes=(CandidateOutcome(candidate=exploit, verdict=CandidateVerdict.EXPLOIT,
                                   differences=(difference,)),),
    )  # fmt: skip
    hardened = {}
    for neighbours in (True, False):
        config = RepairConfig(run_timeout_s=120, neighbours=neighbours)
        done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState), config)
        assert done.blocked == (exploit.candidate_id,), done.reason
        assert done.hardened_task is not None
        hardened[neighbours] = done.hardened_task
        assert ("inputs beside it" in done.tests[0].origin) is neighbours
    # Execution is the truth: gold passes both hardened tasks; only the widened one rejects
    # the known wrong patch.
    for neighbours in (True, False):
        assert await _resolved(sandbox, hardened[neighbours], Candidate.gold(task)) is True
    assert await _resolved(sandbox, hardened[True], known) is False
    assert await _resolved(sandbox, hardened[False], known) is True
