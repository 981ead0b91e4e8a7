"""Keeps a few started, never-used containers per image ready, so a run need not wait for one.

Every container serves exactly one run and is then removed; the pool only moves the cost of
creating and starting it (a fifth of a second or more) off the run's critical path, by refilling
in the background while runs execute. Isolation between runs is unchanged: no container is ever
reused.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

log = structlog.get_logger(__name__)

Create = Callable[[], Awaitable[str]]
Remove = Callable[[str], Awaitable[None]]


class ContainerPool:
    """Idle containers of one image: `acquire` takes one (or makes one), `refill` tops up."""

    def __init__(self, image: str, size: int, create: Create, remove: Remove) -> None:
        self.image = image
        self.size = size
        self._create = create
        self._remove = remove
        self._idle: asyncio.Queue[str | None] = asyncio.Queue()
        self._filling = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def idle(self) -> int:
        return self._idle.qsize()

    async def acquire(self) -> str:
        """A started container no run has used: an idle one, the next one being made, or a new
        one made on the spot when none is on its way."""
        if self._idle.qsize() or self._filling:
            container = await self._idle.get()
            self.refill()
            if container is not None:
                return container
        else:
            self.refill()
        return await self._create()

    def refill(self) -> None:
        """Start background creations until `size` containers are idle or on their way."""
        while not self._closed and self.idle + self._filling < self.size:
            self._filling += 1
            self._spawn(self._fill_one())

    def discard(self, container: str) -> None:
        """Remove a used container in the background."""
        self._spawn(self._remove(container))

    async def _fill_one(self) -> None:
        try:
            container = await self._create()
        except Exception as exc:  # a waiting acquire then makes its own container
            log.warning("sandbox.pool.fill_failed", image=self.image, error=str(exc)[:200])
            self._filling -= 1
            self._idle.put_nowait(None)
            return
        self._filling -= 1
        if self._closed:
            await self._remove(container)
        else:
            self._idle.put_nowait(container)

    def _spawn(self, work: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Remove every idle container and wait for pending creations and removals."""
        self._closed = True
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        idle = []
        while not self._idle.empty():
            container = self._idle.get_nowait()
            if container is not None:
                idle.append(container)
        with contextlib.suppress(Exception):
            await asyncio.gather(*(self._remove(c) for c in idle), return_exceptions=True)
