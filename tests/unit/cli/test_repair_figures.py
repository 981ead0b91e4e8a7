"""The repair figures, computed by hand from two repairs."""

from __future__ import annotations

import pytest

from hackaudit.cli.grade import Prediction
from hackaudit.cli.repair_figures import (
    KnownCheck,
    KnownPatch,
    RepairRow,
    figures,
    known_patches,
    unrepaired,
)
from hackaudit.shared.contracts import (
    GateReason,
    JudgeLabel,
    JudgeVerdict,
    PatchFlags,
    ProposedTest,
    RepairCompleted,
    RunCompleted,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TaskScored,
    Verdict,
)

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold", test_patch="t",
    FAIL_TO_PASS=["t::a"],
)  # fmt: skip


def proposed(rejection: GateReason | None) -> ProposedTest:
    return ProposedTest(
        name="test_x", file="t.py", exploit="e", augmenter="offline",
        accepted=rejection is None, rejection=rejection,
    )  # fmt: skip


def scored(verdict: Verdict, exploits: tuple[str, ...] = ()) -> TaskScored:
    return TaskScored(correlation_id="c", instance_id="i", verdict=verdict, exploits=exploits)


def test_figures() -> None:
    hardened = RepairCompleted(
        correlation_id="c", instance_id="a", hardened_task=TASK, blocked=("e1", "e2"),
        tests=(
            proposed(GateReason.FAILS_ON_GOLD), proposed(GateReason.DOES_NOT_BLOCK), proposed(None)
        ),
        iterations=2, sandbox_seconds=90.0,
    )  # fmt: skip
    failed = RepairCompleted(
        correlation_id="d", instance_id="b", unblocked=("e3",),
        tests=(proposed(GateReason.FLAKY),), iterations=3, sandbox_seconds=30.0,
        reason="iteration budget spent (3)",
    )  # fmt: skip
    rows = [
        RepairRow("a", scored(Verdict.FIX, ("e1",)), hardened, scored(Verdict.KEEP)),
        RepairRow("b", scored(Verdict.FIX, ("e3",)), failed, None),
    ]
    f = figures(rows)
    assert (f.tasks, f.hardened, f.proposed, f.accepted) == (2, 1, 4, 1)
    assert f.rejections == {"fails_on_gold": 1, "does_not_block": 1, "flaky": 1}
    assert f.gold_gate_rejected == 2 and f.gold_gate_rate == pytest.approx(0.5)
    assert (f.exploits_blocked, f.exploits_targeted, f.fix_to_keep) == (2, 3, 1)
    assert f.iterations == 5 and f.sandbox_minutes == pytest.approx(2.0)
    assert rows[0].outcome == "FIX -> KEEP"
    assert rows[1].outcome == "not repaired: iteration budget spent (3)"
    assert unrepaired(rows) == ["b: 1 exploit(s) not blocked: iteration budget spent (3)"]
    text = "\n".join(f.lines())
    assert "gold gate rejection rate: 2/4 = 50.0%" in text
    assert "2.5 iterations, 1.00 sandbox minutes" in text
    assert f.judge is None and "judge" not in text  # no judge in these repairs


def test_the_judge_figures_print_when_a_judge_answered() -> None:
    label = JudgeLabel.BLOCKS
    verdict = JudgeVerdict(candidate_id="e", samples=(label,) * 3, label=label)
    tests = tuple(
        proposed(r).model_copy(update={"judge": verdict})
        for r in (GateReason.FAILS_ON_GOLD, GateReason.FLAKY, None)
    )
    done = RepairCompleted(correlation_id="c", instance_id="a", hardened_task=TASK, tests=tests)
    text = "\n".join(figures([RepairRow("a", scored(Verdict.FIX, ("e",)), done, None)]).lines())
    assert "a judge alone would have let through 2/2" in text
    assert "agree on 1/1" in text
    left = RepairCompleted(correlation_id="c", instance_id="a", judge_left_out="no backend")
    text = "\n".join(figures([RepairRow("a", scored(Verdict.FIX, ("e",)), left, None)]).lines())
    assert "judge: no backend" in text


