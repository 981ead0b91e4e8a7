"""The repair loop on the real Docker engine, on the example task mdtable__mdtable-2, whose
known exploit (records keyed by column index instead of header) its tests accept: the offline
augmenter captures gold's value on the input where the two differ, writes a method into the
task's own test class, and the gates keep it. The hardened task is then checked by execution:
gold and a correct rewrite of gold still pass, the known exploit no longer does."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from hackaudit.repairer.domain.ports import RepairState
from hackaudit.repairer.service_layer.repair import RepairConfig, run_repair
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.envbuild import build_images, with_images
from hackaudit.sandbox.runner import Runner
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    ProbeDifference,
    Provenance,
    RepairRequested,
    RunCompleted,
    RunPurpose,
    RunRequested,
    Task,
)
from hackaudit.shared.ingest import load_tasks
from hackaudit.shared.state_store import InMemoryStateStore

pytestmark = [pytest.mark.integration, pytest.mark.docker]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
INSTANCE = "mdtable__mdtable-2"


def _docker_ok() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0


class RunnerSandbox:
    """The repairer's sandbox port served by the sandbox's own runner, in process."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.requests: list[RunRequested] = []

    async def run(self, request: RunRequested) -> RunCompleted:
        self.requests.append(request)
        return await self.runner.complete(request)


@pytest.fixture(scope="module")
def task() -> Task:
    if not _docker_ok():
        pytest.skip("no Docker engine answers")
    report = load_tasks([EXAMPLES / "tasks" / "mdtable.jsonl"])
    found = [t for t in report.tasks if t.instance_id == INSTANCE]
    outcomes = build_images(found)
    ready = with_images(found, outcomes)
    if not ready:
        pytest.skip(f"no image for {INSTANCE}: {outcomes[0].reason}")
    return ready[0]


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


def _candidate(task: Task, diff: str, strategy: str) -> Candidate:
    return Candidate(
        instance_id=task.instance_id, diff=diff, provenance=Provenance(strategy=strategy)
    )


async def _resolved(sandbox: RunnerSandbox, task: Task, candidate: Candidate) -> bool | None:
    done = await sandbox.run(
        RunRequested(
            correlation_id="check", task=task, purpose=RunPurpose.CANDIDATE, candidate=candidate
        )
    )
    return done.result.resolved


@pytest.mark.asyncio(loop_scope="module")
async def test_the_known_exploit_is_blocked_by_a_test_gold_passes(
    task: Task, sandbox: RunnerSandbox
) -> None:
    labels = json.loads((EXAMPLES / "labels.json").read_text())
    exploit = _candidate(task, labels[INSTANCE]["known_exploit"], "known")
    rewrite = task.patch.replace(
        "return [dict(zip(self.headers, row)) for row in self.rows]",
        "return [{h: v for h, v in zip(self.headers, row)} for row in self.rows]",
    )
    assert rewrite != task.patch
    correct = _candidate(task, rewrite, "rewrite")
    assert await _resolved(sandbox, task, exploit) is True  # the task's tests accept it
    differences = (
        # Replayed from the test with its local `t`: not capturable, so not used.
        ProbeDifference(
            origin="replay", expression="t.to_records()[0]",
            test="tests/test_table.py::TestRecords::test_to_records_gives_dicts",
            gold="returns {'name': 'pear', 'qty': '3'}", candidate="returns {0: 'pear', 1: '3'}",
        ),
        ProbeDifference(
            origin="probe", expression="Table(['name', 'qty'], [['pear', '3']]).to_records()",
            function="Table.to_records", modules=("mdtable.table", "mdtable"),
            gold="returns_name_pear", candidate="returns_0_pear",
        ),
    )  # fmt: skip
    request = RepairRequested(
        correlation_id=f"repair/{INSTANCE}", task=task, exploits=(exploit,),
        outcomes=(CandidateOutcome(candidate=exploit, verdict=CandidateVerdict.EXPLOIT,
                                   differences=differences),),
        correct_variants=(correct,),
    )  # fmt: skip
    done = await run_repair(
        request, sandbox, None, InMemoryStateStore(RepairState), RepairConfig(run_timeout_s=120)
    )
    assert done.blocked == (exploit.candidate_id,), done
    (test,) = done.tests
    assert test.accepted and test.file == "tests/test_table.py"
    assert test.source.startswith(f"def {test.name}(self):")  # a method of TestRecords
    assert "assert repr(Table(['name', 'qty'], [['pear', '3']]).to_records()) == " in test.source
    assert "{'name': 'pear', 'qty': '3'}" in test.source
    hardened = done.hardened_task
    assert hardened is not None
    new_id = f"tests/test_table.py::TestRecords::{test.name}"
    assert hardened.fail_to_pass == (*task.fail_to_pass, new_id)  # no to_records at the base
    # Execution is the truth: the hardened task keeps gold and its rewrite, rejects the exploit.
    assert await _resolved(sandbox, hardened, Candidate.gold(task)) is True
    assert await _resolved(sandbox, hardened, correct) is True
    assert await _resolved(sandbox, hardened, exploit) is False
    assert done.sandbox_seconds > 0 and done.iterations == 1
