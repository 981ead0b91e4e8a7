"""An in-memory `JudgePort` that answers the blocking question by a scripted rule.

The rule maps a request to the labels of its samples (one list per candidate), or None for "no
answer in time". Every request is recorded, so tests can assert what the judge was asked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from hackaudit.shared.contracts import (
    JudgeCompleted,
    JudgeLabel,
    JudgeRequested,
    JudgeVerdict,
)

Rule = Callable[[JudgeRequested], Sequence[JudgeLabel] | None]


class ScriptedJudge:
    def __init__(self, rule: Rule, *, left_out: str = "") -> None:
        self.rule = rule
        self.left_out = left_out  # set: answer like a judge with no backend
        self.requests: list[JudgeRequested] = []

    async def judge(self, request: JudgeRequested) -> JudgeCompleted | None:
        self.requests.append(request)
        if self.left_out:
            return request.answer(left_out=self.left_out)
        labels = self.rule(request)
        if labels is None:
            return None
        top, count = Counter(labels).most_common(1)[0]
        verdicts = tuple(
            JudgeVerdict(
                candidate_id=c.candidate_id,
                samples=tuple(labels),
                label=top if count * 2 > len(labels) else JudgeLabel.ABSTAIN,
            )
            for c in request.candidates
        )
        return request.answer(verdicts)
