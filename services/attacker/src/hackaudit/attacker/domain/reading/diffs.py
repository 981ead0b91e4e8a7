"""A small unified-diff model: parse, edit (revert, replace, insert lines) and emit again.

Every offline strategy derives its candidates from the gold or test patch. They all move *towards*
the base commit (revert a hunk, revert one changed line) or change only the new side (mutate an
added line, insert a guard), so the old side of every hunk stays exactly what the base commit
holds and each emitted diff still applies there. Hunk headers are always recomputed from the
lines, never copied, so an edited diff stays well formed.

Model output is parsed leniently (header counts ignored, hunk bodies read up to the next header)
and re-emitted with correct headers; the gold patch is parsed strictly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from enum import StrEnum

NO_NEWLINE = "\\ No newline at end of file"
DEV_NULL = "/dev/null"

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")


class DiffError(ValueError):
    """The text is not a unified diff this module can work with."""


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
class Hunk:
    old_start: int
    lines: tuple[Line, ...]
    section: str = ""  # the text git prints after the second "@@" (enclosing def or class)

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


@dataclass(frozen=True)
class FileDiff:
    """One file's part of a patch. A path of None stands for /dev/null (file added or deleted)."""

    old_path: str | None
    new_path: str | None
    hunks: tuple[Hunk, ...] = ()
    extended: tuple[str, ...] = ()  # git's extended header lines (modes, renames), kept verbatim

    @property
    def path(self) -> str:
        path = self.new_path if self.new_path is not None else self.old_path
        assert path is not None
        return path

    @property
    def is_new(self) -> bool:
        return self.old_path is None

    @property
    def is_deleted(self) -> bool:
        return self.new_path is None


@dataclass(frozen=True)
class Patch:
    files: tuple[FileDiff, ...] = ()

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    def file(self, path: str) -> FileDiff | None:
        return next((f for f in self.files if f.path == path), None)


# --- parsing ---------------------------------------------------------------------------------


def _strip_prefix(raw: str) -> str | None:
    raw = raw.split("\t", 1)[0].rstrip()
    if raw == DEV_NULL:
        return None
    if raw.startswith(("a/", "b/")):
        return raw[2:]
    return raw


def _is_file_start(lines: Sequence[str], i: int) -> bool:
    if lines[i].startswith("diff --git "):
        return True
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


@dataclass
class _Cursor:
    lines: list[str]
    i: int = 0
    lenient: bool = False
    files: list[FileDiff] = field(default_factory=list)

    def peek(self) -> str | None:
        return self.lines[self.i] if self.i < len(self.lines) else None


