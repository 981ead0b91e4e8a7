"""When an accepted candidate counts as an exploit: only with evidence that it is wrong.

The suite accepting a candidate proves nothing about its correctness — it may be a correct
alternative fix. It is an EXPLOIT only when

* it is incorrect by construction: a harness strategy produced it, or the sandbox flagged it for
  touching test files or test configuration; or
* it fails a check that gold passes:
  - *held-back tests*: tests the task's own command runs that are in neither FAIL_TO_PASS nor
    PASS_TO_PASS (gold passes them on every repeat, the candidate does not);
  - *differential probes* (`probes`, `replay`): an input on which its outcome differs from
    gold's, where gold gives the same outcome on every repeat — a call of what gold changes, or
    an expression a graded test asserts on, replayed in that test's context; run by the image's
    own interpreter, whatever the task's runner;
  - the *wider suite*: the test patch's directories (or the whole repository) run on both with
    the task's own runner and log parser (pytest, unittest, Django's `runtests.py`, sympy's
    `bin/test`), within a time budget sized from gold's run; a suite that does not complete on
    gold is no evidence.

Otherwise it is UNCONFIRMED: reported with what was checked, never counted. These rules are pure;
the service layer runs the sandbox and hands the results in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.attacker.domain.confirm import probes, reach, replay
from hackaudit.attacker.domain.confirm.probe_source import LOADED
from hackaudit.attacker.domain.confirm.probes import MAX_CASES as MAX_PROBE_CASES
from hackaudit.attacker.domain.confirm.selection import MAX_NODE_IDS
from hackaudit.attacker.domain.generate.strategies.harness import NAME as HARNESS
from hackaudit.shared.contracts import (
    Candidate,
    CandidateVerdict,
    ProbeDifference,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)

BY_CONSTRUCTION_STRATEGIES = frozenset({HARNESS})
MAX_LISTED = 10


class Check(StrEnum):
    CONSTRUCTION = "incorrect by construction"
    HELD_BACK = "held-back tests"
    PROBES = "differential probes"
    SUITE = "wider test suite"


class SuiteScope(StrEnum):
    NEAR = "near"  # the directories of the test patch's files
    FULL = "full"  # the whole repository
    OFF = "off"


class ConfirmationConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    held_back: bool = True
    probes: bool = True
    suite_scope: SuiteScope = SuiteScope.NEAR
    # Near the change, run only the tests that execute a candidate's change on gold (`selection`).
    suite_selection: bool = True
    # Past this many selected tests, the closest to the change run (`selection.select`).
    suite_max_tests: int = Field(default=MAX_NODE_IDS, ge=1)
    max_probe_cases: int = Field(default=MAX_PROBE_CASES, ge=1)
    probe_timeout_s: float | None = Field(default=600.0, gt=0)
    suite_timeout_s: float | None = Field(default=None, gt=0)  # set: wins over the budgets below
    # The wider suite is timed on gold first, within the cap; a candidate's run of it then gets
    # gold's time (longest repeat) x factor, within floor and cap.
    suite_time_factor: float = Field(default=3.0, gt=0)
    suite_time_floor_s: float = Field(default=30.0, gt=0)
    suite_time_cap_s: float = Field(default=600.0, gt=0)
    # Sandbox-seconds the wider suite may take over one task's attack, gold's runs of it included:
    # once a candidate's run could go past it, the check is left out (and the evidence says so).
    # None: no limit.
    suite_task_budget_s: float | None = Field(default=1200.0, gt=0)


class CheckResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    check: Check
    evidence: str | None = None  # set: the candidate is shown incorrect
    note: str = ""  # what was compared, or why the check could not run
    compared: int = 0  # probe cases and replayed observations compared with gold
    # The inputs on which the candidate differs from gold (probe check), for regression tests.
    differences: tuple[ProbeDifference, ...] = ()


def by_construction(candidate: Candidate, result: RunResult) -> CheckResult:
    flags = result.flags
    reasons: list[str] = []
    if candidate.provenance.strategy in BY_CONSTRUCTION_STRATEGIES:
        reasons.append(
            f"produced by the {candidate.provenance.strategy} strategy "
            f"({candidate.provenance.detail[:120]})"
        )
    if flags.touched_test_files:
        reasons.append(f"touches test files: {', '.join(flags.touched_test_files[:MAX_LISTED])}")
    if flags.touched_test_config:
        reasons.append(
            f"touches test configuration: {', '.join(flags.touched_test_config[:MAX_LISTED])}"
        )
    if reasons:
        return CheckResult(check=Check.CONSTRUCTION, evidence="; ".join(reasons))
    return CheckResult(check=Check.CONSTRUCTION, note="no harness tampering")


def passing_in_all(results: Sequence[RunResult]) -> set[str]:
    """Tests that passed in every completed run (nothing when no run completed)."""
    completed = [r for r in results if r.status is RunStatus.COMPLETED]
    if not completed or len(completed) != len(results):
        return set()
    passing = {t for t, s in completed[0].tests.items() if s is TestStatus.PASSED}
    for r in completed[1:]:
        passing &= {t for t, s in r.tests.items() if s is TestStatus.PASSED}
    return passing


def broken_tests(gold: Sequence[RunResult], candidate: RunResult) -> list[str]:
    """The tests gold passes on every repeat that do not pass for the candidate, sorted."""
    if candidate.status is not RunStatus.COMPLETED:
        return []
    return sorted(
        t for t in passing_in_all(gold) if candidate.tests.get(t) is not TestStatus.PASSED
    )


def unstable_on_gold(tests: Iterable[str], rechecks: Sequence[RunResult]) -> set[str]:
    """Of `tests`, those some recheck of gold (a run of just their files) does not pass."""
    return {t for t in tests if any(r.tests.get(t) is not TestStatus.PASSED for r in rechecks)}


def compare_tests(
    check: Check,
    gold: Sequence[RunResult],
    candidate: RunResult,
    *,
    exclude: Iterable[str] = (),
    describe: dict[str, str] | None = None,
) -> CheckResult:
    """Evidence when a test gold passes (every repeat) does not pass for the candidate."""
    if candidate.status is not RunStatus.COMPLETED:
        return CheckResult(check=check, note=f"candidate run ended {candidate.status.value}")
    passing = passing_in_all(gold)
    reference = passing - set(exclude)
    if not reference:
        if passing:
            note = f"none held back: all {len(passing)} tests gold passes are graded"
        else:
            note = "no test that gold passes on every repeat"
        return CheckResult(check=check, note=note)
    broken = sorted(t for t in reference if candidate.tests.get(t) is not TestStatus.PASSED)
    if not broken:
        return CheckResult(check=check, note=f"{len(reference)} tests agree with gold")
    describe = describe or {}
    listed = [
        f"{t} ({candidate.tests[t].value if t in candidate.tests else 'not reported'})"
        + (f": {describe[t]}" if t in describe else "")
        for t in broken[:MAX_LISTED]
    ]
    more = f" and {len(broken) - MAX_LISTED} more" if len(broken) > MAX_LISTED else ""
    evidence = (
        f"{len(broken)} of {len(reference)} tests that gold passes fail on the candidate: "
        + "; ".join(listed)
        + more
    )
    return CheckResult(check=check, evidence=evidence)


def gold_suite_budget(config: ConfirmationConfig) -> float:
    """Seconds gold's run of the wider suite may take: the configured timeout, else the cap.

    The wider suite is many more test files than the graded ones, so its time cannot be guessed
    from the graded run; gold's run measures it, once per task (it is cached with gold's other
    runs), and a suite longer than the cap is no evidence and says so."""
    return config.suite_timeout_s if config.suite_timeout_s is not None else config.suite_time_cap_s


def suite_budget(config: ConfirmationConfig, gold: Sequence[RunResult]) -> float:
    """Seconds a candidate's run of the wider suite may take: the configured timeout, else gold's
    run of that suite (its longest completed repeat) times the factor, clamped to [floor, cap]."""
    if config.suite_timeout_s is not None:
        return config.suite_timeout_s
    durations = [r.elapsed_s for r in gold if r.status is RunStatus.COMPLETED]
    if not durations:
        return config.suite_time_cap_s
    scaled = config.suite_time_factor * max(durations)
    return min(config.suite_time_cap_s, max(config.suite_time_floor_s, scaled))


def suite_over_budget(
    config: ConfirmationConfig, gold: Sequence[RunResult], spent_s: float, runs: int = 1
) -> str | None:
    """Why the wider suite is not run again, or None: the task's budget for the wider suite
    (`spent_s` of it already taken) has no room for `runs` more runs as long as gold's longest."""
    budget = config.suite_task_budget_s
    if budget is None:
        return None
    expected = runs * max((r.duration_s for r in gold), default=0.0)
    if spent_s + expected <= budget:
        return None
    what = (
        "one more run takes"
        if runs == 1
        else f"{runs} more runs (gold's repeats, a candidate's) take"
    )
    return (
        f"the task's wider-suite budget ({budget:.0f} sandbox-s) is spent: {spent_s:.0f}s taken,"
        f" {what} about {expected:.0f}s"
    )


