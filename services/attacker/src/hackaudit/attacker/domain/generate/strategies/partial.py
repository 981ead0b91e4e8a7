"""Partial fixes: the gold patch with some of its hunks, or single changed lines, reverted.

A suite that accepts gold minus one hunk does not test what that hunk does. Single hunks are
tried first (smallest first: a one-line guard is the easiest change to leave untested), then
single changed lines, then gold reduced to one hunk, then pairs of hunks — bounded, since the
number of combinations grows fast.
"""

from __future__ import annotations

from itertools import combinations, islice

from hackaudit.attacker.domain.generate import behaviour
from hackaudit.attacker.domain.generate.strategies.base import (
    Category,
    OfflineStrategy,
    gold_id,
    make_candidate,
    parse_gold,
    unique,
)
from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.attacker.domain.reading.diffs import LineKind
from hackaudit.shared.contracts import Candidate, Task

NAME = "partial_fix"
RUNS_PER_CHANGE = 8


def _where(patch: diffs.Patch, file: int, hunk: int) -> str:
    f = patch.files[file]
    return f"{f.path} hunk {hunk + 1}/{len(f.hunks)} (@@ -{f.hunks[hunk].old_start})"


def _groups(all_slots: list[diffs.Slot]) -> dict[tuple[int, int, int], list[diffs.Slot]]:
    groups: dict[tuple[int, int, int], list[diffs.Slot]] = {}
    for s in all_slots:
        groups.setdefault((s.ref.file, s.ref.hunk, s.ref.group), []).append(s)
    return groups


def _runs(group: list[diffs.Slot], limit: int) -> list[list[diffs.Slot]]:
    """Contiguous runs of at least two slots of a change, longest first, at most `limit`."""
    runs = (
        group[start : start + size]
        for size in range(len(group), 1, -1)
        for start in range(len(group) - size + 1)
    )
    return list(islice(runs, limit))


def keeps_syntax(gold: diffs.Patch, patch: diffs.Patch) -> bool:
    """Whether every Python file `patch` shares with `gold` still parses wherever gold's does."""
    for f in patch.files:
        before = gold.file(f.path)
        if before is None or not f.path.endswith(".py") or len(before.hunks) != len(f.hunks):
            continue
        for old, new in zip(before.hunks, f.hunks, strict=True):
            if not pysource.still_parses(old.new_side(), new.new_side()):
                return False
    return True


def code_lines(hunk: diffs.Hunk) -> set[int]:
    """Indices (in `hunk.lines`) of the lines that hold code: not blank, not only a comment, not
    a docstring or any other string standing alone on its lines (a hunk may start inside one)."""
    out: set[int] = set()
    for side_kind in (LineKind.ADDED, LineKind.REMOVED):
        index = [
            i for i, line in enumerate(hunk.lines) if line.kind in (side_kind, LineKind.CONTEXT)
        ]
        mask = behaviour.code_mask([hunk.lines[i].text for i in index])
        out |= {i for i, is_code in zip(index, mask, strict=True) if is_code}
    return out


def only_text(gold: diffs.Patch, reverted: list[diffs.EditRef]) -> bool:
    """Whether every line `reverted` touches is blank, a comment or a docstring: such a partial
    fix behaves as gold does, and grading it would spend a slot on gold again."""
    wanted = set(reverted)
    lines: dict[tuple[int, int], set[int]] = {}
    for s in diffs.slots(gold):
        if s.ref not in wanted:
            continue
        key = (s.ref.file, s.ref.hunk)
        if key not in lines:
            lines[key] = code_lines(gold.files[key[0]].hunks[key[1]])
        if any(i is not None and i in lines[key] for i in (s.added_index, s.removed_index)):
            return False
    return bool(wanted)


def partial_fixes(task: Task, limit: int = 40) -> list[Candidate]:
    gold = parse_gold(task)
    if gold is None:
        return []
    parent = gold_id(task)
    hunks = diffs.hunk_ids(gold)
    all_slots = diffs.slots(gold)
    refs = {h: diffs.hunk_refs(gold, *h) for h in hunks}
    out: list[Candidate] = []

    def emit(reverted: list[diffs.EditRef], detail: str) -> None:
        if only_text(gold, reverted):
            return
        patch = diffs.revert(gold, reverted)
        if patch.files and keeps_syntax(gold, patch):
            out.append(make_candidate(task, patch, NAME, detail, parent))

    if len(hunks) > 1:
        for h in sorted(hunks, key=lambda h: (len(refs[h]), h)):
            emit(refs[h], f"gold without {_where(gold, *h)}")
    for (fi, hi, gi), group in _groups(all_slots).items():
        where = _where(gold, fi, hi)
        for run in _runs(group, RUNS_PER_CHANGE):
            first = (run[0].added or run[0].removed or "").strip()
            detail = f"gold with {len(run)} lines of change {gi + 1} reverted in {where}: {first}"
            emit([s.ref for s in run], detail)
    if len(all_slots) > 1:
        for s in all_slots:
            line = (s.added if s.added is not None else s.removed or "").strip()
            kind = (
                "changed"
                if s.added is not None and s.removed is not None
                else ("added" if s.added is not None else "removed")
            )
            where = _where(gold, s.ref.file, s.ref.hunk)
            emit([s.ref], f"gold with {kind} line reverted in {where}: {line[:80]}")
    if len(hunks) > 2:
        for keep in hunks:
            others = [r for h in hunks if h != keep for r in refs[h]]
            emit(others, f"gold reduced to {_where(gold, *keep)}")
        for a, b in combinations(hunks, 2):
            emit(refs[a] + refs[b], f"gold without {_where(gold, *a)} and {_where(gold, *b)}")
    gold_hash = make_candidate(task, gold, NAME, "").content_hash
    return [c for c in unique(out, limit) if c.content_hash != gold_hash]


STRATEGY = OfflineStrategy(NAME, Category.PARTIAL_FIX, partial_fixes)
