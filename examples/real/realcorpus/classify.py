"""FAIL_TO_PASS / PASS_TO_PASS from test results, SWE-bench's way, kept pure.

`before` is one run of the test files with the test patch and no fix; `gold` are at least
`MIN_GOLD_RUNS` runs with the gold patch. A test counts only when every gold run agrees on it:

| before              | every gold run | list            |
|---------------------|----------------|-----------------|
| failed, error, none | passed         | FAIL_TO_PASS    |
| passed              | passed         | PASS_TO_PASS    |
| passed              | not passed     | broken by gold  |
| anything            | runs disagree  | unstable (left out) |

A run with no test result at all means the runner never ran the tests: nothing is classified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

MIN_GOLD_RUNS = 3
PASSED = "PASSED"


@dataclass(frozen=True)
class Classification:
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    unstable: list[str] = field(default_factory=list)
    broken_by_gold: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return not self.problems


def classify(
    before: Mapping[str, str], gold: Sequence[Mapping[str, str]], *, min_runs: int = MIN_GOLD_RUNS
) -> Classification:
    """The graded lists from one run without a fix and repeated gold runs (statuses by test)."""
    if len(gold) < min_runs:
        return Classification(
            [], [], problems=[f"{len(gold)} gold run(s); at least {min_runs} are needed"]
        )
    silent = ["without the fix" if not before else ""] + [
        f"gold run {i + 1}" for i, run in enumerate(gold) if not run
    ]
    if any(silent):
        which = ", ".join(w for w in silent if w)
        return Classification(
            [], [], problems=[f"no test result in {which}: the runner did not run the tests"]
        )
    names = sorted(set(before).union(*gold))
    f2p: list[str] = []
    p2p: list[str] = []
    unstable: list[str] = []
    broken: list[str] = []
    for name in names:
        outcomes = {str(run.get(name)) for run in gold}
        if len(outcomes) > 1:
            unstable.append(name)
            continue
        passes_with_gold = outcomes == {PASSED}
        passed_before = str(before.get(name)) == PASSED
        if passes_with_gold and passed_before:
            p2p.append(name)
        elif passes_with_gold:
            f2p.append(name)
        elif passed_before:
            broken.append(name)
    problems = [] if f2p else ["no test fails without the fix and passes with gold"]
    return Classification(f2p, p2p, unstable, broken, problems)
