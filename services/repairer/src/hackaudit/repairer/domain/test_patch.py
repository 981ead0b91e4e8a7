"""Editing a task's test patch without the repository: new tests go inside the patch's own hunks.

The repairer sees only the test patch (a unified diff, read into the shared model of
`hackaudit.shared.anatomy`), never the test file as a whole, so a new test is inserted where the
diff itself shows enough of the file to be sure of the place: right after a test function the
patch adds or shows, before the next line at that function's level (or at the end of a hunk that
is the whole of a new file). The new test takes the indentation of that function, so a method
lands in the same class and a module-level function stays one. Hunk headers are recomputed when
the patch is written out, so the later hunks of the file move to match. Without such a place, a
new test file is added beside the first test file instead.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, replace

from hackaudit.shared.anatomy import Hunk, Line, LineKind, Patch, emit_patch, read_patch
from hackaudit.shared.anatomy import new_file as new_file_diff

_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")
_CLASS = re.compile(r"^(\s*)class\s+(\w+)\s*(\(([^)]*)\))?\s*:")

TestPatch = Patch  # a task's test patch, in the shared diff model


def parse(text: str) -> TestPatch:
    """The patch's files and hunks, read as `git apply` reads them (never raises)."""
    return read_patch(text)


def emit(patch: TestPatch) -> str:
    """The patch as text, hunk headers recomputed, `index` lines kept (binary files need them)."""
    return emit_patch(patch, with_index=True) or "\n"


def paths(patch: TestPatch) -> tuple[str, ...]:
    """The files the patch leaves behind (deleted ones left out)."""
    return tuple(f.new_path for f in patch.files if f.new_path)


def new_file(path: str, text: str) -> str:
    """A diff that creates `path` holding `text`."""
    return emit_patch(Patch(files=(new_file_diff(path, text),)))


def whole_new_file(hunk: Hunk) -> bool:
    return hunk.old_start == 0 and hunk.old_len == 0


# --- where a new test can go ----------------------------------------------------------------------


@dataclass(frozen=True)
class Anchor:
    """A place inside the patch where a test function may be inserted."""

    file: str
    hunk: int
    line: int  # index into the hunk's lines: insert before it (len(lines): at the end)
    indent: str  # of the test function next to it
    method: bool  # inside a class (takes `self`)
    unittest: bool  # that class is a unittest TestCase (asserts with self.assert*)
    near: str  # the test function it follows


def _new_side(hunk: Hunk) -> list[tuple[int, str]]:
    """(index in hunk.lines, text) of every line on the hunk's new side."""
    return [(i, ln.text) for i, ln in enumerate(hunk.lines) if ln.kind is not LineKind.REMOVED]


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _enclosing_class(hunk: Hunk, at: int, indent: int) -> str:
    """The header line of the class around new-side line `at` ('' when none is shown)."""
    side = _new_side(hunk)
    for _, text in reversed([s for s in side if s[0] < at]):
        match = _CLASS.match(text)
        if match and len(match.group(1)) < indent:
            return text
    match = _CLASS.match(hunk.section.strip())
    return hunk.section.strip() if match else ""


def _is_unittest(class_line: str, hunk: Hunk, def_at: int) -> bool:
    if "TestCase" in class_line:
        return True
    # The class line is outside the hunk: the function's own body says (self.assert...).
    body = [text for i, text in _new_side(hunk) if i > def_at][:40]
    return any("self.assert" in line for line in body)


def anchors(patch: TestPatch, names: tuple[str, ...]) -> list[Anchor]:
    """Every safe place after one of the test functions `names` (in that order), then after any
    other test function the patch shows."""
    found: list[tuple[int, Anchor]] = []
    for f in patch.files:
        if not f.path.endswith(".py"):
            continue
        for h_index, hunk in enumerate(f.hunks):
            if any(ln.no_newline for ln in hunk.lines):
                continue
            side = _new_side(hunk)
            for pos, (i, text) in enumerate(side):
                match = _DEF.match(text)
                if not match or not match.group(2).startswith("test"):
                    continue
                level = len(match.group(1))
                end = _end_of_function(side, pos, level)
                if end is None:
                    if not whole_new_file(hunk):
                        continue
                    end = len(hunk.lines)
                class_line = _enclosing_class(hunk, i, level) if level else ""
                anchor = Anchor(
                    file=f.path,
                    hunk=h_index,
                    line=end,
                    indent=match.group(1),
                    method=level > 0,
                    unittest=level > 0 and _is_unittest(class_line, hunk, i),
                    near=match.group(2),
                )
                rank = names.index(anchor.near) if anchor.near in names else len(names)
                found.append((rank, anchor))
    return [a for _, a in sorted(found, key=lambda pair: pair[0])]


def _end_of_function(side: list[tuple[int, str]], pos: int, level: int) -> int | None:
    """Index (in hunk lines) of the first line after the function at side[pos], or None when
    the hunk ends inside it. The insertion goes before the blank lines that close it off."""
    last_body = side[pos][0]
    for i, text in side[pos + 1 :]:
        if not text.strip():
            continue
        if _indent(text) <= level and not text.lstrip().startswith((")", "]", "}")):
            return last_body + 1
        last_body = i
    return None


def insert(patch: TestPatch, anchor: Anchor, source: str) -> TestPatch:
    """The patch with `source` (a function at column 0) inserted at `anchor`, indented to it."""
    body = [anchor.indent + ln if ln.strip() else "" for ln in source.rstrip("\n").split("\n")]
    gap = [""] if anchor.method else ["", ""]
    added = tuple(Line(LineKind.ADDED, ln) for ln in gap + body)
    files = []
    for f in patch.files:
        if f.path != anchor.file:
            files.append(f)
            continue
        hunks = list(f.hunks)
        h = hunks[anchor.hunk]
        hunks[anchor.hunk] = replace(
            h, lines=h.lines[: anchor.line] + added + h.lines[anchor.line :]
        )
        files.append(replace(f, hunks=tuple(hunks)))
    return Patch(files=tuple(files))


@dataclass(frozen=True)
class ShownFunction:
    """A function the new side of a hunk shows from its `def` line on."""

    name: str
    lines: tuple[str, ...]  # the `def` line and every line after it up to the function's end
    closed: bool  # a line at the function's level follows it: the hunk shows its end

    def source(self) -> str:
        """The function's lines at column 0."""
        return textwrap.dedent("\n".join(self.lines))


def shown_functions(hunk: Hunk) -> Iterator[ShownFunction]:
    """Every function whose `def` line is on the hunk's new side, in order."""
    side = hunk.new_side()
    for pos, text in enumerate(side):
        match = _DEF.match(text)
        if not match:
            continue
        level = len(match.group(1))
        body = [text]
        closed = False
        for line in side[pos + 1 :]:
            if line.strip() and _indent(line) <= level:
                closed = True
                break
            body.append(line)
        yield ShownFunction(match.group(2), tuple(body), closed)


def added_functions(patch: TestPatch) -> set[str]:
    """Names of the functions the patch adds or shows (to keep new names unique)."""
    names = set()
    for f in patch.files:
        for h in f.hunks:
            for _, text in _new_side(h):
                match = _DEF.match(text)
                if match:
                    names.add(match.group(2))
    return names
