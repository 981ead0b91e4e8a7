"""Keeps every write a diff makes inside the repository: the checks made before a patch is applied.

A diff is refused, before any container is used, when a path it names is absolute, climbs out
with `..`, reaches into git's metadata (`.git`), holds control characters, or when it creates or
changes a symbolic link whose target lies outside the repository. The checks read a `Patch` taken
with `Reading.APPLY`, which names every path any header mentions. Symlinks that already exist in
the repository are checked again inside the container, where they can be resolved (`git apply`
itself refuses to write beyond a symlink).
"""

from __future__ import annotations

import posixpath

from hackaudit.shared.anatomy.diff import Patch

MAX_PATH_LENGTH = 4096


def path_problem(path: str) -> str | None:
    """Why `path` may not be written by a patch, or None when it stays inside the repository."""
    if not path:
        return "an empty path"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return f"a path with a control character: {path!r}"
    if len(path) > MAX_PATH_LENGTH:
        return "a path longer than 4096 characters"
    if path.startswith("/") or path.startswith("~"):
        return f"an absolute path: {path!r}"
    parts = path.split("/")
    if ".." in parts:
        return f"a path that climbs out of the repository: {path!r}"
    if any(part.lower() == ".git" for part in parts):
        return f"a path inside git metadata: {path!r}"
    return None


def symlink_problem(link_path: str, target: str) -> str | None:
    """Why a symlink at `link_path` pointing to `target` escapes the repository, if it does."""
    target = target.strip()
    if not target:
        return f"a symbolic link with an empty target at {link_path!r}"
    if target.startswith("/"):
        return f"a symbolic link to an absolute path: {link_path!r} -> {target!r}"
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(link_path), target))
    if resolved == ".." or resolved.startswith("../"):
        return f"a symbolic link out of the repository: {link_path!r} -> {target!r}"
    if resolved.split("/")[0].lower() == ".git":
        return f"a symbolic link into git metadata: {link_path!r} -> {target!r}"
    return None


def diff_problems(diff: Patch) -> list[str]:
    """Every reason to refuse a diff; empty when it may be applied."""
    problems = list(diff.problems)
    for change in diff.files:
        for raw in change.raw_paths:
            if raw.startswith("/") or ".." in raw.split("/"):
                problems.append(f"a header names {raw!r}, outside the repository")
        problems.extend(p for p in map(path_problem, change.named_paths) if p)
        if change.makes_symlink:
            targets = change.added_lines or [""]
            problems.extend(p for t in targets if (p := symlink_problem(change.path, t)))
    return list(dict.fromkeys(problems))
