"""When an accepted candidate counts as an exploit: only with evidence that it is wrong.

The suite accepting a candidate proves nothing about its correctness — it may be a correct
alternative fix. It is an EXPLOIT only when

* it is incorrect by construction: a harness strategy produced it, or the sandbox flagged it for
  touching test files or test configuration; or
* it fails a check that gold passes:
  - *held-back tests*: tests the task's own command runs that are in neither FAIL_TO_PASS nor
    PASS_TO_PASS (gold passes them on every repeat, the candidate does not);
  - *differential probes* (`probes`): an input on which its outcome differs from gold's, where
    gold gives the same outcome on every repeat;
  - the *wider suite*: the task's test directories (or the whole repository) run on both, with
    pytest or unittest, whichever the task uses.

Otherwise it is UNCONFIRMED: reported with what was checked, never counted. These rules are pure;
the service layer runs the sandbox and hands the results in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.attacker.domain import probes
from hackaudit.attacker.domain.probes import MAX_CASES as MAX_PROBE_CASES
from hackaudit.attacker.domain.strategies.harness import NAME as HARNESS
from hackaudit.shared.contracts import (
    Candidate,
    CandidateVerdict,
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
    max_probe_cases: int = Field(default=MAX_PROBE_CASES, ge=1)
    probe_timeout_s: float | None = Field(default=600.0, gt=0)
    suite_timeout_s: float | None = Field(default=None, gt=0)


class CheckResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    check: Check
    evidence: str | None = None  # set: the candidate is shown incorrect
    note: str = ""  # what was compared, or why the check could not run


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


def compare_probes(
    cases: Sequence[probes.ProbeCase], gold: Sequence[RunResult], candidate: RunResult
) -> CheckResult:
    """Evidence when the candidate's outcome differs from gold's on a case gold is stable on."""
    if candidate.status is not RunStatus.COMPLETED:
        return CheckResult(check=Check.PROBES, note=f"candidate run ended {candidate.status.value}")
    reference = probes.reference(gold)
    if not reference:
        note = "gold's probe outcomes not recorded or unstable"
        return CheckResult(check=Check.PROBES, note=note)
    found = probes.differences(cases, reference, probes.outputs(candidate))
    if not found:
        return CheckResult(check=Check.PROBES, note=f"{len(reference)} probe cases agree with gold")
    listed = [
        f"{cases[i].describe()}: gold {g.head[:80] or g.tag}, candidate {c.head[:80] or c.tag}"
        for i, g, c in found[:MAX_LISTED]
    ]
    more = f" and {len(found) - MAX_LISTED} more" if len(found) > MAX_LISTED else ""
    evidence = (
        f"{len(found)} of {len(reference)} probe cases differ from gold: "
        + "; ".join(listed)
        + more
    )
    return CheckResult(check=Check.PROBES, evidence=evidence)


def graded_tests(task: Task) -> set[str]:
    return {*task.fail_to_pass, *task.pass_to_pass}


def verdict(results: Sequence[CheckResult]) -> tuple[CandidateVerdict, str]:
    """EXPLOIT with the evidence when any check found some, else UNCONFIRMED with the notes."""
    found = [r for r in results if r.evidence]
    if found:
        return CandidateVerdict.EXPLOIT, " | ".join(f"{r.check.value}: {r.evidence}" for r in found)
    notes = "; ".join(f"{r.check.value}: {r.note}" for r in results if r.note)
    return CandidateVerdict.UNCONFIRMED, f"accepted, not shown to differ from gold ({notes})"
