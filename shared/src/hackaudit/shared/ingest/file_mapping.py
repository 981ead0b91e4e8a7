"""Turns file-replacement mappings into the git-style unified diffs the `Task` contract carries.

Some task formats state a patch as "these files now read like this" instead of a diff. The
verifier applies diffs, so each changed file becomes one `diff --git` section, generated with
difflib: a new file diffs against /dev/null, a deleted one against nothing, and a last line
without a newline is marked the way git marks it, so `git apply` restores the exact bytes.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

_NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass(frozen=True)
class FileChange:
    """One file's content before and after; None means the file does not exist on that side."""

    path: str
    old: str | None
    new: str | None


class UnsafePath(ValueError):
    """A mapping named a path outside the repository (absolute, `..`, or empty)."""


def checked_path(path: str) -> str:
    """The path as a clean repository-relative POSIX path, or UnsafePath."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if not path or pure.is_absolute() or ".." in pure.parts or str(pure) in ("", "."):
        raise UnsafePath(f"{path!r} is not a path inside the repository")
    return str(pure)


def unified_diff(changes: Iterable[FileChange]) -> str:
    """A patch for every change whose two sides differ, in path order."""
    sections = [_file_diff(change) for change in sorted(changes, key=lambda c: c.path)]
    return "".join(section for section in sections if section)


def _file_diff(change: FileChange) -> str:
    if change.old == change.new:
        return ""
    path = checked_path(change.path)
    header = [f"diff --git a/{path} b/{path}\n"]
    if change.old is None:
        header.append("new file mode 100644\n")
    elif change.new is None:
        header.append("deleted file mode 100644\n")
    old_lines = (change.old or "").splitlines(keepends=True)
    new_lines = (change.new or "").splitlines(keepends=True)
    if not old_lines and not new_lines:
        # An empty file created or removed: git states it with the header alone.
        return "".join(header)
    body = difflib.unified_diff(
        old_lines,
        new_lines,
        fromfile="/dev/null" if change.old is None else f"a/{path}",
        tofile="/dev/null" if change.new is None else f"b/{path}",
        lineterm="\n",
    )
    out = header
    for line in body:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + _NO_NEWLINE)
    return "".join(out)
