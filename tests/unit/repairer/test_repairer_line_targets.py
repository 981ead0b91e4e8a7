"""Each exploit to block carries the lines of its change that the task's graded tests never
execute on gold (its reach, among the request's unexecuted lines): what the LLM augmenter is asked
to execute and pin."""

from __future__ import annotations

from hackaudit.repairer.service_layer.repair import targets_of
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateReach,
    CandidateVerdict,
    RepairRequested,
    Task,
)

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold", test_patch="tests",
    FAIL_TO_PASS=["t::a"],
)  # fmt: skip


def _exploit(diff: str, lines: tuple[str, ...] | None) -> tuple[Candidate, CandidateOutcome]:
    candidate = Candidate(instance_id=TASK.instance_id, diff=diff)
    reach = CandidateReach(lines=lines, probes=1) if lines is not None else None
    outcome = CandidateOutcome(candidate=candidate, verdict=CandidateVerdict.EXPLOIT, reach=reach)
    return candidate, outcome


def test_an_exploit_targets_the_lines_of_its_change_no_graded_test_executes() -> None:
    aside, aside_outcome = _exploit("aside", ("lib/a.py:5", "lib/a.py:3"))
    tested, tested_outcome = _exploit("tested", ("lib/a.py:3",))
    unknown, unknown_outcome = _exploit("unknown", None)
    request = RepairRequested(
        correlation_id="c1",
        task=TASK,
        exploits=(aside, tested, unknown),
        outcomes=(aside_outcome, tested_outcome, unknown_outcome),
        unexecuted=("lib/a.py:5", "lib/b.py:8"),
    )
    lines = {t.id: t.lines for t in targets_of(request)}
    assert lines == {
        aside.candidate_id: ("lib/a.py:5",),  # line 3 runs under the graded tests
        tested.candidate_id: (),
        unknown.candidate_id: (),  # where its change sits is not known
    }
