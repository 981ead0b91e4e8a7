"""Replayed tests as probes: the probe file really runs (under this interpreter's unittest), its
report goes through the sandbox's own unittest log parser, and the attacker reads it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.attacker.domain.confirm import replay
from hackaudit.attacker.domain.confirm.confirmation import (
    ConfirmationConfig,
    compare_probes,
    gold_suite_budget,
    gold_suite_problem,
    suite_budget,
)
from hackaudit.attacker.domain.confirm.replay import ReplayTarget
from hackaudit.attacker.domain.confirm.replay_source import render_replay
from hackaudit.shared.contracts import RunResult, RunStatus, Task, TestStatus

from .probe_rig import run_probe

TEST_FILE = "pkg/tests/test_mod.py"
TARGET = ReplayTarget(TEST_FILE, "pkg.tests.test_mod", ())

RAISES = '''
class raises(object):
    """sympy's `raises`: a call form and a context-manager form."""

    def __init__(self, exc, code=None):
        self.exc = exc
        if code is not None:
            try:
                code()
            except exc:
                return
            raise AssertionError("did not raise")

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise AssertionError("did not raise")
        return issubclass(kind, self.exc)
'''

GOLD_MOD = """
class Sym(object):
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class Pred(object):
    def __init__(self, name):
        self.name = name

    def __call__(self, arg):
        return Applied(self, arg)


class Applied(object):
    def __init__(self, pred, arg):
        self.pred, self.arg = pred, arg

    def __repr__(self):
        return "Q.%s(%s)" % (self.pred.name, self.arg)


class Q(object):
    positive = Pred("positive")


def sstr(obj):
    return repr(obj)


def half(n):
    if n < 0:
        raise ValueError(n)
    return n // 2


def parts(n):
    for k in range(n, 0, -1):
        yield {k: 1, "rest": n - k}
"""

# Wrong: `sstr` special-cases the printed form; the object itself still prints the old way.
# `half` wrongly accepts 3 -> 2; `parts` yields one dict again and again.
WRONG_MOD = (
    GOLD_MOD.replace('return "Q.%s(%s)" % (self.pred.name, self.arg)',
                     'return "%s(%s)" % (self.pred.name, self.arg)')
    .replace("    return repr(obj)", "    return 'Q.' + repr(obj) if isinstance(obj, Applied) "
             "else repr(obj)")
    .replace("    return n // 2", "    return n // 2 + (n == 3)")
    .replace('''    for k in range(n, 0, -1):
        yield {k: 1, "rest": n - k}''', '''    ms = {}
    for k in range(n, 0, -1):
        ms.clear()
        ms.update({k: 1, "rest": n - k})
        yield ms''')
)  # fmt: skip

# Equivalent to gold, written differently.
EQUIVALENT_MOD = GOLD_MOD.replace("    return n // 2", "    return int(n / 2)").replace(
    """    for k in range(n, 0, -1):
        yield {k: 1, "rest": n - k}""",
    """    k = n
    while k > 0:
        yield dict([(k, 1), ("rest", n - k)])
        k -= 1""",
)

PYTEST_STYLE = """
from pkg.mod import Q, Sym, half, parts, sstr


def test_print():
    x = Sym("x")
    assert sstr(Q.positive(x)) == "Q.positive(x)"


def test_half():
    assert half(4) == 2
    assert not half(1)
    assert half(6) > 2


def test_parts():
    assert [sorted(p) for p in parts(2)][0] == [2, "rest"] or True
    assert len(list(parts(3))) == 3


def test_not_graded():
    assert half(100) == 50
"""

UNITTEST_STYLE = """
import unittest

from pkg.mod import Q, Sym, half, sstr


class ModTest(unittest.TestCase):
    def setUp(self):
        self.x = Sym("x")

    def test_print(self):
        self.assertEqual(sstr(Q.positive(self.x)), "Q.positive(x)")

    def test_half(self):
        self.assertEqual(half(4), 2)
        self.assertTrue(half(6) == 3)
        self.assertRaises(ValueError, half, -1)
        with self.assertRaises(ValueError):
            half(-2)
"""

SYMPY_STYLE = """
from pkg.mod import Q, Sym, half, sstr
from pkg.testing import raises


def test_print():
    x = Sym("x")
    assert sstr(Q.positive(x)) == "Q.positive(x)"


def test_half():
    assert half(4) == 2
    raises(ValueError, lambda: half(-1))
    with raises(ValueError):
        half(-3)
"""


def _files(mod: str, tests: str) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/mod.py": mod,
        "pkg/testing.py": RAISES,
        "pkg/tests/__init__.py": "",
        TEST_FILE: tests,
    }


def _run(
    tmp: Path,
    mod: str,
    tests: str,
    functions: tuple[str, ...],
    variants: dict[str, list[object]] | None = None,
) -> RunResult:
    """The probe run as the sandbox would grade it: unittest's log through its parser."""
    section = render_replay([(TEST_FILE, "pkg.tests.test_mod", functions)], variants or {})
    return run_probe(tmp, _files(mod, tests), section)


def _expressions(result: RunResult) -> dict[str, str]:
    return {o.expression: o.head for o in replay.observations(result).values()}


@pytest.mark.parametrize(
    ("tests", "functions", "expected"),
    [
        (
            PYTEST_STYLE,
            ("test_print", "test_half", "test_parts"),
            {
                "sstr(Q.positive(x))": "returns 'Q.positive(x)'",
                "Q.positive(x)": "returns Applied:Q.positive(x)",
                "half(4)": "returns 2",
                "half(1)": "returns 0",
                "half(6)": "returns 3",
                "list(parts(3))": "returns list[",
            },
        ),
        (
            UNITTEST_STYLE,
            ("test_print", "test_half"),
            {
                "sstr(Q.positive(self.x))": "returns 'Q.positive(x)'",
                "half(4)": "returns 2",
                "half(6) == 3": "returns True",
                "half(-1)": "raises ValueError",
                "half(-2)": "raises ValueError",
            },
        ),
        (
            SYMPY_STYLE,
            ("test_print", "test_half"),
            {
                "sstr(Q.positive(x))": "returns 'Q.positive(x)'",
                "half(4)": "returns 2",
                "half(-1)": "raises ValueError",
                "half(-3)": "raises ValueError",
            },
        ),
    ],
    ids=["pytest", "unittest", "sympy"],
)
def test_asserted_operands_are_observed(tmp_path, tests, functions, expected) -> None:
    seen = _expressions(_run(tmp_path, GOLD_MOD, tests, functions))
    for expression, head in expected.items():
        assert expression in seen, sorted(seen)
        assert seen[expression].startswith(head), (expression, seen[expression])
    # literals are not observed, and a test not asked for is not replayed
    assert "'Q.positive(x)'" not in seen and "half(100)" not in seen


def test_literal_variants_are_observed_and_marked(tmp_path) -> None:
    seen = _expressions(_run(tmp_path, GOLD_MOD, PYTEST_STYLE, ("test_half",), {"4": [0, 5]}))
    assert seen["half(4)  [literal 4 -> 0]"] == "variant returns 0"
    assert seen["half(4)  [literal 4 -> 5]"] == "variant returns 2"


ARITHMETIC_ARGUMENT = """
from pkg.mod import half


def test_offset():
    base = 1
    assert half(base + 4) == 2
"""


def test_a_literal_in_arithmetic_passed_to_a_call_is_varied(tmp_path) -> None:
    # `half(base + 4)` checks one built value; `half(base + 2)` reaches the input the wrong
    # module special-cases (3), where gold and it part.
    table = {"4": [0, 2]}
    gold = _expressions(
        _run(tmp_path / "g", GOLD_MOD, ARITHMETIC_ARGUMENT, ("test_offset",), table)
    )
    wrong = _expressions(
        _run(tmp_path / "w", WRONG_MOD, ARITHMETIC_ARGUMENT, ("test_offset",), table)
    )
    assert gold["half(base + 4)"] == wrong["half(base + 4)"] == "returns 2"
    assert gold["half(base + 4)  [literal 4 -> 0]"] == "variant returns 0"
    assert gold["half(base + 4)  [literal 4 -> 2]"] == "variant returns 1"
    assert wrong["half(base + 4)  [literal 4 -> 2]"] == "variant returns 2"


def test_an_iterator_is_snapshotted_as_it_yields(tmp_path) -> None:
    gold = _expressions(_run(tmp_path / "g", GOLD_MOD, PYTEST_STYLE, ("test_parts",)))
    wrong = _expressions(_run(tmp_path / "w", WRONG_MOD, PYTEST_STYLE, ("test_parts",)))
    # each item as it was when yielded: the same values either way ...
    assert gold["parts(3)"].startswith("returns generator[dict{3: 1, 'rest': 0}, dict{2: 1, ")
    assert "changed after" not in gold["parts(3)"]
    # ... but the reused dict changed after it was handed out
    assert wrong["parts(3)"] == gold["parts(3)"].replace(
        "generator[", "generator (items changed after they were yielded: 0, 1)["
    )


def _task(**extra: object) -> Task:
    fields: dict[str, object] = {
        "instance_id": "pkg-1",
        "repo": "example/pkg",
        "base_commit": "0" * 40,
        "patch": "",
        "test_patch": (
            f"diff --git a/{TEST_FILE} b/{TEST_FILE}\n--- a/{TEST_FILE}\n+++ b/{TEST_FILE}\n"
            "@@ -1,2 +1,5 @@ def test_old():\n def test_old():\n     pass\n+\n"
            "+def test_new():\n+    assert f(3) == 'abc'\n"
        ),
        "FAIL_TO_PASS": ["test_new"],
        "PASS_TO_PASS": ["test_old", "test_elsewhere"],
    }
    fields.update(extra)
    return Task.model_validate(fields)


@pytest.mark.parametrize(
    ("f2p", "p2p", "expected"),
    [
        (["test_new"], ["test_old", "test_elsewhere"], ("test_new", "test_old", "test_elsewhere")),
        (
            [f"{TEST_FILE}::test_new"],
            [f"{TEST_FILE}::Cls::test_old[1-2]"],
            ("test_new", "test_old"),
        ),
        (["other/test_x.py::test_new"], ["test_old (pkg.tests.test_mod.Cls)"], ("test_old",)),
        (["test_new (other.Cls)"], [], ()),
    ],
)
def test_replay_targets_from_every_runners_test_ids(f2p, p2p, expected) -> None:
    found = replay.targets(_task(FAIL_TO_PASS=f2p, PASS_TO_PASS=p2p))
    assert [t.functions for t in found] == ([expected] if expected else [])
    if found:
        assert found[0].path == TEST_FILE and found[0].module == "pkg.tests.test_mod"


def test_variant_table_reuses_probe_inputs() -> None:
    table = replay.variant_table(_task().test_patch)
    assert table["3"] == [0, 4, 2] and table["'abc'"][0] == ""


def _confirm(tmp: Path, candidate_mod: str, tests: str, functions: tuple[str, ...]) -> str:
    gold_runs = [_run(tmp / f"gold{i}", GOLD_MOD, tests, functions) for i in range(3)]
    candidate = _run(tmp / "candidate", candidate_mod, tests, functions)
    target = ReplayTarget(TEST_FILE, "pkg.tests.test_mod", functions)
    result = compare_probes([], gold_runs, candidate, [target])
    return result.evidence or f"NONE: {result.note}"


@pytest.mark.parametrize("tests", [PYTEST_STYLE, UNITTEST_STYLE, SYMPY_STYLE])
def test_wrong_candidate_is_confirmed_with_input_and_both_outputs(tmp_path, tests) -> None:
    evidence = _confirm(tmp_path, WRONG_MOD, tests, ("test_print",))
    assert "observations of replayed tests differ from gold" in evidence
    assert f"in {TEST_FILE}::" in evidence
    assert "gold returns Applied:Q.positive(x), candidate returns Applied:positive(x)" in evidence


def test_reused_dict_generator_is_confirmed(tmp_path) -> None:
    evidence = _confirm(tmp_path, WRONG_MOD, PYTEST_STYLE, ("test_parts",))
    assert "`parts(3)` in pkg/tests/test_mod.py::test_parts" in evidence
    assert "(items changed after they were yielded: 0, 1)" in evidence


@pytest.mark.parametrize("tests", [PYTEST_STYLE, UNITTEST_STYLE, SYMPY_STYLE])
def test_equivalent_candidate_is_never_confirmed(tmp_path, tests) -> None:
    functions = ("test_print", "test_half", "test_parts")
    assert _confirm(tmp_path, EQUIVALENT_MOD, tests, functions).startswith("NONE: ")


def test_a_replay_that_raises_where_gold_runs_through_is_evidence(tmp_path) -> None:
    crashing = GOLD_MOD.replace("        self.name = name\n\n    def __repr__", "        "
                                "self.name = name[5]\n\n    def __repr__", 1)  # fmt: skip
    evidence = _confirm(tmp_path, crashing, PYTEST_STYLE, ("test_print",))
    assert "gold runs through, candidate raises IndexError at line 6" in evidence


def _gold(duration: float, status: RunStatus = RunStatus.COMPLETED) -> RunResult:
    return RunResult(status=status, duration_s=duration, tests={"t": TestStatus.PASSED})


@pytest.mark.parametrize(
    ("durations", "config", "expected"),
    [
        ([1.0, 2.0], {}, 30.0),  # 3 x 2s under the floor
        ([40.0, 50.0], {}, 150.0),  # 3 x gold's longest run of the suite
        ([300.0], {}, 600.0),  # capped
        ([10.0], {"suite_time_factor": 2.0, "suite_time_floor_s": 5.0}, 20.0),
        ([10.0], {"suite_timeout_s": 42.0}, 42.0),  # a configured timeout wins
        ([], {}, 600.0),  # no gold timing: the cap
    ],
)
def test_suite_budget_is_sized_from_golds_run_of_the_suite(durations, config, expected) -> None:
    gold = [_gold(d) for d in durations]
    assert suite_budget(ConfirmationConfig(**config), gold) == expected


def test_a_gold_run_that_went_on_in_the_background_sizes_the_timeout_by_its_whole_time() -> None:
    """Gold's run held a slot 10 s and went on 40 s in the background at a lowered weight: the
    same work in a slot may take up to the 50 s, so the candidate gets 3 x 50 s, not 3 x 10 s."""
    moved = RunResult(status=RunStatus.COMPLETED, duration_s=10.0, background_s=40.0)
    assert suite_budget(ConfirmationConfig(), [moved]) == 150.0


def test_gold_runs_the_wider_suite_within_the_cap_or_the_configured_timeout() -> None:
    assert gold_suite_budget(ConfirmationConfig()) == 600.0
    assert gold_suite_budget(ConfirmationConfig(suite_timeout_s=42.0)) == 42.0


def test_a_suite_that_does_not_complete_on_gold_is_no_evidence() -> None:
    assert gold_suite_problem([_gold(1.0)], 60) is None
    timed_out = gold_suite_problem([_gold(1.0), _gold(60, RunStatus.TIMEOUT)], 60)
    assert timed_out == "gold's run of the wider suite timed out (budget 60s)"
    empty = RunResult(status=RunStatus.COMPLETED, log_tail="x\nImportError: no module named q")
    assert gold_suite_problem([empty], 60) == (
        "gold's run of the wider suite reported no test (log ends: ImportError: no module named q)"
    )
