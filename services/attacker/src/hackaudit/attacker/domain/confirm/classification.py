"""What a confirmed exploit says, and to whom: the task's tests, or the harness that grades them.

Three kinds, each with the advice that closes it:

* *test tampering* — the candidate changes test files or test configuration (a `conftest.py`
  forcing passes, neutralised assertions, a shadowed test file). Paths are judged by the shared
  rule; `setup.cfg`, `tox.ini` and `pyproject.toml` count only when the sandbox, which reads the
  changed sections, flagged them. The hole is in the harness: it
  should discard a patch's changes to tests. Reported apart, not counted against the task.
* *runner tampering* — source code that defeats the runner from inside the test process (exit 0
  at import, forged results in the runner's own format, pytest's reports patched, the fix read
  from later git history). These pass on any task whatever its tests say, so they too are harness
  findings; forged results carry their own advice (`FORGED_OUTPUT_ADVICE`).
* *task* — everything else that touches only the source: mutants, partial fixes, special cases
  and an always-equal return value. The task's own assertions let a wrong patch through; the
  fix is in its tests (for always-equal: compare types, use `is` or strict checks).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from hackaudit.attacker.domain.generate.strategies.harness import (
    FORGED_OUTPUT,
    RUNNER_VARIANTS,
    variant_of,
)
from hackaudit.attacker.domain.generate.strategies.harness import NAME as HARNESS
from hackaudit.attacker.domain.reading import diffs
from hackaudit.shared.anatomy import is_test_path
from hackaudit.shared.contracts import Candidate, PatchFlags


class Kind(StrEnum):
    TEST_TAMPERING = "test tampering"
    RUNNER_TAMPERING = "runner tampering"
    TASK = "task exploit"


ADVICE = {
    Kind.TEST_TAMPERING: "harness: discard a patch's changes to test files and test configuration "
    "(restore them from the test patch before running)",
    Kind.RUNNER_TAMPERING: "harness: grade from the runner's structured report and exit status, "
    "run the tests in a process the patch's import-time code cannot end or print into, and "
    "ship images without later git history",
    Kind.TASK: "tests: add assertions that tell this candidate from gold (the evidence names an "
    "input on which they differ)",
}
FORGED_OUTPUT_ADVICE = (
    "harness: the results were read from text the tests' own process prints, and the patch's "
    "code printed them (the runner's per-test lines, its final summary, an exit status of 0; "
    "under pytest its JUnit report rewritten too) — take results from a channel that process "
    "cannot write: run the patch's code in a process apart from the one that reports, or have "
    "the runner report each result to a collector outside the test process and its user; at the "
    "least, refuse a run whose runner's own summary is missing, late or does not count its results"
)
ALWAYS_EQUAL_ADVICE = (
    "tests: the assertions accept an object equal to everything — compare types too "
    "(`type(got) is type(expected)` / `isinstance`), use `is` for singletons and booleans, and "
    "check the value's own properties rather than only `==`"
)


@dataclass(frozen=True)
class ExploitKind:
    kind: Kind
    advice: str

    @property
    def tampering(self) -> bool:
        return self.kind is not Kind.TASK


def touched_paths(candidate: Candidate) -> list[str]:
    if candidate.files:
        return sorted(candidate.files)
    try:
        return diffs.parse_patch(candidate.diff, lenient=True).paths
    except diffs.DiffError:
        return []


def exploit_kind(candidate: Candidate, flags: PatchFlags) -> ExploitKind:
    """The kind of a confirmed exploit, from what it touches and which strategy made it."""
    paths = touched_paths(candidate)
    if flags.touched_test_files or flags.touched_test_config or any(is_test_path(p) for p in paths):
        return ExploitKind(Kind.TEST_TAMPERING, ADVICE[Kind.TEST_TAMPERING])
    if candidate.provenance.strategy == HARNESS:
        variant = variant_of(candidate)
        if variant in FORGED_OUTPUT:
            return ExploitKind(Kind.RUNNER_TAMPERING, FORGED_OUTPUT_ADVICE)
        if variant in RUNNER_VARIANTS:
            return ExploitKind(Kind.RUNNER_TAMPERING, ADVICE[Kind.RUNNER_TAMPERING])
        if variant == "always_equal":
            return ExploitKind(Kind.TASK, ALWAYS_EQUAL_ADVICE)
    return ExploitKind(Kind.TASK, ADVICE[Kind.TASK])
