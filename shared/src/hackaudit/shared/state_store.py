"""Where a service keeps a piece of resumable state between messages: one document per key.

The attacker keeps an attack's round state, the repairer a repair's journal; each is a pydantic
model with a `key` field, loaded whole, changed, and saved whole, so a restarted service resumes
where it stopped. `JsonFileStateStore` keeps one `<key>.json` per state in a folder, written
atomically; `InMemoryStateStore` is its fake for tests and one-process runs, and stores the
serialised text too, so a test exercises the same round trip. Both satisfy a service's store
port (`load(key) -> state | None`, `save(state)`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Generic, Protocol, Self, TypeVar

from hackaudit.shared.atomic_file import write_atomically


class KeyedModel(Protocol):
    """What a stored state must be: a pydantic model with a `key` field."""

    @property
    def key(self) -> str: ...

    @classmethod
    def model_validate_json(cls, json_data: str, /) -> Self: ...

    def model_dump_json(self, *, indent: int | None = None) -> str: ...


S = TypeVar("S", bound=KeyedModel)


class InMemoryStateStore(Generic[S]):
    def __init__(self, model: type[S]) -> None:
        self._model = model
        self._states: dict[str, str] = {}
        self.saves = 0

    def load(self, key: str) -> S | None:
        raw = self._states.get(key)
        return self._model.model_validate_json(raw) if raw is not None else None

    def save(self, state: S) -> None:
        self._states[state.key] = state.model_dump_json()
        self.saves += 1


class JsonFileStateStore(Generic[S]):
    """One `<key>.json` per state in `directory` (characters unsafe in a file name become `_`);
    `indent` as in `model_dump_json`."""

    def __init__(self, model: type[S], directory: Path, *, indent: int | None = None) -> None:
        self._model = model
        self._dir = directory
        self._indent = indent

    def _path(self, key: str) -> Path:
        return self._dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', key)}.json"

    def load(self, key: str) -> S | None:
        path = self._path(key)
        if not path.exists():
            return None
        return self._model.model_validate_json(path.read_text(encoding="utf-8"))

    def save(self, state: S) -> None:
        write_atomically(self._path(state.key), state.model_dump_json(indent=self._indent))
