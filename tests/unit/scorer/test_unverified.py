"""What a verdict leaves unverified: read from the attack alone, carried on the verdict, and
without any effect on EQS or the verdict."""

from __future__ import annotations

import pytest

from hackaudit.scorer.domain import audit
from hackaudit.scorer.domain.eqs import ScoringPolicy
from hackaudit.scorer.domain.unverified import NOT_MEASURED, account, budget_use
from hackaudit.shared.contracts import (
    AttackCompleted,
    AuditOptions,
    BudgetSpent,
    BudgetUse,
    Candidate,
    CandidateOutcome,
    CandidateReach,
    CandidateVerdict,
    GoldCoverage,
    HunkCoverage,
    RunCompleted,
    RunPurpose,
    RunResult,
    RunStatus,
    Task,
    TaskIngested,
    TaskScored,
    TestStatus,
    UnreachedCandidate,
    Verdict,
)

TASK = Task(
    instance_id="lib__lib-1",
    repo="x/lib",
    base_commit="abc",
    patch="gold",
    test_patch="tests",
    FAIL_TO_PASS=["t::a"],
)
BUDGET = "15 candidates (3 rounds of 5)"
COVERAGE = GoldCoverage(
    measured=True,
    hunks=(
        HunkCoverage(path="pkg/printer.py", start=10, lines=(10, 11), executed={10: ("t::a",)}),
        HunkCoverage(path="pkg/printer.py", start=40, lines=(40,)),
        HunkCoverage(path="pkg/printer.py", start=55, lines=(55, 56)),
    ),
    changed_lines=5,
    executed_lines=1,
)
FULL = GoldCoverage(
    measured=True,
    hunks=(HunkCoverage(path="pkg/printer.py", start=10, lines=(10,), executed={10: ("t::a",)}),),
    changed_lines=1,
    executed_lines=1,
)


def outcome(
    verdict: CandidateVerdict, n: int, reach: CandidateReach | None = None
) -> CandidateOutcome:
    candidate = Candidate(instance_id=TASK.instance_id, diff=f"d{n}")
    return CandidateOutcome(candidate=candidate, verdict=verdict, reach=reach)


def attack(*outcomes: CandidateOutcome, **fields: object) -> AttackCompleted:
    base: dict[str, object] = {
        "budget": BUDGET,
        "spent": BudgetSpent(candidates=len(outcomes), sandbox_seconds=10.0),
        "gold_coverage": FULL,
    }
    return AttackCompleted(
        correlation_id="c1", instance_id=TASK.instance_id, outcomes=outcomes, **(base | fields)
    )


UNREACHED = CandidateReach(lines=("pkg/printer.py:40",))
REACHED = CandidateReach(lines=("pkg/printer.py:10",), tests=("t::a",))


def test_an_attack_that_checked_everything_leaves_nothing_unverified() -> None:
    found = account(attack(outcome(CandidateVerdict.BLOCKED, 1)), stop_when_hackable=False)
    assert found.caveats() == () and found.text() == ""
    assert found.budget_use is BudgetUse.SPENT and found.coverage_measured


def test_unconfirmed_and_unreached_candidates_are_listed_with_their_lines() -> None:
    outcomes = (
        outcome(CandidateVerdict.UNCONFIRMED, 1, UNREACHED),
        outcome(CandidateVerdict.UNCONFIRMED, 2, REACHED),
        outcome(CandidateVerdict.UNCONFIRMED, 3),  # reach not measured
        outcome(CandidateVerdict.EXPLOIT, 4, UNREACHED),  # confirmed: not a gap
        outcome(CandidateVerdict.BLOCKED, 5, UNREACHED),  # rejected: not a gap
    )
    found = account(attack(*outcomes), stop_when_hackable=False)
    ids = [o.candidate.candidate_id for o in outcomes]
    assert found.unconfirmed == tuple(ids[:3])
    assert found.unreached == (
        UnreachedCandidate(candidate_id=ids[0], lines=("pkg/printer.py:40",)),
    )
    assert found.reach_not_measured == 1
    assert found.caveats() == (
        "3 accepted candidates unconfirmed",
        "1 accepted candidate unreached by any test or probe",
    )


def test_gold_hunks_the_graded_tests_never_execute_are_a_gap() -> None:
    found = account(attack(gold_coverage=COVERAGE), stop_when_hackable=False)
    assert [(h.path, h.start) for h in found.never_executed] == [
        ("pkg/printer.py", 40),
        ("pkg/printer.py", 55),
    ]
    assert found.gold_hunks == 3
    assert found.caveats() == ("2 of 3 gold hunks never executed by the graded tests",)


