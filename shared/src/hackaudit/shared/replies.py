"""Answers matched to the requests that asked for them, for a service that awaits a reply over
the bus (`run_client` for the sandbox's results, the repairer's judge client for verdicts).

A reply reaches the service through its own durable consumer and names the key of its request.
When a call waits for that key, the reply completes the call; otherwise (the caller restarted
and has not asked again yet) it is kept until it is asked for, if the caller wants it kept.
The keys answered lately are remembered (`answered`): a request published again under one of them
is a duplicate the broker drops within its window, so no reply would ever come for it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Generic, TypeVar

Reply = TypeVar("Reply")

# Keys remembered as answered (the oldest forgotten first): far more than the requests a service
# makes within the broker's duplicate window.
ANSWERED_KEYS = 100_000


class Replies(Generic[Reply]):
    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[Reply]] = {}
        self._arrived: dict[str, Reply] = {}
        self._answered: OrderedDict[str, None] = OrderedDict()

    def answered(self, key: str) -> bool:
        """Whether a call got the reply to `key` already (from `deliver` or `take`)."""
        return key in self._answered

    def _mark_answered(self, key: str) -> None:
        self._answered[key] = None
        self._answered.move_to_end(key)
        if len(self._answered) > ANSWERED_KEYS:
            self._answered.popitem(last=False)

    def deliver(self, key: str, reply: Reply, *, keep: bool = True) -> None:
        """Completes the call waiting for `key`; with none, keeps `reply` when `keep`."""
        future = self._waiting.pop(key, None)
        if future is not None and not future.done():
            future.set_result(reply)
            self._mark_answered(key)
        elif keep:
            self._arrived[key] = reply

    def take(self, key: str) -> Reply | None:
        """The reply that arrived for `key` while no call waited (forgotten once taken)."""
        reply = self._arrived.pop(key, None)
        if reply is not None:
            self._mark_answered(key)
        return reply

    def expect(self, key: str) -> asyncio.Future[Reply]:
        """The future of the reply to `key`: the one a call already waits on, or a new one."""
        future = self._waiting.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._waiting[key] = future
        return future

    async def wait(self, key: str, future: asyncio.Future[Reply], timeout_s: float) -> Reply | None:
        """The reply, or None when it has not come within `timeout_s` (no longer waited for)."""
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout=timeout_s)
        except TimeoutError:
            self._waiting.pop(key, None)
            return None
