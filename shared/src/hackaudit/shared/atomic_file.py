"""Write a file so that a reader sees either the old text or the new, never half of either.

The text goes to a temporary file in the same folder, which is then renamed over the target: a
crash mid-write leaves the previous file intact and at most a stray `*.tmp` beside it. The state
stores and the content-addressed caches write through this.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8), creating its folder if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
