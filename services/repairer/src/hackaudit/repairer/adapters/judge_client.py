"""The judge as an awaitable call over the bus, for the repairer's blocking question.

The repairer publishes a `JudgeRequested` (question BLOCKING) and awaits the `JudgeCompleted`
whose `request_key` is that request's key. The judge publishes every answer on one subject, so
the repairer's durable consumer there sees the scorer's answers too: those are dropped, and only
answers to the repairer's own requests are kept until asked for (a restarted repairer asking
again finds its answer). The judge is advice beside execution, not the truth: an answer that
does not come in time is no answer (None), never a failed repair.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from hackaudit.shared import subjects
from hackaudit.shared.contracts import JudgeCompleted, JudgeRequested
from hackaudit.shared.replies import Replies

Publish = Callable[[str, JudgeRequested], Awaitable[None]]


class BusJudgeClient:
    def __init__(self, requester: str, *, wait_s: float = 900.0) -> None:
        self.requester = requester
        self.wait_s = wait_s
        self._publish: Publish | None = None
        self._replies: Replies[JudgeCompleted] = Replies()

    def bind(self, publish: Publish) -> None:
        self._publish = publish

    async def deliver(self, done: JudgeCompleted) -> None:
        """Handler of the repairer's consumer on `judge.completed`."""
        self._replies.deliver(done.request_key, done, keep=done.requested_by == self.requester)

    async def judge(self, request: JudgeRequested) -> JudgeCompleted | None:
        if self._publish is None:
            raise RuntimeError("BusJudgeClient used before bind()")
        fields = request.model_dump() | {"requested_by": self.requester, "idempotency_key": ""}
        sent = JudgeRequested.model_validate(fields)
        key = sent.idempotency_key
        arrived = self._replies.take(key)
        if arrived is not None:
            return arrived
        future = self._replies.expect(key)
        await self._publish(subjects.JUDGE_REQUESTED, sent)
        return await self._replies.wait(key, future, self.wait_s)