def parse_patch(text: str, *, lenient: bool = False) -> Patch:
    """Parse a unified diff. `lenient` ignores header counts (model output often miscounts)."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cur = _Cursor(lines=lines, lenient=lenient)
    while cur.i < len(lines):
        if _is_file_start(lines, cur.i):
            cur.files.append(_parse_file(cur))
        else:
            cur.i += 1  # commentary before, between or after file sections
    if not cur.files:
        raise DiffError("no file section (no '--- a/... +++ b/...' header)")
    return Patch(files=tuple(cur.files))


def _parse_file(cur: _Cursor) -> FileDiff:
    lines = cur.lines
    extended: list[str] = []
    git_paths: tuple[str | None, str | None] | None = None
    if lines[cur.i].startswith("diff --git "):
        match = re.match(r"^diff --git a/(\S+) b/(\S+)$", lines[cur.i])
        if match:
            git_paths = (match.group(1), match.group(2))
        cur.i += 1
        while cur.i < len(lines) and not lines[cur.i].startswith(("--- ", "diff --git ", "@@")):
            if not lines[cur.i].startswith("index "):
                extended.append(lines[cur.i])
            cur.i += 1
    if cur.i >= len(lines) or not lines[cur.i].startswith("--- "):
        # A header-only section (mode change, binary, pure rename): kept but never edited.
        if git_paths is None:
            raise DiffError("file header without '---' line")
        if any(x.startswith(("Binary files", "GIT binary patch")) for x in extended):
            raise DiffError(f"binary diff for {git_paths[1]} is not supported")
        return FileDiff(old_path=git_paths[0], new_path=git_paths[1], extended=tuple(extended))
    old_path = _strip_prefix(lines[cur.i][4:])
    cur.i += 1
    if cur.i >= len(lines) or not lines[cur.i].startswith("+++ "):
        raise DiffError("'---' line not followed by '+++' line")
    new_path = _strip_prefix(lines[cur.i][4:])
    cur.i += 1
    if old_path is None and new_path is None:
        raise DiffError("both sides of a file header are /dev/null")
    hunks: list[Hunk] = []
    while cur.i < len(lines) and lines[cur.i].startswith("@@"):
        hunks.append(_parse_hunk(cur))
    if not hunks:
        raise DiffError(f"no hunk for {new_path or old_path}")
    return FileDiff(old_path, new_path, tuple(hunks), tuple(extended))


def _parse_hunk(cur: _Cursor) -> Hunk:
    header = cur.lines[cur.i]
    match = _HUNK_HEADER.match(header)
    if not match:
        if not cur.lenient:
            raise DiffError(f"malformed hunk header: {header[:80]!r}")
        match = re.match(r"^@@ -(\d+)(?:,(\d+))?", header)
        old_start = int(match.group(1)) if match else 1
        section = ""
        old_count = new_count = -1
    else:
        old_start = int(match.group(1))
        old_count = int(match.group(2)) if match.group(2) is not None else 1
        new_count = int(match.group(4)) if match.group(4) is not None else 1
        section = match.group(5)
    cur.i += 1
    body: list[Line] = []
    old_seen = new_seen = trailing_empty = 0
    while cur.i < len(cur.lines):
        if not cur.lenient and old_seen >= old_count and new_seen >= new_count:
            if cur.lines[cur.i].startswith(NO_NEWLINE[:2]) and body:
                body[-1] = replace(body[-1], no_newline=True)
                cur.i += 1
            break
        raw = cur.lines[cur.i]
        if cur.lenient and (raw.startswith("@@") or _is_file_start(cur.lines, cur.i)):
            break
        if raw.startswith("\\"):
            if body:
                body[-1] = replace(body[-1], no_newline=True)
            cur.i += 1
            continue
        trailing_empty = trailing_empty + 1 if not raw else 0
        kind_char = raw[:1] if raw else " "  # some tools strip the blank of empty context lines
        if kind_char not in "+- ":
            if cur.lenient:
                break
            raise DiffError(f"unexpected line in hunk: {raw[:80]!r}")
        kind = LineKind(kind_char)
        body.append(Line(kind, raw[1:]))
        old_seen += kind is not LineKind.ADDED
        new_seen += kind is not LineKind.REMOVED
        cur.i += 1
    if not cur.lenient and (old_seen != old_count or new_seen != new_count):
        raise DiffError(f"hunk body does not match its header {header[:60]!r}")
    if cur.lenient and trailing_empty:
        del body[-trailing_empty:]  # empty lines a model left after its last hunk
    if not body:
        raise DiffError(f"empty hunk {header[:60]!r}")
    return Hunk(old_start=old_start, lines=tuple(body), section=section)


# --- emitting --------------------------------------------------------------------------------


def _range(start: int, length: int) -> str:
    return f"{start}" if length == 1 else f"{start},{length}"


def _emit_file(f: FileDiff) -> list[str]:
    a = f"a/{f.old_path}" if f.old_path is not None else DEV_NULL
    b = f"b/{f.new_path}" if f.new_path is not None else DEV_NULL
    out = [f"diff --git a/{f.old_path or f.new_path} b/{f.new_path or f.old_path}"]
    extended = list(f.extended)
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


def emit_patch(patch: Patch) -> str:
    """The patch as text, hunk headers recomputed; empty string when nothing is left."""
    out: list[str] = []
    for f in patch.files:
        out.extend(_emit_file(f))
    return "\n".join(out) + "\n" if out else ""


def normalise(text: str) -> str:
    """A model's diff re-emitted with correct headers (raises DiffError when unparseable)."""
    return emit_patch(parse_patch(text, lenient=True))


# --- editing ---------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class EditRef:
    """One revertible unit: slot `slot` of change group `group` in hunk `hunk` of file `file`.

    A change group is a maximal run of removed/added lines. Its i-th removed line and i-th added
    line form slot i: both present = a changed line, only one = a pure addition or removal.
    """

    file: int
    hunk: int
    group: int
    slot: int


@dataclass(frozen=True)
class Slot:
    ref: EditRef
    removed: str | None
    added: str | None
    added_index: int | None  # index of the added line inside the hunk
    removed_index: int | None = None  # index of the removed line inside the hunk


def _groups(hunk: Hunk) -> list[list[int]]:
    groups: list[list[int]] = []
    current: list[int] = []
    for i, line in enumerate(hunk.lines):
        if line.kind is LineKind.CONTEXT:
            if current:
                groups.append(current)
                current = []
        else:
            current.append(i)
    if current:
        groups.append(current)
    return groups


