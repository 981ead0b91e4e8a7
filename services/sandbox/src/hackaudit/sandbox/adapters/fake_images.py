"""An in-memory `ImageSource`: answers a tag per task after an optional (blocking) delay, or
fails with a given reason, and counts the builds it was asked for. Tests of the image step use
it instead of Docker."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from hackaudit.shared.contracts import Task


class FakeBuildError(Exception):
    """The reason a fake build fails with."""


@dataclass
class FakeImageSource:
    tag_prefix: str = "hackaudit-env/fake"
    build_s: float = 0.0
    fail_with: str | None = None
    calls: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def image_for(self, task: Task) -> tuple[str, object]:
        with self._lock:
            self.calls.append(task.instance_id)
        if self.build_s:
            time.sleep(self.build_s)  # blocks, as a real build does
        if self.fail_with is not None:
            raise FakeBuildError(self.fail_with)
        return f"{self.tag_prefix}:{task.base_commit[:12]}", "built"