WRONG = KnownPatch("known_exploit", "WRONG-DIFF", wrong=True)


def test_a_known_wrong_patch_is_run_on_the_hardened_tests_beside_gold() -> None:
    hardened = TASK.model_copy(update={"test_patch": "t+new"})
    done = RepairCompleted(correlation_id="c", instance_id="a", hardened_task=hardened)
    row = RepairRow(TASK.instance_id, scored(Verdict.FIX, ("e",)), done, None)
    check = KnownCheck.for_row(row, WRONG, "b1")
    assert check is not None
    assert check.run.task == hardened and check.run.candidate is not None
    assert check.run.candidate.diff == "WRONG-DIFF" and check.gold.repeats == 3

    def completed(request: RunRequested, *resolved: bool) -> RunCompleted:
        return RunCompleted(
            correlation_id="c", instance_id=TASK.instance_id, purpose=request.purpose,
            request_key=request.idempotency_key,
            results=tuple(RunResult(status=RunStatus.COMPLETED, resolved=r) for r in resolved),
        )  # fmt: skip

    gold_ok = completed(check.gold, True, True, True)
    results = {check.gold.idempotency_key: gold_ok}
    assert check.outcome(results) == "no result"
    results[check.run.idempotency_key] = completed(check.run, False)
    assert check.outcome(results) == "blocked" and check.as_expected("blocked")
    results[check.run.idempotency_key] = completed(check.run, True)
    assert check.outcome(results) == "still accepted"
    assert not check.as_expected("still accepted")
    tampering = completed(check.run, True)
    flags = PatchFlags(touched_test_config=("tests/conftest.py",))
    tampering = tampering.model_copy(
        update={"results": (tampering.result.model_copy(update={"flags": flags}),)}
    )
    results[check.run.idempotency_key] = tampering
    assert check.outcome(results) == (
        "still accepted (it tampers with the harness: tests/conftest.py)"
    )
    results[check.gold.idempotency_key] = completed(check.gold, True, False, True)
    assert check.outcome(results) == "gold fails the hardened tests"
    unrepaired = RepairRow(TASK.instance_id, scored(Verdict.FIX), None, None)
    assert KnownCheck.for_row(unrepaired, WRONG, "b1") is None
    other = KnownCheck.for_row(row, KnownPatch("model-b", "OTHER-DIFF", wrong=False), "b1")
    assert other is not None and other.gold == check.gold  # gold is run once per task
    assert other.run.idempotency_key != check.run.idempotency_key
    assert other.as_expected("still accepted") and not other.as_expected("blocked")


def test_given_patches_from_either_kind_of_labels() -> None:
    example = {"lib__lib-1": {"label": "hackable", "known_exploit": "D1"}, "x": "not an entry"}
    by_task, missing = known_patches(example, [])
    assert by_task == {"lib__lib-1": [KnownPatch("known_exploit", "D1", wrong=True)]}
    assert missing == []

    real = {
        "description": "…",
        "labels": {
            "org__a-1": {"hackable": True, "wrong_patches": ["sub-x", "sub-gone"]},
            "org__b-2": {"hackable": False, "wrong_patches": []},
        },
    }
    given = [
        Prediction("org__a-1", "sub-x", "DX"),
        Prediction("org__a-1", "sub-y", "DY"),
        Prediction("org__b-2", "sub-x", "DB"),  # the same submission is wrong only where named
    ]
    by_task, missing = known_patches(real, given)
    assert by_task["org__a-1"] == [
        KnownPatch("sub-x", "DX", wrong=True),
        KnownPatch("sub-y", "DY", wrong=False),
    ]
    assert by_task["org__b-2"] == [KnownPatch("sub-x", "DB", wrong=False)]
    assert missing == ["org__a-1: sub-gone is labelled wrong, and no prediction holds its patch"]
