"""Edits of a task's diffs: revert, replace and insert lines, merge and combine patches.

The diff model itself (parse, emit) is `hackaudit.shared.anatomy`; it is re-exported here so the
strategies keep one import. Every offline strategy derives its candidates from the gold or test
patch. They all move *towards* the base commit (revert a hunk, revert one changed line) or change
only the new side (mutate an added line, insert a guard), so the old side of every hunk stays
exactly what the base commit holds and each emitted diff still applies there. Hunk headers are
always recomputed from the lines, never copied, so an edited diff stays well formed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from hackaudit.shared.anatomy import (
    DEV_NULL,
    NO_NEWLINE,
    DiffError,
    DiffText,
    FileDiff,
    Hunk,
    Line,
    LineKind,
    Patch,
    Reading,
    emit_patch,
    new_file,
    normalise,
    parse_patch,
)

__all__ = [
    "DEV_NULL",
    "NO_NEWLINE",
    "DiffError",
    "EditRef",
    "FileDiff",
    "Hunk",
    "Line",
    "LineKind",
    "Patch",
    "PatchSource",
    "Slot",
    "added_lines",
    "between",
    "combine",
    "drop_files",
    "emit_patch",
    "hunk_ids",
    "hunk_refs",
    "insert_lines",
    "insertion",
    "merge",
    "new_file",
    "new_side_to_hunk_index",
    "normalise",
    "parse_patch",
    "read",
    "replace_line",
    "revert",
    "slots",
]


PatchSource = str | DiffText | Patch  # a patch's text, a message's read-once patch, or a patch


def read(source: PatchSource, *, lenient: bool = False) -> Patch:
    """The patch, from its text or from a message's `DiffText` (each reading taken once)."""
    if isinstance(source, Patch):
        return source
    if isinstance(source, DiffText):
        return source.read(Reading.LENIENT if lenient else Reading.STRICT)
    return parse_patch(source, lenient=lenient)


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


def replace_lines(
    patch: Patch, file: int, hunk: int, start: int, stop: int, new: Sequence[Line]
) -> Patch:
    """The patch with lines `start:stop` of a hunk replaced by `new`."""
    return _with_hunk_lines(patch, file, hunk, start, stop, list(new))


def change_groups(hunk: Hunk) -> list[list[int]]:
    """The hunk's change groups: each a maximal run of removed and added line indices."""
    return _groups(hunk)


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


def _text_lines(text: str) -> list[Line]:
    """A file's text as context lines, the last one marked when the file ends without newline."""
    body = text.split("\n")
    ends_with_newline = text.endswith("\n")
    if ends_with_newline or not text:
        body.pop()
    lines = [Line(LineKind.CONTEXT, t) for t in body]
    if lines and not ends_with_newline:
        lines[-1] = replace(lines[-1], no_newline=True)
    return lines


def between(path: str, before: str, after: str, context: int = 3) -> FileDiff:
    """The diff of an existing file from text `before` to text `after`, `context` lines of
    context around each change (no hunk when the texts are equal)."""
    old, new = _text_lines(before), _text_lines(after)
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    hunks: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(context):
        lines: list[Line] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(old[i1:i2])
                continue
            lines.extend(replace(x, kind=LineKind.REMOVED) for x in old[i1:i2])
            lines.extend(replace(x, kind=LineKind.ADDED) for x in new[j1:j2])
        hunks.append(Hunk(old_start=group[0][1] + 1, lines=tuple(lines)))
    return FileDiff(old_path=path, new_path=path, hunks=tuple(hunks))


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


def added_blocks(f: FileDiff) -> Iterator[str]:
    """Source fragments from a file's added lines: the whole file when it is new, else each run
    of consecutive added lines."""
    if f.is_new:
        yield "\n".join(line for h in f.hunks for line in h.new_side())
        return
    for hunk in f.hunks:
        block: list[str] = []
        for line in [*hunk.lines, Line(LineKind.CONTEXT, "")]:
            if line.kind is LineKind.ADDED:
                block.append(line.text)
            elif block:
                yield "\n".join(block)
                block = []
