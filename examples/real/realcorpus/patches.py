"""Pure diff work: split a pull request's diff into its test part and its fix, compare the fix
with a gold patch, and read the `index <old>..<new>` lines of a diff.

Diffs are read and written by the project's one diff model, and a path is a test file or test
configuration by its one rule (`hackaudit.shared.anatomy`); everything else is the fix.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from hackaudit.shared.anatomy import FileDiff as FileChange
from hackaudit.shared.anatomy import LineKind, Reading, read_patch
from hackaudit.shared.anatomy import is_test_path as is_test_path

_FILE_HEADER = "diff --git "
_INDEX = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)")


@dataclass(frozen=True)
class FileDiff:
    """One file's section of a git diff: its text as written and what the diff model reads in it.

    The text is kept byte for byte (the model reads `\r\n` as `\n`), so a test patch or a fix
    put together from sections is exactly what the pull request changed.
    """

    text: str
    change: FileChange

    @property
    def path(self) -> str:
        """The new path (the old one when the file is deleted)."""
        return self.change.path

    @property
    def index(self) -> tuple[str, str] | None:
        """The old and new blob ids of the file's `index` line, if it has one."""
        for line in self.change.extended:
            match = _INDEX.match(line)
            if match:
                return match.group(1), match.group(2)
        return None

    def changed_lines(self) -> Counter[str]:
        """The removed (`-`) and added (`+`) lines, as a multiset, hunk positions ignored."""
        lines: Counter[str] = Counter()
        for hunk in self.change.hunks:
            for line in hunk.lines:
                if line.kind is not LineKind.CONTEXT:
                    lines[(line.kind.value + line.text).rstrip()] += 1
        return lines


def _section(text: str) -> FileDiff:
    """A section opening with `diff --git`, which the model reads as (at least) one file."""
    return FileDiff(text, read_patch(text, Reading.APPLY).files[0])


def split_files(diff: str) -> list[FileDiff]:
    """A git diff as one `FileDiff` per file, in order (text before the first header is dropped)."""
    sections: list[list[str]] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(_FILE_HEADER):
            sections.append([line])
        elif sections:
            sections[-1].append(line)
    return [_section("".join(lines)) for lines in sections]


def join_files(files: list[FileDiff]) -> str:
    return "".join(f.text if f.text.endswith("\n") else f.text + "\n" for f in files)


DOC_FOLDERS = frozenset({"doc", "docs", "changelog"})
DOC_NAMES = frozenset({"CHANGES", "CHANGELOG", "AUTHORS", "CONTRIBUTORS", "HISTORY", "NEWS"})


def is_doc_path(path: str) -> bool:
    """Documentation or a change log: never part of a gold patch in SWE-bench Verified."""
    parts = path.split("/")
    stem = parts[-1].split(".", 1)[0].upper()
    return parts[0] in DOC_FOLDERS or stem in DOC_NAMES or parts[-1] == ".mailmap"


@dataclass(frozen=True)
class SplitDiff:
    tests: list[FileDiff]
    fix: list[FileDiff]

    @property
    def test_patch(self) -> str:
        return join_files(self.tests)

    @property
    def fix_patch(self) -> str:
        return join_files(self.fix)

    @property
    def code_fix(self) -> list[FileDiff]:
        """The fix without documentation and change logs."""
        return [f for f in self.fix if not is_doc_path(f.path)]


def split_pr_diff(diff: str) -> SplitDiff:
    """The pull request's test files and test configuration, and the rest: its fix."""
    files = split_files(diff)
    return SplitDiff(
        tests=[f for f in files if is_test_path(f.path)],
        fix=[f for f in files if not is_test_path(f.path)],
    )


@dataclass(frozen=True)
class GoldComparison:
    """How a pull request's fix differs from the gold patch, per file."""

    only_in_gold: list[str] = field(default_factory=list)
    only_in_pr: list[str] = field(default_factory=list)
    differing: dict[str, str] = field(default_factory=dict)

    @property
    def matches(self) -> bool:
        return not (self.only_in_gold or self.only_in_pr or self.differing)

    @property
    def code_matches(self) -> bool:
        """Equal but for documentation files the pull request changes and gold leaves out."""
        extra_code = [p for p in self.only_in_pr if not is_doc_path(p)]
        return not (self.only_in_gold or extra_code or self.differing)

    @property
    def docs_only_in_pr(self) -> list[str]:
        return [p for p in self.only_in_pr if is_doc_path(p)]

    def problems(self) -> list[str]:
        """The code differences (documentation the PR alone changes is not one)."""
        out = [f"gold changes {p}, the pull request does not" for p in self.only_in_gold]
        out += [
            f"the pull request also changes {p} (not in gold)"
            for p in self.only_in_pr
            if not is_doc_path(p)
        ]
        out += [f"{p}: {why}" for p, why in self.differing.items()]
        return out


def _describe(gold: Counter[str], pr: Counter[str]) -> str:
    missing = sum((gold - pr).values())
    extra = sum((pr - gold).values())
    return f"{missing} changed line(s) of gold missing, {extra} extra in the pull request"


def compare_with_gold(pr_fix: list[FileDiff], gold: str) -> GoldComparison:
    """Compare per file the changed lines of the pull request's fix with the gold patch."""
    gold_files = {f.path: f for f in split_files(gold)}
    pr_files = {f.path: f for f in pr_fix}
    differing: dict[str, str] = {}
    for path in sorted(gold_files.keys() & pr_files.keys()):
        want, got = gold_files[path].changed_lines(), pr_files[path].changed_lines()
        if want != got:
            differing[path] = _describe(want, got)
    return GoldComparison(
        only_in_gold=sorted(gold_files.keys() - pr_files.keys()),
        only_in_pr=sorted(pr_files.keys() - gold_files.keys()),
        differing=differing,
    )


def index_lines(diff: str) -> dict[str, str]:
    """Per file of a diff, the abbreviated blob id its `index` line gives for the old side."""
    out: dict[str, str] = {}
    for change in split_files(diff):
        index = change.index
        if index is not None:
            out[change.path] = index[0]
    return out


def blob_matches(abbrev: str, blob: str | None) -> bool:
    return blob is not None and len(abbrev) >= 7 and blob.startswith(abbrev)
