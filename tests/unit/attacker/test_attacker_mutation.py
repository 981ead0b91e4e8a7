"""Mutation operators: one table per operator, and every mutant of gold applies at base."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.generate.strategies.mutation import OPERATORS, line_mutants, mutants

# (operator, line, mutated lines expected among the mutants, lines that must not appear)
CASES = [
    ("comparison", "    if a < b:", ["    if a <= b:"], []),
    ("comparison", "    if a >= b:", ["    if a > b:"], []),
    ("comparison", "    ok = x == y", ["    ok = x != y"], []),
    ("comparison", "    if x is None:", ["    if x is not None:"], []),
    ("comparison", "    if x is not None:", ["    if x is None:"], []),
    ("comparison", "    if k in seen:", ["    if k not in seen:"], []),
    ("comparison", "    for k in seen:", [], ["    for k not in seen:"]),
    ("comparison", '    s = "a < b"', [], ['    s = "a <= b"']),
    ("boundary", "    return n - 1", ["    return n"], []),
    ("boundary", "    if len(x) > 3:", ["    if len(x) > 4:", "    if len(x) > 2:"], []),
    ("boundary", "    return x[2]", ["    return x[3]", "    return x[1]"], []),
    ("boolean", "    return a and b", ["    return a or b"], []),
    ("boolean", "    flag = True", ["    flag = False"], []),
    ("boolean", "    if not done:", ["    if done:"], []),
    ("boolean", "    if x is not None:", [], ["    if x is None:"]),
    ("arithmetic", "    total = a + b", ["    total = a - b"], []),
    ("arithmetic", "    total += v", ["    total -= v"], []),
    ("arithmetic", "    y = -x", [], ["    y = +x"]),
    (
        "arithmetic",
        "    f(*args, **kwargs)",
        [],
        ["    f(/args, **kwargs)", "    f(*args, *kwargs)"],
    ),
    ("constant", "    limit = 10", ["    limit = 11", "    limit = 0"], []),
    ("constant", '    sep = ","', ['    sep = ""'], []),
    ("constant", '    """A docstring."""', [], ['    """"""']),
    ("return_value", "    return total / n", ["    return None"], []),
    ("return_value", "    return True", ["    return None", "    return False"], []),
    ("return_value", "    return 0.0", ["    return None", "    return 1"], []),
    ("return_value", "    return", [], ["    return None"]),
    (
        "argument_swap",
        "    return [dict(zip(self.headers, row)) for row in self.rows]",
        ["    return [dict(zip(row, self.headers)) for row in self.rows]"],
        [],
    ),
    ("argument_swap", "    if isinstance(x, str):", ["    if isinstance(str, x):"], []),
    ("argument_swap", "    f(a, a)", [], ["    f(a, a)"]),
    ("argument_swap", "    f(*args, **kwargs)", [], ["    f(**kwargs, *args)"]),
    ("argument_swap", "    f(a, b, x)", [], ["    f(b, a, x)"]),
    ("statement_deletion", "    total += v", ["    pass"], []),
    ("statement_deletion", "    raise ValueError(x)", ["    pass"], []),
    ("statement_deletion", "    log(x)", ["    pass"], []),
    ("statement_deletion", "    if x:", [], ["    pass"]),
    ("statement_deletion", "    return x", [], ["    pass"]),
]


@pytest.mark.parametrize(("operator", "line", "expected", "absent"), CASES)
def test_operator(operator: str, line: str, expected: list[str], absent: list[str]) -> None:
    fragment = ["def f(self, a, b, x, y, n, k, seen, done, v, args, kwargs):", line, "    pass"]
    texts = [m.text for m in line_mutants(fragment, 1, operator)]
    for text in expected:
        assert text in texts
    for text in absent:
        assert text not in texts
    assert all(m.operator == operator for m in line_mutants(fragment, 1, operator))


def test_mutants_that_break_the_fragment_are_dropped() -> None:
    # Deleting the only statement of a block would leave it empty... `pass` keeps it valid;
    # but turning `else:` context into anything is never attempted, and the fragment parses.
    fragment = ["def f(x):", "    if x:", "        y = x + 1", "    return y"]
    for operator in OPERATORS:
        for m in line_mutants(fragment, 2, operator):
            source = "\n".join([*fragment[:2], m.text, *fragment[3:]])
            compile(source, "<mutant>", "exec")


def test_every_gold_mutant_applies_and_changes_only_added_lines(tiny) -> None:
    produced = mutants(tiny.task)
    assert len(produced) >= 10
    operators = {c.provenance.detail.split(":")[0] for c in produced}
    assert {"comparison", "boolean", "return_value", "arithmetic"} <= operators
    gold_removed = {ln for ln in tiny.task.patch.splitlines() if ln.startswith("-")}
    for c in produced:
        assert tiny.applies(c.diff) == (True, ""), c.provenance.detail
        removed = {ln for ln in c.diff.splitlines() if ln.startswith("-")}
        assert removed == gold_removed  # the base side is gold's: only added lines change
        assert c.provenance.strategy == "mutation"
        assert c.provenance.parent_id is not None
    assert len({c.content_hash for c in produced}) == len(produced)


def test_mutants_cover_every_line_first_then_interleave_operators(tiny) -> None:
    produced = mutants(tiny.task)
    lines = [c.provenance.detail.rsplit(" in ", 1)[1] for c in produced]
    distinct = list(dict.fromkeys(lines))
    assert len(distinct) > 1
    assert lines[: len(distinct)] == distinct  # one mutant of every line before a second of any
    first_line = [
        c.provenance.detail.split(":")[0]
        for c, line in zip(produced, lines, strict=True)
        if line == lines[0]
    ]
    operators = list(dict.fromkeys(first_line))
    assert first_line[: len(operators)] == operators  # within a line: one of each operator first
    assert operators == [op for op in OPERATORS if op in operators]