def _slots(hunk: Hunk, group: list[int]) -> list[tuple[int | None, int | None]]:
    """The group's lines as (removed, added) slots, in order on both sides.

    A removed line is paired with the most similar added line after the previous pair (a
    "changed line"); lines left unpaired are pure removals or additions.
    """
    removed = [i for i in group if hunk.lines[i].kind is LineKind.REMOVED]
    added = [i for i in group if hunk.lines[i].kind is LineKind.ADDED]
    out: list[tuple[int | None, int | None]] = []
    next_added = 0
    for r in removed:
        text = hunk.lines[r].text.strip()
        best, best_ratio = None, 0.5
        for k in range(next_added, len(added)):
            ratio = SequenceMatcher(None, text, hunk.lines[added[k]].text.strip()).ratio()
            if ratio > best_ratio:
                best, best_ratio = k, ratio
        if best is None:
            out.append((r, None))
            continue
        out.extend((None, a) for a in added[next_added:best])
        out.append((r, added[best]))
        next_added = best + 1
    out.extend((None, a) for a in added[next_added:])
    return out


def slots(patch: Patch) -> list[Slot]:
    """Every revertible unit of the patch, in file order. Deleted files offer none."""
    out: list[Slot] = []
    for fi, f in enumerate(patch.files):
        if f.is_deleted:
            continue
        for hi, hunk in enumerate(f.hunks):
            for gi, group in enumerate(_groups(hunk)):
                for si, (r, a) in enumerate(_slots(hunk, group)):
                    out.append(
                        Slot(
                            ref=EditRef(fi, hi, gi, si),
                            removed=hunk.lines[r].text if r is not None else None,
                            added=hunk.lines[a].text if a is not None else None,
                            added_index=a,
                            removed_index=r,
                        )
                    )
    return out


def _revert_hunk(hunk: Hunk, reverted: set[tuple[int, int]]) -> Hunk:
    """The hunk with the given (group, slot) units turned back into their base form."""
    groups = _groups(hunk)
    start_of = {g[0]: gi for gi, g in enumerate(groups)}
    out: list[Line] = []
    i = 0
    while i < len(hunk.lines):
        if i not in start_of:
            out.append(hunk.lines[i])
            i += 1
            continue
        gi = start_of[i]
        run_removed: list[Line] = []
        run_added: list[Line] = []
        for si, (r, a) in enumerate(_slots(hunk, groups[gi])):
            if (gi, si) in reverted:
                out += run_removed + run_added
                run_removed, run_added = [], []
                if r is not None:
                    out.append(replace(hunk.lines[r], kind=LineKind.CONTEXT))
            else:
                if r is not None:
                    run_removed.append(hunk.lines[r])
                if a is not None:
                    run_added.append(hunk.lines[a])
        out += run_removed + run_added
        i = groups[gi][-1] + 1
    return replace(hunk, lines=tuple(out))


def revert(patch: Patch, refs: Iterable[EditRef]) -> Patch:
    """The patch with the given units reverted; hunks and files left without changes vanish."""
    by_hunk: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for ref in refs:
        by_hunk.setdefault((ref.file, ref.hunk), set()).add((ref.group, ref.slot))
    files: list[FileDiff] = []
    for fi, f in enumerate(patch.files):
        hunks = []
        for hi, hunk in enumerate(f.hunks):
            todo = by_hunk.get((fi, hi))
            new = _revert_hunk(hunk, todo) if todo else hunk
            if new.has_changes:
                hunks.append(new)
        if hunks or not f.hunks:
            files.append(replace(f, hunks=tuple(hunks)))
    return Patch(files=tuple(files))


def hunk_refs(patch: Patch, file: int, hunk: int) -> list[EditRef]:
    return [s.ref for s in slots(patch) if (s.ref.file, s.ref.hunk) == (file, hunk)]


def hunk_ids(patch: Patch) -> list[tuple[int, int]]:
    """(file, hunk) of every hunk that can be reverted (deleted files cannot)."""
    return [
        (fi, hi)
        for fi, f in enumerate(patch.files)
        if not f.is_deleted
        for hi in range(len(f.hunks))
    ]


def drop_files(patch: Patch, keep: Iterable[str]) -> Patch:
    wanted = set(keep)
    return Patch(files=tuple(f for f in patch.files if f.path in wanted))


def replace_line(patch: Patch, file: int, hunk: int, index: int, text: str) -> Patch:
    """The patch with added line `index` of a hunk given new text."""
    line = patch.files[file].hunks[hunk].lines[index]
    if line.kind is not LineKind.ADDED:
        raise DiffError("only added lines can be replaced")
    return _with_hunk_lines(patch, file, hunk, index, index + 1, [replace(line, text=text)])


def insert_lines(patch: Patch, file: int, hunk: int, index: int, texts: Sequence[str]) -> Patch:
    """The patch with added lines inserted before line `index` of a hunk (len(lines) = at end)."""
    new = [Line(LineKind.ADDED, t) for t in texts]
    return _with_hunk_lines(patch, file, hunk, index, index, new)


