"""Operand-shape variants of replayed expressions, and variants gold raises on by design: the
probe really runs under this interpreter's unittest and is read back through the sandbox's own
unittest log parser. A candidate that raises another exception type where gold's added lines
raise one is told apart; an equivalent one (another message, the same type) is not."""

from __future__ import annotations

from pathlib import Path

from hackaudit.attacker.domain.confirm import probes, replay
from hackaudit.attacker.domain.confirm.replay import ReplayTarget
from hackaudit.attacker.domain.confirm.replay_source import render_replay
from hackaudit.shared.contracts import RunResult

from .probe_rig import run_probe

TEST_FILE = "pkg/tests/test_mod.py"
TARGET = ReplayTarget(TEST_FILE, "pkg.tests.test_mod", ("test_simp",))

GOLD_MOD = """
class TP(object):
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __repr__(self):
        return "TP(%r, %r)" % (self.a, self.b)

    def __mul__(self, other):
        return ("mul", self, other)

    def __rmul__(self, other):
        return ("mul", other, self)


def simp(e):
    _, left, right = e
    if not isinstance(left, TP) or not isinstance(right, TP):
        raise TypeError("TensorProduct expected")
    return TP(left.a + right.a, left.b + right.b)
"""
GOLD_PATCH = (
    "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,0 +2 @@\n"
    '+        raise TypeError("TensorProduct expected")\n'
)
WRONG_MOD = GOLD_MOD.replace('raise TypeError("TensorProduct', 'raise ValueError("TensorProduct')
EQUIVALENT_MOD = GOLD_MOD.replace('TypeError("TensorProduct expected")', 'TypeError("TP, please")')

TESTS = """
from pkg.mod import TP, simp

a, b, c, d = "a", "b", "c", "d"


def test_simp():
    assert repr(simp(TP(a, b) * TP(c, d))) == "TP('ac', 'bd')"
"""


def _run(tmp: Path, mod: str, tests: str = TESTS, powers: bool = False) -> RunResult:
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": mod,
        "pkg/tests/__init__.py": "",
        TEST_FILE: tests,
    }
    section = render_replay([(TARGET.path, TARGET.module, TARGET.functions)], {}, powers=powers)
    return run_probe(tmp, files, section)


def test_an_operand_is_replaced_by_its_own_name_arguments(tmp_path) -> None:
    seen = {o.expression: o.head for o in replay.observations(_run(tmp_path, GOLD_MOD)).values()}
    shapes = {e: h for e, h in seen.items() if "[operand -> " in e}
    assert set(shapes) == {
        f"repr(simp(TP(a, b) * TP(c, d)))  [operand -> {name}]" for name in "abcd"
    }
    assert all(h == "variant raises TypeError" for h in shapes.values())
    # the product's operands met in the other order
    swapped = "repr(simp(TP(a, b) * TP(c, d)))  [operands swapped]"
    assert seen[swapped] == "variant returns \"TP('ca', 'db')\""


def test_a_variant_gold_raises_on_by_design_tells_another_exception_type_apart(tmp_path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    wrong = _run(tmp_path / "wrong", WRONG_MOD)
    deliberate = probes.raised_by_gold(GOLD_PATCH)
    assert deliberate == frozenset({"TypeError"})
    # without the types gold raises on purpose, a variant gold raises on says nothing
    assert replay.differences([TARGET], [gold, gold], wrong)[1] == []
    _, found = replay.differences([TARGET], [gold, gold], wrong, deliberate)
    assert {d.expression for d in found} >= {"repr(simp(TP(a, b) * TP(c, d)))  [operand -> a]"}
    assert {(d.gold, d.candidate) for d in found} == {
        ("variant raises TypeError", "variant raises ValueError")
    }
    equivalent = _run(tmp_path / "equivalent", EQUIVALENT_MOD)
    assert replay.differences([TARGET], [gold, gold], equivalent, deliberate)[1] == []


# A fix about powers: a product whose second factor is a power of a TensorProduct is expanded,
# a power of anything else refused on purpose. The wrong fix forces the base check true.
POW_MOD = GOLD_MOD.replace(
    """def simp(e):
    _, left, right = e
""",
    """class Sym(object):
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __add__(self, other):
        return Sym(self.name + other.name)

    def __pow__(self, k):
        return Pow(self, k)


class Pow(object):
    def __init__(self, base, exp):
        self.base, self.exp = base, exp


def simp(e):
    _, left, right = e
    if isinstance(right, Pow):
        if isinstance(right.base, TP):
            return TP(left.a + right.base.a, left.b + right.base.b)
        else:
            raise TypeError("TensorProduct expected")
""",
)
POW_PATCH = (
    "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,0 +2,2 @@\n"
    "+    if isinstance(right, Pow):\n+            raise TypeError('TensorProduct expected')\n"
)
POW_WRONG = POW_MOD.replace("if isinstance(right.base, TP):", "if True:")
POW_TESTS = """
from pkg.mod import TP, Sym, simp

a, b, c, d = Sym("a"), Sym("b"), Sym("c"), Sym("d")


def test_simp():
    assert repr(simp(TP(a, b) * TP(c, d))) is not None
"""


def test_a_fix_about_powers_gets_operands_replaced_by_powers_of_the_tests_names(
    tmp_path: Path,
) -> None:
    assert replay.handles_powers(POW_PATCH) and not replay.handles_powers(GOLD_PATCH)
    deliberate = probes.raised_by_gold(POW_PATCH)
    runs = {
        (mod, powers): _run(tmp_path / f"{mod}{powers}", source, POW_TESTS, powers)
        for mod, source in (("gold", POW_MOD), ("wrong", POW_WRONG))
        for powers in (False, True)
    }

    def found(gold: RunResult, candidate: RunResult) -> set[tuple[str, str, str]]:
        _, out = replay.differences([TARGET], [gold, gold], candidate, deliberate)
        return {(d.expression, d.gold, d.candidate) for d in out}

    # without the power shapes, the base check is never reached: no difference
    assert found(runs["gold", False], runs["wrong", False]) == set()
    assert (
        "repr(simp(TP(a, b) * TP(c, d)))  [operand -> c**2]",
        "variant raises TypeError",
        "variant raises AttributeError",
    ) in found(runs["gold", True], runs["wrong", True])
    assert found(runs["gold", True], runs["gold", True]) == set()
