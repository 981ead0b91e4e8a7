"""One model of a unified diff — files, hunks, added/removed/context lines — read once, used by all.

A task's patches, a model's candidate and a repaired test patch are all unified diffs. They are
read here, by one parser with three modes, and every service works on the resulting `Patch`:

* `Reading.STRICT` — a well-formed diff (a task's own patches): hunk bodies are counted by their
  headers and any defect raises `DiffError`.
* `Reading.LENIENT` — a diff a model wrote: header counts are ignored (models miscount them), a
  hunk body runs to the next header, and the diff is re-emitted with correct headers.
* `Reading.APPLY` — what `git apply` will be handed in the sandbox: never raises; structural
  defects are listed in `Patch.problems`, every header that names a file (`diff --git`,
  `---`/`+++`, renames and copies, anywhere in the text) is read, paths are taken the way
  `git apply -p1` takes them, and hunk bodies are counted, never interpreted, so a body line that
  looks like a header is never mistaken for one. `checks.diff_problems` judges the result.

Why not the `unidiff` package: it raises on a hunk whose body does not match its header
(`UnidiffParseError: Hunk is shorter than expected`), which is how models write diffs; it
re-emits a hunk with the counts it read rather than ones recomputed after an edit; and the
sandbox's confinement checks must read every header that names a path (renames and copies,
C-quoted paths, headers after a hunk) by rules kept here, not by a library's choices.

Emitting always recomputes hunk headers from the lines, so an edited diff stays well formed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum

from hackaudit.shared.anatomy.paths import (
    DEV_NULL,
    git_header_paths,
    strip_git_prefix,
    strip_one_component,
    unquote_path,
)

NO_NEWLINE = "\\ No newline at end of file"
SYMLINK_MODE = "120000"

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_LOOSE_HUNK_START = re.compile(r"^@@ -(\d+)")
_GIT_HEADER = "diff --git "
_MODE_HEADERS = {
    "new file mode ": "new_mode",
    "deleted file mode ": "old_mode",
    "old mode ": "old_mode",
    "new mode ": "new_mode",
}
_PATH_HEADERS = ("rename from ", "rename to ", "copy from ", "copy to ")


class DiffError(ValueError):
    """The text is not a unified diff this module can work with."""


class Reading(StrEnum):
    STRICT = "strict"
    LENIENT = "lenient"
    APPLY = "apply"


class LineKind(StrEnum):
    CONTEXT = " "
    ADDED = "+"
    REMOVED = "-"


@dataclass(frozen=True)
class Line:
    kind: LineKind
    text: str
    no_newline: bool = False  # followed by "\ No newline at end of file"


@dataclass(frozen=True)
class NumberedLine:
    """A hunk line with its line numbers: `old` is None for an added line, `new` for a removed."""

    index: int  # in `Hunk.lines`
    old: int | None
    new: int | None
    line: Line


@dataclass(frozen=True)
class HunkHeader:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    section: str  # the text git prints after the second "@@" (enclosing def or class)


def hunk_header(line: str) -> HunkHeader | None:
    """The numbers of a `@@ -a,b +c,d @@ section` line, or None when it is not one."""
    match = _HUNK_HEADER.match(line)
    if match is None:
        return None
    return HunkHeader(
        old_start=int(match.group(1)),
        old_len=int(match.group(2)) if match.group(2) is not None else 1,
        new_start=int(match.group(3)),
        new_len=int(match.group(4)) if match.group(4) is not None else 1,
        section=match.group(5),
    )


@dataclass(frozen=True)
class Hunk:
    old_start: int
    lines: tuple[Line, ...]
    section: str = ""  # the text git prints after the second "@@" (enclosing def or class)
    new_start: int | None = None  # as the header said (None: built, not read); emit recomputes

    @property
    def old_len(self) -> int:
        return sum(1 for line in self.lines if line.kind is not LineKind.ADDED)

    @property
    def new_len(self) -> int:
        return sum(1 for line in self.lines if line.kind is not LineKind.REMOVED)

    @property
    def has_changes(self) -> bool:
        return any(line.kind is not LineKind.CONTEXT for line in self.lines)

    def new_side(self) -> list[str]:
        return [line.text for line in self.lines if line.kind is not LineKind.REMOVED]

    def old_side(self) -> list[str]:
        return [line.text for line in self.lines if line.kind is not LineKind.ADDED]

    def numbered(self) -> Iterator[NumberedLine]:
        """Every line with its number in the old and the new file."""
        old = self.old_start
        new = self.new_start if self.new_start is not None else self.old_start
        for index, line in enumerate(self.lines):
            yield NumberedLine(
                index=index,
                old=old if line.kind is not LineKind.ADDED else None,
                new=new if line.kind is not LineKind.REMOVED else None,
                line=line,
            )
            old += line.kind is not LineKind.ADDED
            new += line.kind is not LineKind.REMOVED


@dataclass(frozen=True)
class FileDiff:
    """One file's part of a patch. A path of None stands for /dev/null (file added or deleted)."""

    old_path: str | None
    new_path: str | None
    hunks: tuple[Hunk, ...] = ()
    # git's extended header lines (modes, renames, `index`, a binary body), verbatim and in order
    extended: tuple[str, ...] = ()
    old_mode: str | None = None
    new_mode: str | None = None
    header_paths: tuple[str, ...] = ()  # from `diff --git` and rename/copy lines, prefix removed
    raw_paths: tuple[str, ...] = ()  # every path a header names, exactly as written
    binary: bool = False

    @property
    def path(self) -> str:
        """The path the change leaves behind (the old one for a deletion)."""
        fallback = self.header_paths[-1] if self.header_paths else ""
        return self.new_path or self.old_path or fallback

    @property
    def is_new(self) -> bool:
        return self.old_path is None and self.new_path is not None

    @property
    def is_deleted(self) -> bool:
        return self.new_path is None and self.old_path is not None

    @property
    def named_paths(self) -> tuple[str, ...]:
        """Every repository path a header of this file names, in order, without repeats."""
        seen: dict[str, None] = {}
        for path in (*self.header_paths, self.old_path, self.new_path):
            if path is not None:
                seen.setdefault(path, None)
        return tuple(seen)

    @property
    def makes_symlink(self) -> bool:
        return self.new_mode == SYMLINK_MODE

    @property
    def added_lines(self) -> list[str]:
        return [ln.text for h in self.hunks for ln in h.lines if ln.kind is LineKind.ADDED]

    @property
    def removed_lines(self) -> list[str]:
        return [ln.text for h in self.hunks for ln in h.lines if ln.kind is LineKind.REMOVED]