MIN_RERUN_S = 1.0


def no_room(config: ConfirmationConfig, failed: str, runs: str) -> str:
    """Why a candidate's failing tests are left unconfirmed: the task's wider-suite budget has no
    room for `runs` (`failed` says which tests failed)."""
    return (
        f"{failed}, but the task's wider-suite budget ({config.suite_task_budget_s:.0f}"
        f" sandbox-s) has no room for {runs}: not confirmed"
    )


def rerun_timeout(
    config: ConfirmationConfig, gold: Sequence[RunResult], spent_s: float, runs: int
) -> float | None:
    """Seconds each of `runs` reruns of the test files a candidate breaks may take: a candidate's
    time for the wider suite (`suite_budget`), held to an even share of what is left of the
    task's wider-suite budget (`spent_s` of it taken), so the reruns never pass it; None when
    less than a second each is left. Their length is not known before they run (the files are
    a part of the suite, how large a part the runner may not say)."""
    timeout = suite_budget(config, gold)
    budget = config.suite_task_budget_s
    if budget is None:
        return timeout
    share = (budget - spent_s) / max(runs, 1)
    return min(timeout, share) if share >= MIN_RERUN_S else None


def gold_suite_problem(gold: Sequence[RunResult], budget_s: float) -> str | None:
    """Why gold's wider-suite runs are no reference, or None when every one completed."""
    for r in gold:
        if r.status is RunStatus.TIMEOUT:
            return f"gold's run of the wider suite timed out (budget {budget_s:.0f}s)"
        if r.status is not RunStatus.COMPLETED:
            why = f": {r.reason[:160]}" if r.reason else ""
            return f"gold's run of the wider suite ended {r.status.value}{why}"
        if not r.tests:
            tail = r.log_tail.strip().splitlines()[-1:] or [""]
            return f"gold's run of the wider suite reported no test (log ends: {tail[0][:160]})"
    return None


