"""Editing a task's test patch without the repository: new tests go inside the patch's own hunks.

The repairer sees only the test patch (a unified diff), never the test file as a whole, so a new
test is inserted where the diff itself shows enough of the file to be sure of the place: right
after a test function the patch adds or shows, before the next line at that function's level
(or at the end of a hunk that is the whole of a new file). The new test takes the indentation of
that function, so a method lands in the same class and a module-level function stays one. The
hunk's line counts, and the new-side starts of the file's later hunks, are moved to match.
Without such a place, a new test file is added beside the first test file instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")
_CLASS = re.compile(r"^(\s*)class\s+(\w+)\s*(\(([^)]*)\))?\s*:")
NO_NEWLINE = "\\ No newline at end of file"


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    section: str
    lines: tuple[str, ...]  # each with its marker: " ", "+", "-" (or the no-newline note)

    def header(self) -> str:
        return (
            f"@@ -{self.old_start},{self.old_len} +{self.new_start},{self.new_len} @@{self.section}"
        )

    @property
    def whole_new_file(self) -> bool:
        return self.old_start == 0 and self.old_len == 0


@dataclass(frozen=True)
class FilePatch:
    path: str  # the new side's path ("" when the file is deleted)
    header: tuple[str, ...]  # "diff --git", "index", "---", "+++" ... as given
    hunks: tuple[Hunk, ...]


@dataclass(frozen=True)
class TestPatch:
    __test__ = False  # a diff model, not a test class

    files: tuple[FilePatch, ...]

    def file(self, path: str) -> FilePatch | None:
        return next((f for f in self.files if f.path == path), None)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files if f.path)


def _path_of(header: list[str]) -> str:
    for line in header:
        if line.startswith("+++ "):
            target = line[4:].split("\t", 1)[0].strip()
            return "" if target == "/dev/null" else target.removeprefix("b/")
    for line in header:
        if line.startswith("diff --git "):
            return line.rsplit(" b/", 1)[-1].strip()
    return ""


def parse(text: str) -> TestPatch:
    """The patch's files and hunks (text outside any file section is dropped)."""
    files: list[FilePatch] = []
    header: list[str] = []
    hunks: list[Hunk] = []
    current: list[str] | None = None
    start: re.Match[str] | None = None

    def close_hunk() -> None:
        nonlocal current, start
        if current is not None and start is not None:
            hunks.append(_hunk(start, current))
        current, start = None, None

    def close_file() -> None:
        nonlocal header, hunks
        close_hunk()
        if header:
            files.append(FilePatch(_path_of(header), tuple(header), tuple(hunks)))
        header, hunks = [], []

    old_left = new_left = 0
    for line in text.splitlines():
        if current is not None and (old_left > 0 or new_left > 0 or line == NO_NEWLINE):
            current.append(line)
            if line.startswith("-"):
                old_left -= 1
            elif line.startswith("+"):
                new_left -= 1
            elif line != NO_NEWLINE:
                old_left, new_left = old_left - 1, new_left - 1
            continue
        match = _HUNK.match(line)
        if match and header:
            close_hunk()
            start, current = match, []
            old_left = int(match.group(2) or 1)
            new_left = int(match.group(4) or 1)
            continue
        if line.startswith("diff --git ") or (line.startswith("--- ") and current is not None):
            close_file()
        close_hunk()
        header.append(line)
    close_file()
    return TestPatch(tuple(files))


def _hunk(match: re.Match[str], lines: list[str]) -> Hunk:
    return Hunk(
        old_start=int(match.group(1)),
        old_len=int(match.group(2) or 1),
        new_start=int(match.group(3)),
        new_len=int(match.group(4) or 1),
        section=match.group(5),
        lines=tuple(lines),
    )


def emit(patch: TestPatch) -> str:
    out: list[str] = []
    for f in patch.files:
        out += f.header
        for h in f.hunks:
            out.append(h.header())
            out += h.lines
    return "\n".join(out) + "\n"


def new_file(path: str, text: str) -> str:
    """A diff that creates `path` holding `text`."""
    lines = text.splitlines()
    body = "\n".join(f"+{line}" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}\n"
    )


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
    return [(i, ln[1:]) for i, ln in enumerate(hunk.lines) if ln[:1] in (" ", "+")]


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
            if any(ln == NO_NEWLINE for ln in hunk.lines):
                continue
            side = _new_side(hunk)
            for pos, (i, text) in enumerate(side):
                match = _DEF.match(text)
                if not match or not match.group(2).startswith("test"):
                    continue
                level = len(match.group(1))
                end = _end_of_function(side, pos, level)
                if end is None:
                    if not hunk.whole_new_file:
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
    lines = [anchor.indent + ln if ln.strip() else "" for ln in source.rstrip("\n").split("\n")]
    gap = [""] if anchor.method else ["", ""]
    added = [f"+{ln}" for ln in gap + lines]
    files = []
    for f in patch.files:
        if f.path != anchor.file:
            files.append(f)
            continue
        hunks = list(f.hunks)
        h = hunks[anchor.hunk]
        new_lines = h.lines[: anchor.line] + tuple(added) + h.lines[anchor.line :]
        hunks[anchor.hunk] = replace(h, lines=new_lines, new_len=h.new_len + len(added))
        for k in range(anchor.hunk + 1, len(hunks)):
            hunks[k] = replace(hunks[k], new_start=hunks[k].new_start + len(added))
        files.append(replace(f, hunks=tuple(hunks)))
    return TestPatch(tuple(files))


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
