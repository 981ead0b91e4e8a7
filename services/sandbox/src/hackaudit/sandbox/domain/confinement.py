"""Keeps every write a patch makes inside the repository.

A candidate is refused, before any container is used, when a path it names is absolute, climbs
out with `..`, reaches into git's metadata (`.git`), holds control characters, or when it creates
or changes a symbolic link whose target lies outside the repository. The checks of a diff belong
to the diff model (`hackaudit.shared.anatomy.checks`); a file mapping's are made here. Symlinks
that already exist in the repository are checked again inside the container, where they can be
resolved (file mappings are resolved with `realpath`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from hackaudit.shared.anatomy import diff_problems, path_problem, symlink_problem

__all__ = ["diff_problems", "mapping_problems", "path_problem", "symlink_problem"]


def mapping_problems(files: Mapping[str, str | None]) -> list[str]:
    """Every reason to refuse a file-replacement mapping; empty when it may be applied."""
    problems = [p for p in map(path_problem, files) if p]
    normalised = [posixpath.normpath(path) for path in files]
    if len(set(normalised)) != len(normalised):
        problems.append("a mapping that names one file twice")
    return problems