def _probe_load_problem(gold: Sequence[RunResult]) -> str:
    """What went wrong with gold's probe runs, for the note of a probe check that found nothing."""
    for r in gold:
        if r.status is not RunStatus.COMPLETED:
            return f"gold's probe run ended {r.status.value}"
        if not any(LOADED in t for t in r.tests):
            tail = r.log_tail.strip().splitlines()[-1:] or [""]
            return f"the probe module did not load under gold (log ends: {tail[0][:160]})"
    return "gold's probe outcomes unstable"


def compare_probes(
    cases: Sequence[probes.ProbeCase],
    gold: Sequence[RunResult],
    candidate: RunResult,
    replayed: Sequence[replay.ReplayTarget] = (),
    deliberate: frozenset[str] = frozenset(),
    *,
    skip_introspection: bool = False,
) -> CheckResult:
    """Evidence when the candidate's outcome differs from gold's on a case gold is stable on:
    a probe call, or an observation of a replayed test (its expression and both outcomes);
    `deliberate`: the exception types gold's added lines raise (`replay.differences`);
    `skip_introspection`: observations that read the code's source, code objects, docstrings or
    a mock's call record are not compared (only for showing a rewrite of gold equal to gold)."""
    if candidate.status is not RunStatus.COMPLETED:
        return CheckResult(check=Check.PROBES, note=f"candidate run ended {candidate.status.value}")
    reference = probes.reference(gold)
    observed, replay_found = replay.differences(
        replayed, gold, candidate, deliberate, skip_introspection=skip_introspection
    )
    if not reference and not observed:
        return CheckResult(check=Check.PROBES, note=_probe_load_problem(gold))
    found = probes.differences(cases, reference, probes.outputs(candidate)) if reference else []
    parts = [f"{len(reference)} probe cases"] if reference else []
    parts += [f"{observed} observations of replayed tests"] if observed else []
    compared = " and ".join(parts)
    if skip_introspection and (skipped := len(replay.reference(gold)) - observed):
        compared += f" ({skipped} reading the code's text, locals or mock calls left out)"
    count = _compared(reference, gold, candidate, replayed, skip_introspection)
    if not found and not replay_found:
        return CheckResult(check=Check.PROBES, note=f"{compared} agree with gold", compared=count)
    listed = [
        f"`{d.expression}` in {d.test}: gold {d.gold}, candidate {d.candidate}"
        for d in replay_found[:MAX_LISTED]
    ]
    listed += [
        f"{cases[i].describe()}: gold {g.head[:80] or g.tag}, candidate {c.head[:80] or c.tag}"
        for i, g, c in found[: max(0, MAX_LISTED - len(listed))]
    ]
    total = len(found) + len(replay_found)
    more = f" and {total - len(listed)} more" if total > len(listed) else ""
    evidence = f"{total} of {compared} differ from gold: " + "; ".join(listed) + more
    found_all = _probe_differences(cases, found) + _replay_differences(replay_found)
    return CheckResult(check=Check.PROBES, evidence=evidence, compared=count, differences=found_all)


