"""A parametrized test whose rows are code, in the shape of sphinx-8265: gold's unparser writes a
subscript's tuple without brackets unless the tuple is empty; a stand-in drops the emptiness
check and writes `Tuple[()]` as `Tuple[]`. No row has an empty tuple as a subscript, so both pass
every row. The replay runs the test once more per row with a display in the row's code emptied
or cut to its first item: `Tuple[int, int]` becomes `Tuple[()]`, where the two differ. An
equivalent rewrite of gold differs on nothing. The probe really runs under this interpreter's
unittest and is read back through the sandbox's own log parser."""

from __future__ import annotations

from pathlib import Path

from hackaudit.attacker.domain.confirm import replay
from hackaudit.attacker.domain.confirm.replay import ReplayTarget
from hackaudit.shared.contracts import RunResult

from .probe_rig import replay_differences, replay_run

TEST_FILE = "pkg/tests/test_unparse.py"
TARGET = ReplayTarget(TEST_FILE, "pkg.tests.test_unparse", ("test_unparse",))

GOLD_MOD = """import ast


def _simple(value):
    return isinstance(value, ast.Tuple) and bool(value.elts)


def unparse(node):
    if isinstance(node, ast.Subscript):
        if _simple(node.slice):
            inner = ", ".join(unparse(e) for e in node.slice.elts)
        else:
            inner = unparse(node.slice)
        return "%s[%s]" % (unparse(node.value), inner)
    if isinstance(node, ast.Tuple):
        return "(" + ", ".join(unparse(e) for e in node.elts) + ")"
    if isinstance(node, ast.List):
        return "[" + ", ".join(unparse(e) for e in node.elts) + "]"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return repr(node.value)
    raise NotImplementedError(type(node).__name__)
"""
STAND_IN_MOD = GOLD_MOD.replace(" and bool(value.elts)", "")
EQUIVALENT_MOD = GOLD_MOD.replace(" and bool(value.elts)", " and len(value.elts) > 0")

TESTS = """
import ast

import pytest

from pkg.unparser import unparse


@pytest.mark.parametrize("source,expected", [
    ("a", "a"),
    ("Tuple[int, int]", "Tuple[int, int]"),
    ("[1, 2]", "[1, 2]"),
    ("(1, 2, 3)", "(1, 2, 3)"),
])
def test_unparse(source, expected):
    module = ast.parse(source)
    assert unparse(module.body[0].value) == expected
"""


def _run(tmp: Path, mod: str) -> RunResult:
    files = {
        "pkg/__init__.py": "",
        "pkg/unparser.py": mod,
        "pkg/tests/__init__.py": "",
        TEST_FILE: TESTS,
    }
    return replay_run(tmp, files, TARGET)


def test_a_rows_code_with_its_tuple_emptied_tells_the_stand_in_from_gold(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    stand_in = _run(tmp_path / "stand-in", STAND_IN_MOD)
    found = replay_differences(TARGET, gold, stand_in)
    assert found, "the stand-in was not told apart"
    shown = {(e, g, c) for e, g, c in found if "'Tuple[int, int]' -> 'Tuple[()]'" in e}
    assert shown, found
    expression, on_gold, on_candidate = shown.pop()
    assert expression.startswith("unparse(module.body[0].value)")
    assert (on_gold, on_candidate) == ("returns 'Tuple[()]'", "returns 'Tuple[]'")


def test_gold_and_its_equivalent_rewrite_agree_on_every_rows_variant(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    rewrite = _run(tmp_path / "rewrite", EQUIVALENT_MOD)
    assert replay_differences(TARGET, gold, rewrite) == set()
    shown = [o.expression for o in replay.observations(gold).values()]
    # every code display of the rows was varied: emptied, then cut to its first item
    for note in ("'Tuple[()]'", "'Tuple[(int,)]'", "'[]'", "'[1]'", "'()'", "'(1,)'"):
        assert any(f"-> {note}]" in e for e in shown), (note, shown)
    assert not any("'a' ->" in e for e in shown)  # a name alone holds no display
