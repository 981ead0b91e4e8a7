"""The repair loop's decisions: when to stop, how new tests are classified, what is reported.

The loop runs iteration after iteration while some targeted exploit is not blocked and the
budget (iterations, sandbox-seconds, model tokens) is not spent. At the end the accepted tests
are classified by running the hardened suite on the base commit (the empty patch): a new test
that fails there is FAIL_TO_PASS, one that passes is PASS_TO_PASS; a test gold does not pass on
every run of the final suite is left out of both lists.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hackaudit.shared.contracts import ProposedTest, RunResult, RunStatus, TestStatus

PASSING = (TestStatus.PASSED, TestStatus.XFAIL)


@dataclass(frozen=True)
class Budget:
    iterations: int
    seconds: float | None = None
    tokens: int | None = None

    def spent(self, iterations: int, seconds: float, tokens: int) -> str | None:
        """Why no further iteration may start (None: it may)."""
        if iterations >= self.iterations:
            return f"iteration budget spent ({self.iterations})"
        if self.seconds is not None and seconds >= self.seconds:
            return f"sandbox budget spent ({seconds:.0f}s of {self.seconds:.0f}s)"
        if self.tokens is not None and tokens >= self.tokens:
            return f"token budget spent ({tokens} of {self.tokens})"
        return None


@dataclass(frozen=True)
class Classified:
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    dropped: tuple[str, ...]  # not passing on gold in every run of the final suite
    problem: str = ""


def classify(new_ids: Sequence[str], empty: RunResult, gold: Sequence[RunResult]) -> Classified:
    """New test ids by their outcome on the base commit, among those gold passes every time."""
    if not gold or any(r.status is not RunStatus.COMPLETED for r in gold):
        status = gold[0].status.value if gold else "missing"
        return Classified((), (), tuple(new_ids), f"gold's run of the hardened suite: {status}")
    if empty.status is not RunStatus.COMPLETED:
        return Classified(
            (), (), tuple(new_ids), f"the base commit's run ended {empty.status.value}"
        )
    kept = [t for t in new_ids if all(r.tests.get(t) in PASSING for r in gold)]
    dropped = tuple(t for t in new_ids if t not in kept)
    f2p = tuple(t for t in kept if empty.tests.get(t) not in PASSING)
    p2p = tuple(t for t in kept if empty.tests.get(t) in PASSING)
    problem = f"{len(dropped)} new tests fail on gold in the final suite" if dropped else ""
    return Classified(f2p, p2p, dropped, problem)


def rejections(tests: Sequence[ProposedTest]) -> dict[str, int]:
    """The gates' rejections by reason."""
    counts = Counter(t.rejection.value for t in tests if t.rejection is not None)
    return dict(sorted(counts.items()))


def graded(base: Sequence[str], added: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*base, *added]))
