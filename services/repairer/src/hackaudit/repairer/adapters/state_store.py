"""Where repair journals live between steps: in memory (tests, one process) or as JSON files.

The file store writes each state to a temporary file and renames it over the old one, so a
crash mid-write leaves the previous state intact rather than a torn file.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from hackaudit.repairer.domain.ports import RepairState


class InMemoryRepairStateStore:
    def __init__(self) -> None:
        self._states: dict[str, str] = {}
        self.saves = 0

    def load(self, key: str) -> RepairState | None:
        raw = self._states.get(key)
        return RepairState.model_validate_json(raw) if raw is not None else None

    def save(self, state: RepairState) -> None:
        # Stored serialised, so a test exercises the same round trip as the file store.
        self._states[state.key] = state.model_dump_json()
        self.saves += 1


class JsonFileRepairStateStore:
    """One `<key>.json` per repair in `directory`."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory

    def _path(self, key: str) -> Path:
        return self._dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', key)}.json"

    def load(self, key: str) -> RepairState | None:
        path = self._path(key)
        if not path.exists():
            return None
        return RepairState.model_validate_json(path.read_text(encoding="utf-8"))

    def save(self, state: RepairState) -> None:
        self._dir.mkdir(parents=True, exist_ok=True)
        path = self._path(state.key)
        fd, tmp = tempfile.mkstemp(dir=self._dir, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(state.model_dump_json())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
