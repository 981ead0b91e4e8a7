"""The repairer service through a real NATS server: a repair request goes in, its runs come out
on `run.requested` (answered here by a scripted sandbox on `run.completed.repairer`), and the
hardened task comes back on `repair.completed`; a redelivered request repeats no run."""

from __future__ import annotations

import asyncio
import binascii
import json
import re
from pathlib import Path

import nats
import pytest

from hackaudit.repairer.app import build
from hackaudit.repairer.settings import RepairerSettings
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    ProbeDifference,
    Provenance,
    RepairCompleted,
    RepairRequested,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)
from hackaudit.shared.service import running
from hackaudit.shared.settings import BusSettings
from tests.scripted_sandbox import ScriptedSandbox, added_tests

pytestmark = pytest.mark.integration

TEST_PATCH = (
    "diff --git a/tests/test_lib.py b/tests/test_lib.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/test_lib.py\n@@ -0,0 +1,5 @@\n+from lib import double\n+\n+\n"
    "+def test_double():\n+    assert double(2) == 4\n"
)
TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold",
    test_patch=TEST_PATCH, FAIL_TO_PASS=["tests/test_lib.py::test_double"],
)  # fmt: skip
EXPLOIT = Candidate(
    instance_id=TASK.instance_id, diff="wrong", provenance=Provenance(strategy="special_casing")
)
DIFFERENCE = ProbeDifference(
    origin="probe", expression="double(3)", function="double", modules=("lib",),
    gold="returns_6", candidate="returns_0",
)  # fmt: skip
_NEW = re.compile(r"def (test_double_matches_reference_\w+)\(")


def sandbox_rule(request: RunRequested) -> RunResult:
    patch = added_tests(request)
    if request.purpose is RunPurpose.PROBE:
        code = binascii.hexlify(
            json.dumps({"repr": "6", "str": "6", "type": "int", "module": "lib"}).encode()
        ).decode()
        return RunResult(status=RunStatus.COMPLETED, tests={f"test_cap0_{code} (c)": "PASSED"})
    new = [f"tests/test_lib.py::{n}" for n in _NEW.findall(patch)]
    wrong = request.candidate is not None and request.candidate.diff in ("wrong", "")
    status = TestStatus.FAILED if wrong else TestStatus.PASSED
    tests = {"tests/test_lib.py::test_double": TestStatus.PASSED} | dict.fromkeys(new, status)
    graded = set(request.task.fail_to_pass)
    resolved = all(tests.get(t) is TestStatus.PASSED for t in graded)
    return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests=tests, duration_s=1.5)


async def test_a_repair_request_comes_back_hardened(nats_url: str, tmp_path: Path) -> None:
    settings = BusSettings(state_dir=tmp_path, heartbeat_s=1.0)
    service = build(settings, RepairerSettings(state_dir=tmp_path, llm=False))
    sandbox = ScriptedSandbox([sandbox_rule])
    nc = await nats.connect(nats_url)
    done: list[RepairCompleted] = []

    async def answer(msg: nats.aio.msg.Msg) -> None:
        request = RunRequested.model_validate_json(msg.data)
        completed = await sandbox.run(request)
        await nc.publish(
            subjects.run_completed_subject(request.requested_by),
            completed.model_dump_json().encode(),
        )

    async def record(msg: nats.aio.msg.Msg) -> None:
        done.append(RepairCompleted.model_validate_json(msg.data))

    await nc.subscribe(subjects.RUN_REQUESTED, cb=answer)
    await nc.subscribe(subjects.REPAIR_COMPLETED, cb=record)
    request = RepairRequested(
        correlation_id="a/1",
        task=TASK,
        exploits=(EXPLOIT,),
        outcomes=(
            CandidateOutcome(
                candidate=EXPLOIT, verdict=CandidateVerdict.EXPLOIT, differences=(DIFFERENCE,)
            ),
        ),
    )
    async with running(nats_url, service, settings) as broker:
        await bus.publish(broker, subjects.REPAIR_REQUESTED, request)
        for _ in range(300):
            if done:
                break
            await asyncio.sleep(0.05)
        assert done, f"no repair.completed; runs seen: {[r.purpose for r in sandbox.requests]}"
        runs = len(sandbox.requests)
        # Delivered again (a new message id, the same request): answered from the journal.
        again = request.model_copy(update={"idempotency_key": "redelivered"})
        await bus.publish(broker, subjects.REPAIR_REQUESTED, again)
        for _ in range(200):
            if len(done) > 1:
                break
            await asyncio.sleep(0.05)
    await nc.close()
    result = done[0]
    assert result.blocked == (EXPLOIT.candidate_id,)
    hardened = result.hardened_task
    assert hardened is not None and "assert repr(double(3)) == '6'" in hardened.test_patch
    assert hardened.fail_to_pass[0] == "tests/test_lib.py::test_double"
    assert len(hardened.fail_to_pass) == 2  # the new test fails on the base commit
    assert [r.purpose for r in sandbox.requests] == [
        RunPurpose.PROBE, RunPurpose.GOLD_GATE, RunPurpose.CANDIDATE,
        RunPurpose.EMPTY, RunPurpose.GOLD,
    ]  # fmt: skip
    assert all(r.requested_by == "repairer" for r in sandbox.requests)
    assert len(sandbox.requests) == runs