@pytest.mark.parametrize(
    ("coverage", "note"),
    [
        (None, NOT_MEASURED),
        (GoldCoverage(measured=False, reason="coverage run timeout"), "coverage run timeout"),
    ],
)
def test_coverage_not_measured_is_said(coverage: GoldCoverage | None, note: str) -> None:
    found = account(attack(gold_coverage=coverage), stop_when_hackable=False)
    assert not found.coverage_measured and found.coverage_note == note
    assert found.caveats() == ("the graded tests' coverage of gold not measured",)


FIRST = BudgetSpent(candidates=2, sandbox_seconds=4.0)
SHORT_NOTE = "only 0 distinct behaviour-changing candidates exist for a 2-line gold patch"
STOPPED_NOTE = "stopped at the first confirmed exploit, after 2 candidates"


@pytest.mark.parametrize(
    ("fields", "stop", "expected"),
    [
        ({}, False, BudgetUse.SPENT),
        ({"budget": ""}, False, BudgetUse.UNKNOWN),
        ({"budget_note": SHORT_NOTE}, False, BudgetUse.SHORT),
        (
            {"budget_note": STOPPED_NOTE, "to_first_exploit": FIRST},
            True,
            BudgetUse.STOPPED_AT_EXPLOIT,
        ),
        # budget left with an exploit the audit did not ask to stop at: too few candidates
        ({"budget_note": SHORT_NOTE, "to_first_exploit": FIRST}, False, BudgetUse.SHORT),
        # asked to stop, but no task exploit to stop at: too few candidates
        ({"budget_note": SHORT_NOTE}, True, BudgetUse.SHORT),
    ],
)
def test_budget_left_is_a_gap_only_without_an_exploit_to_stop_at(
    fields: dict[str, object], stop: bool, expected: BudgetUse
) -> None:
    assert budget_use(attack(**fields), stop_when_hackable=stop) is expected


def test_zero_candidates_run_of_a_budget_is_said() -> None:
    found = account(attack(budget_note=SHORT_NOTE), stop_when_hackable=False)
    assert found.candidates_run == 0 and found.budget_note == SHORT_NOTE
    assert found.text() == f"not verified: only 0 candidates run of a budget of {BUDGET}"


def ok(resolved: bool) -> RunResult:
    status = TestStatus.PASSED if resolved else TestStatus.FAILED
    return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests={"t::a": status})


def scored(done: AttackCompleted, options: AuditOptions | None = None) -> TaskScored:
    ingested = TaskIngested(correlation_id="c1", task=TASK, options=options or AuditOptions())
    state, _ = audit.admit(audit.begin(ingested))
    for purpose, resolved in ((RunPurpose.GOLD, True), (RunPurpose.EMPTY, False)):
        run = RunCompleted(
            correlation_id="c1",
            instance_id=TASK.instance_id,
            purpose=purpose,
            request_key="k",
            results=(ok(resolved),),
        )
        state, _ = audit.on_run(state, run, ScoringPolicy())
    _, out = audit.on_attack(state, done, ScoringPolicy())
    (found,) = out
    assert isinstance(found, TaskScored)
    return found


def test_the_verdict_carries_the_account_and_keeps_its_score() -> None:
    blocked = [outcome(CandidateVerdict.BLOCKED, n) for n in range(3)]
    weak = attack(
        *blocked,
        outcome(CandidateVerdict.UNCONFIRMED, 7, UNREACHED),
        gold_coverage=COVERAGE,
        budget_note=SHORT_NOTE,
    )
    plain = scored(attack(*blocked, outcome(CandidateVerdict.UNCONFIRMED, 7)))
    found = scored(weak)
    assert found.verdict is plain.verdict is Verdict.KEEP
    assert found.eqs == plain.eqs and found.components == plain.components
    assert found.unverified is not None
    assert found.unverified.caveats() == (
        "1 accepted candidate unconfirmed",
        "1 accepted candidate unreached by any test or probe",
        "only 4 candidates run of a budget of 15 candidates (3 rounds of 5)",
        "2 of 3 gold hunks never executed by the graded tests",
    )


def test_the_audit_options_say_whether_budget_left_after_an_exploit_is_a_gap() -> None:
    done = attack(
        outcome(CandidateVerdict.EXPLOIT, 1), budget_note=STOPPED_NOTE, to_first_exploit=FIRST
    )
    stopping = scored(done, AuditOptions(stop_when_hackable=True)).unverified
    assert stopping is not None and stopping.budget_use is BudgetUse.STOPPED_AT_EXPLOIT
    assert stopping.caveats() == ()
