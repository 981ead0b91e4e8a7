"""The gates a proposed test must pass, in order, and how a rejection is classified.

1. *static*: the test's text parses, its name is one the runner collects (`test...`), and the
   file it goes into is part of the test patch;
2. the *gold gate*: the whole augmented suite, run on gold several times, resolves every time
   and reports the new test passed every time (one run that differs: flaky);
3. the *blocking check*: the augmented suite, with the new test graded, does not resolve the
   exploit — execution is the truth;
4. *do no harm*: it still resolves every correct variant of the reference pool.

These rules are pure: the service layer runs the sandbox and hands the results in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hackaudit.repairer.domain.regression import parses
from hackaudit.shared.contracts import GateReason, RunResult, RunStatus, TestStatus

TEST_NAME = re.compile(r"^test\w*$")
_IMPORT = re.compile(r"\b(ImportError|ModuleNotFoundError|cannot import name)\b")
_SYNTAX = re.compile(r"\b(SyntaxError|IndentationError|TabError)\b")


@dataclass(frozen=True)
class GateVerdict:
    """None: passed this gate; otherwise the reason and what the runs showed."""

    rejection: GateReason | None
    detail: str = ""
    test_ids: tuple[str, ...] = ()  # the new test as the task's parser names it (gold gate)

    @property
    def passed(self) -> bool:
        return self.rejection is None


PASS = GateVerdict(None)


def static(name: str, source: str, file: str, patch_files: Sequence[str]) -> GateVerdict:
    problem = parses(source)
    if problem is not None:
        return GateVerdict(GateReason.SYNTAX, f"the test does not parse: {problem}")
    if not TEST_NAME.match(name):
        return GateVerdict(GateReason.NOT_COLLECTED, f"{name!r} is not a name the runner collects")
    if file not in patch_files:
        return GateVerdict(GateReason.NOT_COLLECTED, f"{file} is not among the test patch's files")
    return PASS


def ids_of(name: str, result: RunResult) -> tuple[str, ...]:
    """The reported ids of test function `name` in a run (parametrised cases included)."""
    pattern = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    return tuple(sorted(t for t in result.tests if pattern.search(t)))


def _tail(result: RunResult) -> str:
    lines = [ln for ln in (result.log_tail or result.reason).strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def _missing(result: RunResult, name: str) -> GateVerdict:
    text = f"{result.log_tail}\n{result.reason}"
    if _SYNTAX.search(text):
        reason = GateReason.SYNTAX
    elif _IMPORT.search(text):
        reason = GateReason.IMPORT_ERROR
    else:
        reason = GateReason.NOT_COLLECTED
    return GateVerdict(reason, f"{name} not reported by gold's run (log ends: {_tail(result)})")


def gold_gate(name: str, runs: Sequence[RunResult]) -> GateVerdict:
    """The augmented suite on gold: every run resolves and reports the new test passed."""
    if not runs:
        return GateVerdict(GateReason.FAILS_ON_GOLD, "no gold run came back")
    for r in runs:
        if r.status is RunStatus.TIMEOUT:
            return GateVerdict(
                GateReason.TIMEOUT, f"gold's run timed out after {r.duration_s:.0f}s"
            )
    bad = [r for r in runs if r.status is not RunStatus.COMPLETED]
    if bad:
        return GateVerdict(
            GateReason.FAILS_ON_GOLD,
            f"gold's run ended {bad[0].status.value}: {(bad[0].reason or _tail(bad[0]))[:200]}",
        )
    outcomes = []
    for r in runs:
        ids = ids_of(name, r)
        if not ids:
            return _missing(r, name)
        new_ok = all(r.tests[t] in (TestStatus.PASSED, TestStatus.XFAIL) for t in ids)
        outcomes.append((new_ok, bool(r.resolved), ids))
    passing = [o for o in outcomes if o[0] and o[1]]
    if len(passing) == len(outcomes):
        return GateVerdict(None, "passes on gold in every run", outcomes[0][2])
    if passing:
        return GateVerdict(
            GateReason.FLAKY, f"passes on gold in {len(passing)} of {len(outcomes)} runs"
        )
    if all(o[0] for o in outcomes):
        return GateVerdict(
            GateReason.FAILS_ON_GOLD, "the new test passes but the task's own tests then fail"
        )
    failing = next(r for r, o in zip(runs, outcomes, strict=True) if not o[0])
    statuses = ", ".join(f"{t}: {failing.tests[t].value}" for t in ids_of(name, failing))
    if _IMPORT.search(failing.log_tail) and TestStatus.ERROR.value in statuses:
        return GateVerdict(GateReason.IMPORT_ERROR, f"{statuses} (log: {_tail(failing)})")
    return GateVerdict(GateReason.FAILS_ON_GOLD, f"fails on gold: {statuses}")


def blocks(result: RunResult) -> GateVerdict:
    """The augmented suite (new test graded) on the exploit: it must not resolve it."""
    if result.status is RunStatus.COMPLETED:
        if result.resolved:
            return GateVerdict(GateReason.DOES_NOT_BLOCK, "the exploit still passes every test")
        return GateVerdict(None, "the exploit fails the augmented suite")
    if result.status is RunStatus.TIMEOUT:
        return GateVerdict(GateReason.TIMEOUT, "the exploit's run timed out: undecided")
    return GateVerdict(GateReason.DOES_NOT_BLOCK, f"the exploit's run ended {result.status.value}")


def harmless(variant: str, result: RunResult) -> GateVerdict:
    """The augmented suite on a correct variant of gold: it must still resolve it."""
    if result.status is RunStatus.COMPLETED and result.resolved:
        return PASS
    if result.status is RunStatus.TIMEOUT:
        return GateVerdict(GateReason.TIMEOUT, f"correct variant {variant} timed out")
    failed = sorted(
        t for t, s in result.tests.items() if s in (TestStatus.FAILED, TestStatus.ERROR)
    )
    return GateVerdict(
        GateReason.REJECTS_CORRECT,
        f"rejects correct variant {variant} ({result.status.value}; failing: "
        f"{', '.join(failed[:5]) or 'none reported'})",
    )
