"""Where in the repository a strategy can put code: the functions gold changes, module level.

Harness exploits and special-casing both insert statements into the *base* version of a file
the gold patch touches (at the top of a changed function, or at module level), anchored on the
base lines gold's hunks show. When gold adds a function of its own, the insertion goes into gold's
new version instead. Each place found here is a line a statement may legally go before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.attacker.domain.reading.diffs import LineKind
from hackaudit.attacker.domain.reading.layout import is_test_path
from hackaudit.attacker.domain.reading.pysource import EnclosingFunction, Signature


@dataclass(frozen=True)
class ChangedFunction:
    """A function gold changes, with where a statement may open its body."""

    file: int
    hunk: int
    name: str
    signature: Signature | None
    base_slot: tuple[int, str] | None  # (old-side index, indentation) in the base version
    gold_slot: tuple[int, str] | None  # (hunk line index, indentation) in gold, for new functions
    new_in_gold: bool
    top_level: bool
    path: str


def _changed_positions(hunk: diffs.Hunk) -> tuple[list[int], list[int], int | None]:
    """New-side indices of added lines, old-side indices of removed lines, and the old-side
    index where the first change sits."""
    added: list[int] = []
    removed: list[int] = []
    first: int | None = None
    old_i = new_i = 0
    for line in hunk.lines:
        if line.kind is LineKind.CONTEXT:
            old_i += 1
            new_i += 1
            continue
        if first is None:
            first = old_i
        if line.kind is LineKind.ADDED:
            added.append(new_i)
            new_i += 1
        else:
            removed.append(old_i)
            old_i += 1
    return added, removed, first


def _names(
    owners: Sequence[EnclosingFunction | None], indices: list[int]
) -> list[EnclosingFunction]:
    out: list[EnclosingFunction] = []
    for i in indices:
        owner = owners[i] if i < len(owners) else None
        if owner is not None and owner.name and all(o.name != owner.name for o in out):
            out.append(owner)
    return out


def _base_slot(
    old: list[str], owner: EnclosingFunction | None, first_change: int | None
) -> tuple[int, str] | None:
    if owner is None:
        return None
    if owner.header is not None:
        return pysource.body_start(old, owner.header)
    if first_change is None or first_change >= len(old):
        return None
    indent = pysource.indent_of(old[first_change])
    if len(indent) > len(owner.indent) and pysource.statement_slot(old, first_change):
        return first_change, indent
    return None


def changed_functions(gold: diffs.Patch) -> list[ChangedFunction]:
    out: list[ChangedFunction] = []
    for fi, f in enumerate(gold.files):
        if not f.path.endswith(".py") or is_test_path(f.path) or f.is_deleted:
            continue
        for hi, hunk in enumerate(f.hunks):
            old, new = hunk.old_side(), hunk.new_side()
            added, removed, first = _changed_positions(hunk)
            old_owners = pysource.enclosing_functions(old, hunk.section)
            new_owners = pysource.enclosing_functions(new, hunk.section)
            owners = _names(new_owners, added) + _names(old_owners, removed)
            for owner in owners:
                if any(c.name == owner.name and c.path == f.path for c in out):
                    continue
                base_owner = next(
                    (o for o in old_owners if o is not None and o.name == owner.name), None
                )
                if base_owner is None and owner.header is None:
                    base_owner = owner  # known from the @@ line only
                gold_slot = None
                new_in_gold = base_owner is None and not f.is_new and owner.header is not None
                if f.is_new or new_in_gold:
                    new_in_gold = True
                    if owner.header is not None:
                        slot = pysource.body_start(new, owner.header)
                        if slot is not None:
                            index = diffs.new_side_to_hunk_index(hunk, slot[0])
                            gold_slot = (index, slot[1])
                out.append(
                    ChangedFunction(
                        file=fi,
                        hunk=hi,
                        name=owner.name,
                        signature=owner.signature,
                        base_slot=None if new_in_gold else _base_slot(old, base_owner, first),
                        gold_slot=gold_slot,
                        new_in_gold=new_in_gold,
                        top_level=owner.indent == "",
                        path=f.path,
                    )
                )
    return out


BodyLines = Callable[[str], list[str]]  # indentation -> the statements to insert


def insert_into_function(
    gold: diffs.Patch, fn: ChangedFunction, body: BodyLines
) -> diffs.Patch | None:
    """A patch that puts `body` at the top of `fn`: into the base version when gold only changes
    the function, into gold's own version (gold kept whole) when gold adds it."""
    f = gold.files[fn.file]
    if fn.base_slot is not None:
        index, indent = fn.base_slot
        try:
            return diffs.Patch(files=(diffs.insertion(f, f.hunks[fn.hunk], index, body(indent)),))
        except diffs.DiffError:
            return None
    if fn.gold_slot is not None:
        index, indent = fn.gold_slot
        return diffs.insert_lines(gold, fn.file, fn.hunk, index, body(indent))
    return None


def module_insertions(gold: diffs.Patch) -> list[tuple[int, int, int]]:
    """(file, hunk, old-side index) of places in base versions where module code may go."""
    out: list[tuple[int, int, int]] = []
    for fi, f in enumerate(gold.files):
        if not f.path.endswith(".py") or is_test_path(f.path) or f.is_new or f.is_deleted:
            continue
        for hi, hunk in enumerate(f.hunks):
            slot = pysource.module_slot(hunk.old_side())
            if slot is not None:
                out.append((fi, hi, slot))
    return out


def insert_at_module_level(
    gold: diffs.Patch, place: tuple[int, int, int], code: Sequence[str]
) -> diffs.Patch | None:
    fi, hi, index = place
    f = gold.files[fi]
    try:
        return diffs.Patch(files=(diffs.insertion(f, f.hunks[hi], index, [*code, "", ""]),))
    except diffs.DiffError:
        return None
