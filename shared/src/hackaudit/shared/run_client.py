"""Run requests as awaitable calls over the bus, for services that need the sandbox's answer
(the attacker, the repairer): publish a `RunRequested`, await the matching `RunCompleted`.

Results reach the service through its own durable consumer on `run.completed.<service>`, so a
result that arrives while nobody waits (the caller restarted and has not asked again yet) is kept
until it is asked for. A request whose result never comes is published once more under a new
attempt number (a new idempotency key, so the broker does not drop it as a duplicate); after that
the call fails with a `TransientError`, and the message that caused it is retried later.

A call for a run whose result an earlier call already got (the same request asked for again: a
rerun) starts at the first attempt number not answered yet. Under the answered key the broker
would drop the request as a duplicate within its window, and the call would wait out `wait_s` for
a result that never comes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from hackaudit.shared import subjects
from hackaudit.shared.contracts import RunCompleted, RunRequested
from hackaudit.shared.errors import TransientError
from hackaudit.shared.replies import Replies

Publish = Callable[[str, RunRequested], Awaitable[None]]


class BusRunClient:
    def __init__(self, requester: str, *, wait_s: float = 1800.0, attempts: int = 2):
        self.requester = requester
        self.wait_s = wait_s
        self.attempts = attempts
        self._publish: Publish | None = None
        self._replies: Replies[RunCompleted] = Replies()

    def bind(self, publish: Publish) -> None:
        self._publish = publish

    async def deliver(self, done: RunCompleted) -> None:
        """Handler of the service's `run.completed.<service>` consumer."""
        self._replies.deliver(done.request_key, done)

    async def run(self, request: RunRequested) -> RunCompleted:
        if self._publish is None:
            raise RuntimeError("BusRunClient used before bind()")
        fields = request.model_dump() | {"requested_by": self.requester, "idempotency_key": ""}
        attempt = request.attempt
        sent = self._sent(fields, attempt)
        while self._replies.answered(sent.idempotency_key):
            attempt += 1
            sent = self._sent(fields, attempt)
        for tries in range(self.attempts):
            if tries:
                sent = self._sent(fields, attempt + tries)
            key = sent.idempotency_key
            arrived = self._replies.take(key)
            if arrived is not None:
                return arrived
            future = self._replies.expect(key)
            # Published again even when another call already waits for the same run (a copy of
            # a redelivered message): the broker drops the duplicate, and both calls get the
            # one result.
            await self._publish(subjects.RUN_REQUESTED, sent)
            done = await self._replies.wait(key, future, self.wait_s)
            if done is not None:
                return done
        raise TransientError(
            f"no sandbox result for {request.purpose.value} run of {request.task.instance_id} "
            f"after {self.attempts} attempts of {self.wait_s:.0f}s"
        )

    @staticmethod
    def _sent(fields: dict[str, object], attempt: int) -> RunRequested:
        return RunRequested.model_validate(fields | {"attempt": attempt})
