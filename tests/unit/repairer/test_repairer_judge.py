"""The judge's blocking verdict beside execution: every proposed test is asked about when the
request says a judge runs, the verdict is kept on the test whatever the gates said, a judge with
no backend is asked once, a resumed repair asks nothing again; and the figures that compare the
judge with the gold gate and the blocking check."""

from __future__ import annotations

from hackaudit.cli.repair_figures import judge_figures
from hackaudit.repairer.adapters.fake_judge import ScriptedJudge
from hackaudit.repairer.domain.ports import RepairState
from hackaudit.repairer.service_layer.repair import run_repair
from hackaudit.shared.contracts import (
    GateReason,
    JudgeLabel,
    JudgeQuestion,
    JudgeRequested,
    JudgeVerdict,
    ProposedTest,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox

from .test_repairer_loop import _request, world

BLOCKS, NOT = JudgeLabel.BLOCKS, JudgeLabel.DOES_NOT_BLOCK


def _says_blocks(request: JudgeRequested) -> list[JudgeLabel]:
    return [BLOCKS, BLOCKS, NOT]


async def test_every_proposed_test_gets_the_judges_verdict_beside_execution() -> None:
    judge = ScriptedJudge(_says_blocks)
    request = _request({"e1": ["fails_on_gold(1)", "good(2)"]}, judge=True)
    sandbox = ScriptedSandbox([world({"e1": {"good"}})])
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState), judge=judge)
    rejected, kept = done.tests
    assert rejected.rejection is GateReason.FAILS_ON_GOLD and kept.accepted
    for test in done.tests:
        assert test.judge is not None and test.judge.label is BLOCKS
        assert test.judge.samples == (BLOCKS, BLOCKS, NOT)
    asked = judge.requests
    assert [r.question for r in asked] == [JudgeQuestion.BLOCKING] * 2
    assert all(r.samples == 3 and r.requested_by == "repairer" for r in asked)
    assert [r.candidates[0].candidate_id for r in asked] == [request.exploits[0].candidate_id] * 2
    # The judge sees each proposed test inside the whole augmented test patch.
    assert asked[0].test_patch is not None and "fails_on_gold(1)" in asked[0].test_patch
    assert asked[1].test_patch is not None and "good(2)" in asked[1].test_patch
    assert done.judge_left_out == ""
    figures = judge_figures(done.tests)
    assert figures is not None
    assert (figures.gold_gate_let_through, figures.gold_gate_judged) == (1, 1)
    assert (figures.checked_agree, figures.checked_judged) == (1, 1)


async def test_a_judge_without_backend_is_asked_once_and_says_why() -> None:
    judge = ScriptedJudge(_says_blocks, left_out="no judge backend configured")
    request = _request({"e1": ["fails_on_gold(1)", "good(2)"]}, judge=True)
    sandbox = ScriptedSandbox([world({"e1": {"good"}})])
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState), judge=judge)
    assert len(judge.requests) == 1 and all(t.judge is None for t in done.tests)
    assert done.judge_left_out == "no judge backend configured"
    assert judge_figures(done.tests) is None


async def test_no_judge_in_the_audit_means_the_judge_is_not_asked() -> None:
    judge = ScriptedJudge(_says_blocks)
    request = _request({"e1": ["good(2)"]})
    sandbox = ScriptedSandbox([world({"e1": {"good"}})])
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState), judge=judge)
    assert judge.requests == [] and done.tests[0].judge is None and done.judge_left_out == ""


async def test_a_judge_that_never_answers_leaves_the_verdict_out() -> None:
    judge = ScriptedJudge(lambda request: None)
    request = _request({"e1": ["fails_on_gold(1)", "good(2)"]}, judge=True)
    sandbox = ScriptedSandbox([world({"e1": {"good"}})])
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState), judge=judge)
    assert len(judge.requests) == 1 and done.blocked  # execution still decides
    assert done.judge_left_out == "the judge gave no answer in time"


async def test_a_resumed_repair_takes_the_judges_answers_from_its_journal() -> None:
    store = InMemoryStateStore(RepairState)
    request = _request({"e1": ["fails_on_gold(1)", "good(2)"]}, judge=True)
    first = ScriptedJudge(_says_blocks)
    done = await run_repair(
        request, ScriptedSandbox([world({"e1": {"good"}})]), None, store, judge=first
    )
    state = store.load(next(iter(store._states)))  # type: ignore[attr-defined]
    assert state is not None
    store.save(state.model_copy(update={"done": None}))  # as if it crashed before the end
    second = ScriptedJudge(_says_blocks)
    again = await run_repair(
        request, ScriptedSandbox([world({"e1": {"good"}})]), None, store, judge=second
    )
    assert second.requests == [] and again.tests == done.tests


def _test(name: str, rejection: GateReason | None, label: JudgeLabel | None) -> ProposedTest:
    verdict = JudgeVerdict(candidate_id="e", samples=(label,) * 3, label=label) if label else None
    return ProposedTest(name=name, file="t.py", exploit="e", augmenter="offline",
                        accepted=rejection is None, rejection=rejection, judge=verdict)  # fmt: skip


def test_judge_figures_count_what_a_judge_alone_would_have_let_through() -> None:
    tests = [
        _test("a", GateReason.FAILS_ON_GOLD, BLOCKS),  # the judge would have kept it
        _test("b", GateReason.FLAKY, NOT),
        _test("c", GateReason.IMPORT_ERROR, BLOCKS),
        _test("d", None, BLOCKS),  # agrees with execution
        _test("e", GateReason.DOES_NOT_BLOCK, BLOCKS),  # disagrees
        _test("f", GateReason.REJECTS_CORRECT, NOT),  # agrees: not kept
        _test("g", None, JudgeLabel.ABSTAIN),
        _test("h", None, None),
    ]
    figures = judge_figures(tests)
    assert figures is not None
    assert (figures.gold_gate_let_through, figures.gold_gate_judged) == (2, 3)
    assert (figures.checked_agree, figures.checked_judged) == (2, 3)
    assert figures.judged == 7 and figures.abstained == 1
    assert "let through 2/3" in figures.lines()[0]
