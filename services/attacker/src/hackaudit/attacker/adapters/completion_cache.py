"""Model completions kept by the content hash of their prompt (model, prompt text, parameters).

The same prompt is never paid for twice: not on a retried message, not after a restart, not
when a task is audited again. In memory for tests, one JSON file per completion on disk.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from hackaudit.attacker.domain.ports import Completion


class InMemoryCompletionCache:
    def __init__(self) -> None:
        self._items: dict[str, Completion] = {}

    def get(self, key: str) -> Completion | None:
        return self._items.get(key)

    def put(self, key: str, completion: Completion) -> None:
        self._items[key] = completion

    def __len__(self) -> int:
        return len(self._items)


class JsonDirCompletionCache:
    """`<directory>/<key[:2]>/<key>.json`, written atomically."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory

    def _path(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{16,128}", key):
            raise ValueError("cache keys are hex digests")
        return self._dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            return Completion.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError:
            return None  # a damaged entry is a miss, and the next put repairs it

    def put(self, key: str, completion: Completion) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(completion.model_dump_json())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
