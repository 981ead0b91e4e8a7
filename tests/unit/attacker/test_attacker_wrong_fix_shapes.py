"""Two shapes of wrong fix the mutation strategy writes: a copy made into one refilled container
(each result right when handed out, changed by the next) and a range check narrowed to its edge."""

from __future__ import annotations

from typing import Any

import pytest

from hackaudit.attacker.domain.generate.strategies import mutation


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("            elif coeff < 0:", {"            elif coeff == -1:"}),
        ("    if n >= 2:", {"    if n == 2:"}),
        ("    while k > -3:", {"    while k == -2:"}),
        ("    if a <= 5 and b < 1:", {"    if a == 5 and b < 1:", "    if a <= 5 and b == 0:"}),
        ("    if a < 2 * x:", set()),
        ("    if a < n:", set()),
        ("    if a == 0:", set()),
    ],
)
def test_a_range_check_narrowed_to_its_edge(line: str, expected: set[str]) -> None:
    got = {m.text for m in mutation.line_mutants([line], 0, "edge_only")}
    assert got == expected


def _generator(line: str) -> Any:
    namespace: dict[str, Any] = {}
    source = (
        "def parts(n):\n"
        "    ms = {}\n"
        "    for k in range(n, 0, -1):\n"
        "        ms.clear()\n"
        "        ms[k] = n - k\n"
        f"{line}\n"
    )
    exec(compile(source, "<mutant>", "exec"), namespace)
    return namespace["parts"]


def test_a_copy_made_into_one_refilled_container_looks_right_item_by_item() -> None:
    gold_line = "        yield dict(ms)"
    (mutant,) = mutation.line_mutants([gold_line], 0, "reused_copy")
    assert mutant.detail == "dict(ms) -> one refilled container"
    gold, wrong = _generator(gold_line), _generator(mutant.text)
    # as each item is handed out, the mutant gives what gold gives ...
    assert [dict(p) for p in wrong(3)] == [dict(p) for p in gold(3)] == [{3: 0}, {2: 1}, {1: 2}]
    # ... a caller may change it without disturbing the generator ...
    it = wrong(3)
    next(it).clear()
    assert next(it) == {2: 1}
    # ... but every item is the same object, so collecting them shows only the last
    assert list(wrong(3)) == [{1: 2}] * 3 != list(gold(3))


@pytest.mark.parametrize(
    ("line", "refilled"),
    [
        ("        return list(self.items)", "[]"),
        ("        return self.items[:]", "[]"),
        ("        return state.copy()", "type(v)()"),
        ("        return copy.copy(state)", "type(v)()"),
        ("        yield set(seen)", "set()"),
    ],
)
def test_every_mutable_copy_that_is_handed_out_can_be_reused(line: str, refilled: str) -> None:
    (mutant,) = mutation.line_mutants([line], 0, "reused_copy")
    keyword = line.split()[0]
    assert f", {refilled})))(" in mutant.text
    assert mutant.text.startswith(line[: line.index(keyword)] + keyword + " (lambda v: ")


@pytest.mark.parametrize(
    "line",
    [
        "        x = dict(ms)",  # not handed out
        "        return tuple(ms)",  # immutable: nothing to refill
        "        return copy.deepcopy(ms)",
        "        return dict(a=1)",
    ],
)
def test_no_reused_container_where_nothing_mutable_is_handed_out(line: str) -> None:
    assert mutation.line_mutants([line], 0, "reused_copy") == []
