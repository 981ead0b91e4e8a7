"""Run logs as files under the artifacts directory, or in memory for tests."""

from __future__ import annotations

import os
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_key(key: str) -> str:
    """A relative path made only of safe segments (no `..`, no absolute parts)."""
    parts = [_UNSAFE.sub("_", part).strip(".") or "_" for part in key.split("/") if part]
    return "/".join(parts) or "_"


class FileArtifactStore:
    """Writes each log to `<root>/<key>` atomically; the same key overwrites (redelivery)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, key: str, text: str) -> str:
        path = self.root / safe_key(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(text, encoding="utf-8", errors="replace")
        temporary.replace(path)
        return str(path)


class MemoryArtifactStore:
    def __init__(self) -> None:
        self.logs: dict[str, str] = {}

    def write(self, key: str, text: str) -> str:
        location = f"memory://{safe_key(key)}"
        self.logs[location] = text
        return location
