"""Reference-run durations, kept in memory (per sandbox process)."""

from __future__ import annotations

from collections import defaultdict, deque


class MemoryTimingStore:
    """The last `keep` durations per (task, kind); sizing uses the longest of them."""

    def __init__(self, keep: int = 5) -> None:
        self._durations: defaultdict[tuple[str, str], deque[float]] = defaultdict(
            lambda: deque(maxlen=keep)
        )

    def record(self, instance_id: str, kind: str, duration_s: float) -> None:
        self._durations[(instance_id, kind)].append(duration_s)

    def duration(self, instance_id: str, kind: str) -> float | None:
        values = self._durations.get((instance_id, kind))
        return max(values) if values else None