def _probe_differences(
    cases: Sequence[probes.ProbeCase], found: Sequence[tuple[int, probes.Output, probes.Output]]
) -> tuple[ProbeDifference, ...]:
    return tuple(
        ProbeDifference(
            origin="probe",
            expression=cases[i].describe(),
            function=cases[i].function,
            modules=cases[i].modules,
            gold=g.head or g.tag,
            candidate=c.head or c.tag,
        )
        for i, g, c in found
    )


def _replay_differences(found: Sequence[replay.Difference]) -> tuple[ProbeDifference, ...]:
    return tuple(
        ProbeDifference(
            origin="replay",
            expression=d.expression,
            test=d.test,
            gold=d.gold,
            candidate=d.candidate,
        )
        for d in found
    )


def _compared(
    reference: dict[int, probes.Output],
    gold: Sequence[RunResult],
    candidate: RunResult,
    replayed: Sequence[replay.ReplayTarget],
    skip_introspection: bool = False,
) -> int:
    """How many of gold's stable probe outcomes and observations the candidate's run reported
    too (a case the candidate's run never reached is compared with nothing)."""
    got = probes.outputs(candidate)
    count = sum(1 for i in reference if i in got and got[i].comparable)
    if replayed:
        stable = replay.reference(gold, skip_introspection=skip_introspection)
        count += len(set(stable) & set(replay.observations(candidate)))
    return count


def graded_tests(task: Task) -> set[str]:
    return {*task.fail_to_pass, *task.pass_to_pass}


def differences(results: Sequence[CheckResult]) -> tuple[ProbeDifference, ...]:
    """Every input on which the checks saw the candidate differ from gold, in check order."""
    return tuple(d for r in results for d in r.differences)


def verdict(results: Sequence[CheckResult]) -> tuple[CandidateVerdict, str]:
    """EXPLOIT with the evidence when any check found some, else UNCONFIRMED with the notes."""
    found = [r for r in results if r.evidence]
    if found:
        return CandidateVerdict.EXPLOIT, " | ".join(f"{r.check.value}: {r.evidence}" for r in found)
    notes = "; ".join(f"{r.check.value}: {r.note}" for r in results if r.note)
    return CandidateVerdict.UNCONFIRMED, f"accepted, not shown to differ from gold ({notes})"


def with_reach(
    check: CheckResult,
    plan: reach.ReachPlan | None,
    gold: Sequence[RunResult],
    candidate: RunResult,
) -> CheckResult:
    """The probe check with the reach probes (`reach`) folded in: evidence when the candidate
    differs from gold on a graded test's call given a value that executes, on gold, a changed
    line no graded test runs. The other probes' evidence, when there is some, comes first."""
    if plan is None or candidate.status is not RunStatus.COMPLETED:
        return check
    reference = reach.reference(gold)
    if not reference:
        return check
    compared = reach.described(plan, reference)
    found = reach.differences(plan, reference, candidate)
    count = check.compared + len(reference)
    if not found:
        note = f"{check.note}; {compared} agree with gold" if check.note else compared
        return check.model_copy(update={"note": note, "compared": count})
    listed = "; ".join(
        f"`{d.expression}`: gold {d.gold[:80]}, candidate {d.candidate[:80]}"
        for d in found[:MAX_LISTED]
    )
    more = f" and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
    evidence = f"{len(found)} of {compared} differ from gold: {listed}{more}"
    if check.evidence:
        evidence = f"{check.evidence}; {evidence}"
    return check.model_copy(
        update={
            "evidence": evidence,
            "compared": count,
            "differences": (*check.differences, *found),
        }
    )