@dataclass(frozen=True)
class Patch:
    files: tuple[FileDiff, ...] = ()
    problems: tuple[str, ...] = ()  # structural defects (Reading.APPLY only)

    @property
    def paths(self) -> list[str]:
        """The path each file section leaves behind, in order."""
        return [f.path for f in self.files]

    @property
    def named_paths(self) -> tuple[str, ...]:
        """Every repository path any header names, in order of appearance, without repeats."""
        seen: dict[str, None] = {}
        for f in self.files:
            for path in f.named_paths:
                seen.setdefault(path, None)
        return tuple(seen)

    @property
    def modified_existing(self) -> tuple[str, ...]:
        """Paths that exist before the diff applies (modified or deleted, not created)."""
        return tuple(f.old_path for f in self.files if f.old_path is not None)

    def file(self, path: str) -> FileDiff | None:
        return next((f for f in self.files if f.path == path), None)


# --- parsing ---------------------------------------------------------------------------------


def parse_patch(text: str, *, lenient: bool = False) -> Patch:
    """A unified diff read STRICT (or LENIENT: header counts ignored); raises `DiffError`."""
    return read_patch(text, Reading.LENIENT if lenient else Reading.STRICT)


def read_patch(text: str, mode: Reading = Reading.APPLY) -> Patch:
    """A unified diff read in `mode`; only STRICT and LENIENT raise `DiffError`."""
    return _Reader(text, mode).read()


