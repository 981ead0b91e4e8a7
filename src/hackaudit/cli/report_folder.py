"""The report folder (`--out`) is replaced whole: a run's files are written into a fresh folder
beside it and moved into place at the end, so a report never mixes with an older run's files
(a stale `dataset/` split, evidence of tasks no longer audited) and a run that fails half-way
leaves the old report as it was.

Only a folder that is empty or holds a hackaudit report (its `report.json`) is ever replaced:
anything else named by `--out` is refused before the audit starts."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

MARKER = "report.json"


class FolderRefused(ValueError):
    """`--out` names something that is not a report folder: it is never overwritten."""


def check(out: Path) -> None:
    """Raises `FolderRefused` unless `out` may be replaced: missing, an empty folder, or a
    folder with a hackaudit report in it."""
    if not out.exists():
        return
    if not out.is_dir():
        raise FolderRefused(f"--out {out}: not a folder")
    if any(out.iterdir()) and not (out / MARKER).is_file():
        raise FolderRefused(
            f"--out {out}: the folder holds files but no hackaudit report ({MARKER}); "
            "name an empty or new folder, or an earlier report's"
        )


@contextlib.contextmanager
def replaced(out: Path) -> Iterator[Path]:
    """A fresh folder to write the report into; on leaving without an error it takes the place
    of `out` (the old folder is removed), on an error it is removed and `out` stays as it was."""
    check(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    staged.chmod(0o755)  # mkdtemp makes it private; a report is read by others
    try:
        yield staged
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        out.rename(old)
    staged.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