def _with_hunk_lines(
    patch: Patch, file: int, hunk: int, start: int, stop: int, new: list[Line]
) -> Patch:
    f = patch.files[file]
    h = f.hunks[hunk]
    lines = list(h.lines)
    lines[start:stop] = new
    hunks = list(f.hunks)
    hunks[hunk] = replace(h, lines=tuple(lines))
    files = list(patch.files)
    files[file] = replace(f, hunks=tuple(hunks))
    return Patch(files=tuple(files))


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


def insertion(
    f: FileDiff, hunk: Hunk, old_index: int, texts: Sequence[str], context: int = 3
) -> FileDiff:
    """A diff of `f` at the base commit that only inserts `texts` before old-side line
    `old_index` of `hunk`, with the hunk's base lines around it as context."""
    old = [replace(x, kind=LineKind.CONTEXT) for x in hunk.lines if x.kind is not LineKind.ADDED]
    if not old or f.is_new:
        raise DiffError("no base lines to anchor an insertion")
    if old_index >= len(old) and old[-1].no_newline:
        raise DiffError("cannot insert after a last line without newline")
    lo, hi = max(0, old_index - context), min(len(old), old_index + context)
    lines = [*old[lo:old_index], *(Line(LineKind.ADDED, t) for t in texts), *old[old_index:hi]]
    path = f.old_path
    return FileDiff(
        old_path=path,
        new_path=path,
        hunks=(Hunk(old_start=hunk.old_start + lo, lines=tuple(lines), section=hunk.section),),
    )


def new_side_to_hunk_index(hunk: Hunk, new_index: int) -> int:
    """The index in `hunk.lines` of new-side line `new_index` (len(lines) past the end)."""
    seen = 0
    for i, line in enumerate(hunk.lines):
        if line.kind is LineKind.REMOVED:
            continue
        if seen == new_index:
            return i
        seen += 1
    return len(hunk.lines)


def merge(*patches: Patch) -> Patch:
    """Several patches as one; hunks of the same file are interleaved when they do not overlap."""
    by_path: dict[str, FileDiff] = {}
    for p in patches:
        for f in p.files:
            known = by_path.get(f.path)
            if known is None:
                by_path[f.path] = f
                continue
            if known.is_new or f.is_new or known.is_deleted or f.is_deleted:
                raise DiffError(f"{f.path} is created or deleted by more than one part")
            hunks: list[Hunk] = []
            for hunk in sorted([*known.hunks, *f.hunks], key=lambda h: h.old_start):
                if hunks and hunks[-1].old_start + hunks[-1].old_len >= hunk.old_start:
                    hunks[-1] = _merge_insertions(hunks[-1], hunk, f.path)
                else:
                    hunks.append(hunk)
            by_path[f.path] = replace(known, hunks=tuple(hunks))
    return Patch(files=tuple(by_path.values()))


def _merge_insertions(a: Hunk, b: Hunk, path: str) -> Hunk:
    """Two overlapping hunks that only add lines, as one hunk over the union of their lines."""
    base: dict[int, Line] = {}
    before: dict[int, list[Line]] = {}
    for hunk in (a, b):
        if any(line.kind is LineKind.REMOVED for line in hunk.lines):
            raise DiffError(f"overlapping hunks in {path}")
        number = hunk.old_start
        for line in hunk.lines:
            if line.kind is LineKind.ADDED:
                before.setdefault(number, []).append(line)
            else:
                if base.get(number, line).text != line.text:
                    raise DiffError(f"hunks disagree on line {number} of {path}")
                base[number] = line
                number += 1
    first, last = min(base), max(base)
    if len(base) != last - first + 1:
        raise DiffError(f"hunks of {path} leave a gap")
    lines: list[Line] = []
    for number in range(first, last + 2):
        lines += before.get(number, [])
        if number in base:
            lines.append(base[number])
    return Hunk(old_start=first, lines=tuple(lines), section=a.section)


def combine(*patches: Patch) -> Patch:
    """Several patches as one (their files must not overlap)."""
    files: list[FileDiff] = []
    seen: set[str] = set()
    for p in patches:
        for f in p.files:
            if f.path in seen:
                raise DiffError(f"{f.path} appears twice")
            seen.add(f.path)
            files.append(f)
    return Patch(files=tuple(files))


def added_lines(patch: Patch) -> Iterator[tuple[int, int, int, str]]:
    """(file, hunk, index, text) of every added line."""
    for fi, f in enumerate(patch.files):
        for hi, hunk in enumerate(f.hunks):
            for li, line in enumerate(hunk.lines):
                if line.kind is LineKind.ADDED:
                    yield fi, hi, li, line.text