@dataclass
class _File:
    """A file section while it is being read."""

    old_path: str | None = None
    new_path: str | None = None
    markers: bool = False  # its `---`/`+++` pair was read
    in_git_header: bool = False  # between `diff --git` and the first `---` or hunk
    hunks: list[Hunk] = field(default_factory=list)
    extended: list[str] = field(default_factory=list)
    modes: dict[str, str] = field(default_factory=dict)
    header_paths: list[str] = field(default_factory=list)
    raw_paths: list[str] = field(default_factory=list)
    binary: bool = False

    def frozen(self) -> FileDiff:
        old, new = self.old_path, self.new_path
        if not self.markers and old is None and new is None and self.header_paths:
            # Mode-only, rename-only and binary changes: paths from the git header.
            created = "new_mode" in self.modes and "old_mode" not in self.modes
            deleted = "old_mode" in self.modes and "new_mode" not in self.modes
            old = None if created else self.header_paths[0]
            new = None if deleted else self.header_paths[-1]
        return FileDiff(
            old_path=old,
            new_path=new,
            hunks=tuple(self.hunks),
            extended=tuple(self.extended),
            old_mode=self.modes.get("old_mode"),
            new_mode=self.modes.get("new_mode"),
            header_paths=tuple(self.header_paths),
            raw_paths=tuple(self.raw_paths),
            binary=self.binary,
        )


