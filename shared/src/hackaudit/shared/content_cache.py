"""Answers kept by the content hash of the question that produced them, so none is paid twice.

The attacker keeps model completions by their prompt's hash, the judge answered samples by theirs:
not on a retried message, not after a restart, not when a task is audited again.
`JsonDirCache` keeps one `<directory>/<key[:2]>/<key>.json` per entry, written atomically; a
damaged entry reads as a miss, and the next `put` repairs it. `InMemoryCache` is its fake. Keys
are hex digests; anything else is refused, so a key can never name a path outside the folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from hackaudit.shared.atomic_file import write_atomically

V = TypeVar("V", bound=BaseModel)

_HEX_DIGEST = re.compile(r"[0-9a-f]{16,128}")


class InMemoryCache(Generic[V]):
    def __init__(self) -> None:
        self.items: dict[str, V] = {}

    def get(self, key: str) -> V | None:
        return self.items.get(key)

    def put(self, key: str, value: V) -> None:
        self.items[key] = value

    def __len__(self) -> int:
        return len(self.items)


class JsonDirCache(Generic[V]):
    """`<directory>/<key[:2]>/<key>.json`, each holding one `model`."""

    def __init__(self, model: type[V], directory: Path) -> None:
        self._model = model
        self._dir = directory

    def _path(self, key: str) -> Path:
        if not _HEX_DIGEST.fullmatch(key):
            raise ValueError(f"cache keys are hex digests, not {key[:40]!r}")
        return self._dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> V | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            return self._model.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError:
            return None  # a damaged entry is a miss, and the next put repairs it

    def put(self, key: str, value: V) -> None:
        write_atomically(self._path(key), value.model_dump_json())
