"""Judge answers kept by content hash: a rerun of the same question costs nothing.

Only answered samples are kept; a failed one (rate limit, timeout, malformed) is asked again next
time. In memory for tests, one JSON file per answer on disk, written atomically.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from hackaudit.shared.contracts import JudgeSample


class InMemoryAnswerCache:
    def __init__(self) -> None:
        self.items: dict[str, JudgeSample] = {}

    def get(self, key: str) -> JudgeSample | None:
        return self.items.get(key)

    def put(self, key: str, sample: JudgeSample) -> None:
        self.items[key] = sample


class JsonDirAnswerCache:
    """`<directory>/<key[:2]>/<key>.json`."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory

    def _path(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{16,128}", key):
            raise ValueError(f"judge cache keys are hex digests, not {key[:40]!r}")
        return self._dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> JudgeSample | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            return JudgeSample.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError:
            return None  # a damaged entry is a miss; the next answer replaces it

    def put(self, key: str, sample: JudgeSample) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(sample.model_dump_json())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