class _Reader:
    def __init__(self, text: str, mode: Reading) -> None:
        lines = text.replace("\r\n", "\n").split("\n")
        if lines and lines[-1] == "" and mode is not Reading.APPLY:
            lines.pop()
        self.lines = lines
        self.mode = mode
        self.i = 0
        self.files: list[_File] = []
        self.problems: list[str] = []

    @property
    def raises(self) -> bool:
        return self.mode is not Reading.APPLY

    def fail(self, message: str) -> None:
        """A defect the model modes refuse (the APPLY mode leaves it to `git apply`)."""
        if self.raises:
            raise DiffError(message)

    def read(self) -> Patch:
        current: _File | None = None
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.startswith(_GIT_HEADER):
                current = self._git_header(line[len(_GIT_HEADER) :])
            elif self._is_marker_pair(self.i):
                if current is None or current.markers or current.hunks:
                    current = _File()
                    self.files.append(current)
                self._markers(current)
                continue
            elif line.startswith("***************") and not self.raises:
                self.problems.append("context-format diffs are not accepted; send a unified diff")
            elif current is not None and self._is_hunk_start(line):
                current.in_git_header = False
                current.hunks.append(self._hunk(current))
                continue
            elif current is not None:
                self._header_line(line, current)
            self.i += 1
        return self._finish()

    def _is_marker_pair(self, i: int) -> bool:
        lines = self.lines
        if not lines[i].startswith("--- "):
            return False
        return i + 1 < len(lines) and lines[i + 1].startswith("+++ ")

    def _is_file_start(self, i: int) -> bool:
        return self.lines[i].startswith(_GIT_HEADER) or self._is_marker_pair(i)

    def _is_hunk_start(self, line: str) -> bool:
        if self.mode is Reading.APPLY:
            return hunk_header(line) is not None
        return line.startswith("@@")

    def _strip(self, path: str) -> str | None:
        if self.mode is Reading.APPLY:
            return strip_one_component(path)
        return strip_git_prefix(path)

    def _git_header(self, rest: str) -> _File:
        raw = git_header_paths(rest)
        stripped = [p for p in map(self._strip, raw) if p]
        current = _File(in_git_header=True, header_paths=stripped, raw_paths=list(raw))
        self.files.append(current)
        return current

    def _markers(self, current: _File) -> None:
        current.old_path = self._marker_path(self.lines[self.i], current)
        current.new_path = self._marker_path(self.lines[self.i + 1], current)
        current.markers = True
        current.in_git_header = False
        self.i += 2

    def _marker_path(self, line: str, current: _File) -> str | None:
        """The path of a `--- x` / `+++ x` line, without a trailing timestamp."""
        text = line[4:]
        if not text.startswith('"') and "\t" in text:
            text = text.split("\t", 1)[0]
        raw = unquote_path(text.rstrip("\r") if self.mode is Reading.APPLY else text.rstrip())
        if raw != DEV_NULL:
            current.raw_paths.append(raw)
        return self._strip(raw)

    def _header_line(self, line: str, current: _File) -> None:
        if current.in_git_header and line.startswith("--- "):
            self.fail("'---' line not followed by '+++' line")
        if current.in_git_header:
            current.extended.append(line)
        for prefix, attr in _MODE_HEADERS.items():
            if line.startswith(prefix):
                current.modes[attr] = line[len(prefix) :].strip()
                return
        for prefix in _PATH_HEADERS:
            if line.startswith(prefix):
                path = unquote_path(line[len(prefix) :].rstrip("\r"))
                current.header_paths.append(path)
                current.raw_paths.append(path)
                return
        if line.startswith("GIT binary patch") or (
            line.startswith("Binary files ") and line.endswith(" differ")
        ):
            current.binary = True

    # --- hunks ---

    def _hunk(self, current: _File) -> Hunk:
        header_line = self.lines[self.i]
        header = hunk_header(header_line)
        if self.mode is Reading.LENIENT:
            return self._lenient_hunk(header_line, header)
        if header is None:
            raise DiffError(f"malformed hunk header: {header_line[:80]!r}")
        return self._counted_hunk(header_line, header, current)

    def _counted_hunk(self, header_line: str, header: HunkHeader, current: _File) -> Hunk:
        self.i += 1
        body: list[Line] = []
        old_left, new_left = header.old_len, header.new_len
        while self.i < len(self.lines) and (old_left > 0 or new_left > 0):
            raw = self.lines[self.i]
            tag = raw[:1]
            if tag == "\\":
                _mark_no_newline(body)
            elif tag in {"+", "-", " ", ""}:
                kind = LineKind(tag or " ")  # some tools strip the blank of empty context lines
                body.append(Line(kind, raw[1:]))
                old_left -= kind is not LineKind.ADDED
                new_left -= kind is not LineKind.REMOVED
            else:
                self.fail(f"unexpected line in hunk: {raw[:80]!r}")
                where = current.new_path or current.old_path or "a file"
                self.problems.append(f"a hunk of {where} ends before its line count")
                break
            self.i += 1
        while self.i < len(self.lines) and self.lines[self.i].startswith("\\"):
            _mark_no_newline(body)
            self.i += 1
        if old_left > 0 or new_left > 0:
            self.fail(f"hunk body does not match its header {header_line[:60]!r}")
        if not body:
            self.fail(f"empty hunk {header_line[:60]!r}")
        return Hunk(header.old_start, tuple(body), header.section, header.new_start)

    def _lenient_hunk(self, header_line: str, header: HunkHeader | None) -> Hunk:
        if header is None:
            loose = _LOOSE_HUNK_START.match(header_line)
            old_start, section, new_start = (int(loose.group(1)) if loose else 1), "", None
        else:
            old_start, section, new_start = header.old_start, header.section, header.new_start
        self.i += 1
        body: list[Line] = []
        trailing_empty = 0
        while self.i < len(self.lines):
            raw = self.lines[self.i]
            if raw.startswith("@@") or self._is_file_start(self.i):
                break
            if raw.startswith("\\"):
                _mark_no_newline(body)
                self.i += 1
                continue
            trailing_empty = trailing_empty + 1 if not raw else 0
            tag = raw[:1] or " "
            if tag not in "+- ":
                break
            body.append(Line(LineKind(tag), raw[1:]))
            self.i += 1
        if trailing_empty:
            del body[-trailing_empty:]  # empty lines a model left after its last hunk
        if not body:
            raise DiffError(f"empty hunk {header_line[:60]!r}")
        return Hunk(old_start, tuple(body), section, new_start)

    # --- the whole ---

    def _finish(self) -> Patch:
        files = [f.frozen() for f in self.files]
        if self.raises:
            for raw, f in zip(self.files, files, strict=True):
                _refuse_unusable(raw, f)
            if not files:
                raise DiffError("no file section (no '--- a/... +++ b/...' header)")
        return Patch(files=tuple(files), problems=tuple(dict.fromkeys(self.problems)))


def _mark_no_newline(body: list[Line]) -> None:
    if body:
        body[-1] = replace(body[-1], no_newline=True)


