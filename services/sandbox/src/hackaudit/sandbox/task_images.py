"""Gives each run's task the image it runs in, building the image first when the task says how.

Tasks mined and submitted continuously arrive with an `environment` (how to build the image)
and often no `image`. Before running such a task the sandbox asks its `ImageSource` (the
environment builder) for the image. The tag is a hash of the build's inputs, so it is the same
for every run of the task and for every worker:

- within one worker process, each set of build inputs is resolved once: concurrent runs of the
  same task wait on one lock for one build, and later runs (attack confirmations, reference runs)
  take the remembered tag without any lookup;
- across worker processes, a second worker's builder finds the tag already present and answers
  from Docker's image list (a cache hit) instead of building again.

The build blocks for up to minutes, so it runs in a worker thread: the event loop keeps serving
other messages and sending in-progress acks meanwhile. Builds in one process run one at a time
(they share the host wheelhouse). A failed build is remembered for `retry_after_s`, so the runs of
a broken task do not rebuild it one after another; each of them is reported as an infrastructure
error naming the task and the build's reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from hackaudit.sandbox.adapters.ports import ImageSource
from hackaudit.shared.contracts import Task
from hackaudit.shared.logs import get_logger

log = get_logger(__name__)


@dataclass(frozen=True)
class NoImage:
    """Why a task has no image to run in."""

    reason: str


@dataclass(frozen=True)
class _Failed:
    reason: str
    at: float


def needs_build(task: Task) -> bool:
    """Whether the task's image comes from the builder (it says how to build it, or has none)."""
    return task.environment is not None or not task.image


def build_key(task: Task) -> str:
    """What the task's image is made of, as far as the task says: equal keys share one image."""
    material = "\0".join(
        [
            task.repo,
            task.base_commit,
            task.environment.model_dump_json() if task.environment is not None else "",
            (task.image or "") if task.environment is None else "",
        ]
    )
    return hashlib.sha256(material.encode()).hexdigest()


class TaskImages:
    """Resolves and remembers task images for one worker process."""

    def __init__(
        self,
        source: Callable[[], ImageSource],
        *,
        retry_after_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._make_source = source
        self._source: ImageSource | None = None
        self._retry_after_s = retry_after_s
        self._clock = clock
        self._tags: dict[str, str] = {}
        self._failed: dict[str, _Failed] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._building = asyncio.Lock()

    async def ready(self, task: Task) -> Task | NoImage:
        """The task with `image` set to the image it runs in, or why it has none."""
        if not needs_build(task):
            return task
        key = build_key(task)
        tag = self._tags.get(key)
        if tag is None:
            lock = self._locks.setdefault(key, asyncio.Lock())
            async with lock:
                outcome = self._known(key) or await self._resolve(key, task)
            if isinstance(outcome, NoImage):
                return outcome
            tag = outcome
        return task if task.image == tag else task.model_copy(update={"image": tag})

    def _known(self, key: str) -> str | NoImage | None:
        if key in self._tags:
            return self._tags[key]
        failed = self._failed.get(key)
        if failed is not None and self._clock() - failed.at < self._retry_after_s:
            return NoImage(failed.reason)
        return None

    async def _resolve(self, key: str, task: Task) -> str | NoImage:
        started = self._clock()
        async with self._building:
            try:
                tag, how = await asyncio.to_thread(self._image_for, task)
            except Exception as exc:  # any fault of the build is this task's infra error
                reason = f"no image for task {task.instance_id}: {exc}".strip()
                self._failed[key] = _Failed(reason, self._clock())
                self._source = None  # a fresh builder next time (it keeps some failures)
                log.warning(
                    "sandbox.image_failed",
                    instance_id=task.instance_id,
                    error=type(exc).__name__,
                    reason=str(exc)[:300],
                )
                return NoImage(reason)
        self._tags[key] = tag
        self._failed.pop(key, None)
        log.info(
            "sandbox.image",
            instance_id=task.instance_id,
            tag=tag,
            status=str(how),
            seconds=round(self._clock() - started, 3),
        )
        return tag

    def _image_for(self, task: Task) -> tuple[str, object]:
        if self._source is None:
            self._source = self._make_source()
        return self._source.image_for(task)
