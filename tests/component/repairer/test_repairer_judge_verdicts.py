"""The judge's blocking verdict on every proposed test, from the real judge (its prompts, the
real Anthropic SDK, three samples, the vote) against the local fake Messages API: in process
through `run_repair`, and through a real NATS server with the repairer and judge services
running, where the verdicts come back on `repair.completed` beside the gates' results."""

from __future__ import annotations

import asyncio
import binascii
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

from hackaudit.cli.repair_figures import judge_figures
from hackaudit.judge.app import build as build_judge
from hackaudit.judge.bootstrap import bootstrap as bootstrap_judge
from hackaudit.judge.service_layer.judging import Judge
from hackaudit.judge.settings import JudgeSettings
from hackaudit.repairer.app import build as build_repairer
from hackaudit.repairer.domain.ports import RepairState
from hackaudit.repairer.service_layer.repair import run_repair
from hackaudit.repairer.settings import RepairerSettings
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    GateReason,
    JudgeCompleted,
    JudgeLabel,
    JudgeRequested,
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
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox, added_tests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judge"))

from fake_judge_api import Answer, FakeJudgeApi, Step, serve

TEST_PATCH = (
    "diff --git a/tests/test_lib.py b/tests/test_lib.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/test_lib.py\n@@ -0,0 +1,5 @@\n+from lib import double\n+\n+\n"
    "+def test_double():\n+    assert double(2) == 4\n"
)
TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold",
    test_patch=TEST_PATCH, FAIL_TO_PASS=["tests/test_lib.py::test_double"],
    problem_statement="double(x) must return 2 * x",
)  # fmt: skip
EXPLOIT = Candidate(
    instance_id=TASK.instance_id, diff="wrong", provenance=Provenance(strategy="special_casing")
)
# `drift(3)` is an input whose test fails on gold (the gold gate rejects it); `double(3)` blocks.
DIFFERENCES = tuple(
    ProbeDifference(
        origin="probe",
        expression=e,
        function=e.split("(")[0],
        modules=("lib",),
        gold="returns_6",
        candidate="returns_0",
    )
    for e in ("drift(3)", "double(3)")
)
_NEW = re.compile(r"def (test_\w+_matches_reference_\w+)\(")


def _request(**fields: Any) -> RepairRequested:
    outcome = CandidateOutcome(
        candidate=EXPLOIT, verdict=CandidateVerdict.EXPLOIT, differences=DIFFERENCES
    )
    return RepairRequested(correlation_id="a/1", task=TASK, exploits=(EXPLOIT,),
                           outcomes=(outcome,), judge=True, **fields)  # fmt: skip


def sandbox_rule(request: RunRequested) -> RunResult:
    patch = added_tests(request)
    if request.purpose is RunPurpose.PROBE:
        names = {}
        for i in range(len(DIFFERENCES)):
            outcome = {"repr": "6", "str": "6", "type": "int", "module": "lib"}
            code = binascii.hexlify(json.dumps(outcome).encode()).decode()
            names[f"test_cap{i}_{code} (c)"] = TestStatus.PASSED
        return RunResult(status=RunStatus.COMPLETED, tests=names)
    wrong = request.candidate is not None and request.candidate.diff in ("wrong", "")
    tests = {"tests/test_lib.py::test_double": TestStatus.PASSED}
    for name in _NEW.findall(patch):
        fails = wrong or name.startswith("test_drift")
        tests[f"tests/test_lib.py::{name}"] = TestStatus.FAILED if fails else TestStatus.PASSED
    graded = set(request.task.fail_to_pass)
    resolved = all(tests.get(t) is TestStatus.PASSED for t in graded)
    return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests=tests, duration_s=1.0)


def respond(body: dict[str, Any]) -> Step:
    """Whatever the sample: "blocks" for the test of `drift`, "does not block" otherwise."""
    text = json.dumps(body.get("messages", []))
    return Answer("blocks" if "drift(3)" in text else "does_not_block")


@pytest.fixture
def judge_api() -> Iterator[tuple[str, FakeJudgeApi]]:
    with serve() as (url, api):
        api.respond = respond
        yield url, api


def _judge_settings(url: str, tmp_path: Path) -> JudgeSettings:
    return JudgeSettings.model_validate(
        {"provider": "anthropic", "anthropic_api_key": "test-key", "base_url": url,
         "max_retries": 0, "timeout_s": 10, "cache_dir": tmp_path / "judge-cache"}
    )  # fmt: skip


class InProcessJudge:
    """The repairer's judge port served by the judge's own use case, in process."""

    def __init__(self, judge: Judge) -> None:
        self.judge_ = judge

    async def judge(self, request: JudgeRequested) -> JudgeCompleted | None:
        return await self.judge_.handle(request)


def _check(done: RepairCompleted) -> None:
    rejected, kept = done.tests
    assert rejected.rejection is GateReason.FAILS_ON_GOLD and "drift(3)" in rejected.source
    assert kept.accepted and done.blocked == (EXPLOIT.candidate_id,)
    assert rejected.judge is not None and rejected.judge.label is JudgeLabel.BLOCKS
    assert kept.judge is not None and kept.judge.label is JudgeLabel.DOES_NOT_BLOCK
    assert len(rejected.judge.samples) == 3 and len(rejected.judge.details) == 3
    figures = judge_figures(done.tests)
    assert figures is not None
    # A judge alone would have let the gold gate's one rejection through; and it disagrees
    # with execution on the test that does block.
    assert (figures.gold_gate_let_through, figures.gold_gate_judged) == (1, 1)
    assert (figures.checked_agree, figures.checked_judged) == (0, 1)


async def test_the_real_judge_gives_each_proposed_test_a_three_sample_verdict(
    judge_api: tuple[str, FakeJudgeApi], tmp_path: Path
) -> None:
    url, api = judge_api
    judge = bootstrap_judge(_judge_settings(url, tmp_path), tmp_path)
    assert judge.model is not None
    try:
        done = await run_repair(
            _request(), ScriptedSandbox([sandbox_rule]), None, InMemoryStateStore(RepairState),
            judge=InProcessJudge(judge),
        )  # fmt: skip
    finally:
        await judge.model.close()
    _check(done)
    assert len(api.requests) == 6  # 3 samples for each of the 2 tests
    prompt = json.dumps(api.requests[0].body)
    assert "proposed_test_patch" in prompt and "Does the proposed test patch block" in prompt


@pytest.mark.integration
async def test_verdicts_come_back_over_the_bus_beside_the_gates(
    nats_url: str, judge_api: tuple[str, FakeJudgeApi], tmp_path: Path
) -> None:
    url, api = judge_api
    settings = BusSettings(state_dir=tmp_path, heartbeat_s=1.0)
    repairer = build_repairer(settings, RepairerSettings(state_dir=tmp_path, llm=False))
    judge = build_judge(settings, _judge_settings(url, tmp_path))
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
    async with (
        running(nats_url, judge, settings),
        running(nats_url, repairer, settings) as broker,
    ):
        # Another service's judgement on the same subject is not taken for the repairer's.
        await bus.publish(broker, subjects.JUDGE_COMPLETED, JudgeCompleted(
            correlation_id="a/1", instance_id=TASK.instance_id, request_key="other",
            requested_by="scorer",
        ))  # fmt: skip
        await bus.publish(broker, subjects.REPAIR_REQUESTED, _request())
        for _ in range(600):
            if done:
                break
            await asyncio.sleep(0.05)
    await nc.close()
    assert done, f"no repair.completed; runs seen: {[r.purpose for r in sandbox.requests]}"
    _check(done[0])
    assert len(api.requests) == 6