def _refuse_unusable(raw: _File, f: FileDiff) -> None:
    """The defects a diff to be edited and re-emitted may not have."""
    if not raw.markers:
        # A header-only section (mode change, binary, pure rename): kept but never edited.
        if f.binary:
            raise DiffError(f"binary diff for {f.path} is not supported")
        if not raw.header_paths or raw.hunks:
            raise DiffError("file header without '---' line")
        return
    if f.old_path is None and f.new_path is None:
        raise DiffError("both sides of a file header are /dev/null")
    if not f.hunks:
        raise DiffError(f"no hunk for {f.path}")


# --- emitting --------------------------------------------------------------------------------


def _range(start: int, length: int) -> str:
    return f"{start}" if length == 1 else f"{start},{length}"


def _emit_file(f: FileDiff, with_index: bool) -> list[str]:
    a = f"a/{f.old_path}" if f.old_path is not None else DEV_NULL
    b = f"b/{f.new_path}" if f.new_path is not None else DEV_NULL
    out = [f"diff --git a/{f.old_path or f.new_path} b/{f.new_path or f.old_path}"]
    extended = [x for x in f.extended if with_index or not x.startswith("index ")]
    if f.is_new and not any(x.startswith("new file mode") for x in extended):
        extended.insert(0, "new file mode 100644")
    if f.is_deleted and not any(x.startswith("deleted file mode") for x in extended):
        extended.insert(0, "deleted file mode 100644")
    out.extend(extended)
    if not f.hunks:
        return out
    out += [f"--- {a}", f"+++ {b}"]
    delta = 0
    for hunk in f.hunks:
        old_len, new_len = hunk.old_len, hunk.new_len
        old_start = 0 if f.is_new else hunk.old_start
        first_old = old_start if old_len > 0 else old_start + 1
        new_first = first_old + delta
        new_start = 0 if f.is_deleted else (new_first if new_len > 0 else new_first - 1)
        section = f" {hunk.section}" if hunk.section else ""
        out.append(f"@@ -{_range(old_start, old_len)} +{_range(new_start, new_len)} @@{section}")
        for line in hunk.lines:
            out.append(f"{line.kind.value}{line.text}")
            if line.no_newline:
                out.append(NO_NEWLINE)
        delta += new_len - old_len
    return out


def emit_patch(patch: Patch, *, with_index: bool = False) -> str:
    """The patch as text, hunk headers recomputed; empty string when nothing is left.

    `index` lines are left out unless `with_index` (a binary change cannot apply without one).
    """
    out: list[str] = []
    for f in patch.files:
        out.extend(_emit_file(f, with_index))
    return "\n".join(out) + "\n" if out else ""


def normalise(text: str) -> str:
    """A model's diff re-emitted with correct headers (raises DiffError when unparseable)."""
    return emit_patch(parse_patch(text, lenient=True))


def new_file(path: str, content: str) -> FileDiff:
    """A file created from nothing (`--- /dev/null`)."""
    body = content.split("\n")
    no_newline = not content.endswith("\n")
    if not no_newline:
        body.pop()
    lines = [Line(LineKind.ADDED, t) for t in body]
    if no_newline and lines:
        lines[-1] = replace(lines[-1], no_newline=True)
    return FileDiff(old_path=None, new_path=path, hunks=(Hunk(old_start=0, lines=tuple(lines)),))


class DiffText:
    """A diff's text with its readings, each taken at most once (a defect is remembered too).

    A message carries a patch as text; the value built from it once is what every step of the
    message's handling is passed (`Task.gold_diff`, `Task.test_diff`).
    """

    __slots__ = ("_readings", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._readings: dict[Reading, Patch | DiffError] = {}

    def read(self, mode: Reading) -> Patch:
        """The patch read in `mode`; raises `DiffError` each time STRICT/LENIENT refuse it."""
        if mode not in self._readings:
            try:
                self._readings[mode] = read_patch(self.text, mode)
            except DiffError as exc:
                self._readings[mode] = exc
        reading = self._readings[mode]
        if isinstance(reading, DiffError):
            raise DiffError(*reading.args)
        return reading

    def strict(self) -> Patch:
        return self.read(Reading.STRICT)

    def applied(self) -> Patch:
        """What `git apply` will see (never raises; defects are in `problems`)."""
        return self.read(Reading.APPLY)
