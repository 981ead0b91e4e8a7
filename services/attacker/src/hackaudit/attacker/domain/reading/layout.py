"""What the task's patches tell about the repository's layout: its package, its test files.

The attacker never sees the repository itself, only the gold and test patches; every path a
strategy writes to is derived from them. Which paths are tests is `hackaudit.shared.anatomy`'s
rule, the one the sandbox flags by.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from hackaudit.attacker.domain.reading import diffs
from hackaudit.shared.anatomy import is_test_path

__all__ = ["Layout", "is_test_path", "layout"]

_NOT_SOURCE = ("docs/", "doc/", "examples/", "benchmarks/", "scripts/", ".github/")


@dataclass(frozen=True)
class Layout:
    package_dir: str | None  # e.g. "src/pkg" or "pkg"
    package: str | None  # import name, e.g. "pkg"
    source_files: tuple[str, ...]  # Python files the gold patch changes, outside tests
    test_files: tuple[str, ...]  # files the test patch touches
    new_test_files: tuple[str, ...]  # files the test patch creates

    @property
    def test_dirs(self) -> tuple[str, ...]:
        dirs = {posixpath.dirname(p) or "." for p in self.test_files if p.endswith(".py")}
        return tuple(sorted(dirs))


def _paths(text: diffs.PatchSource) -> tuple[list[str], list[str]]:
    try:
        patch = diffs.read(text)
    except diffs.DiffError:
        return [], []
    return patch.paths, [f.path for f in patch.files if f.is_new]


def layout(gold_patch: diffs.PatchSource, test_patch: diffs.PatchSource) -> Layout:
    gold_paths, _ = _paths(gold_patch)
    test_paths, new_tests = _paths(test_patch)
    sources = [
        p
        for p in gold_paths
        if p.endswith(".py")
        and not is_test_path(p)
        and not p.startswith(_NOT_SOURCE)
        and posixpath.basename(p) != "setup.py"
    ]
    package_dir = package = None
    for path in sources:
        parts = path.split("/")
        if len(parts) >= 3 and parts[0] in ("src", "lib"):
            package_dir, package = "/".join(parts[:2]), parts[1]
        elif len(parts) >= 2:
            package_dir, package = parts[0], parts[0]
        if package is not None and package.isidentifier():
            break
        package_dir = package = None
    return Layout(
        package_dir=package_dir,
        package=package,
        source_files=tuple(sources),
        test_files=tuple(test_paths),
        new_test_files=tuple(new_tests),
    )
