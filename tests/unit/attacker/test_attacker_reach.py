"""Probes aimed at gold's changed lines no graded test executes: which lines, which graded calls,
the program run for real on a small dispatching printer (values kept from the repository's own
tests, the graded call made again with them, only calls that execute the lines on gold counted),
and the evidence folded into the probe check."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.attacker.domain.confirm import reach
from hackaudit.attacker.domain.confirm.confirmation import Check, CheckResult, with_reach
from hackaudit.attacker.domain.confirm.programs import reach_program
from hackaudit.shared.contracts import (
    GoldCoverage,
    HunkCoverage,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)

from .conftest import diff_of, make_repo
from .probe_rig import run_probe

BASE_SHOW = """\
class Shower:
    def __init__(self, digits=None):
        self.digits = digits

    def show(self, value):
        return getattr(self, "_show_" + type(value).__name__)(value)

    def _show_float(self, value):
        return repr(value)

    def _show_int(self, value):
        return str(value)

    def _show_str(self, value):
        return repr(value)

    def _show_Fraction(self, value):
        if value.denominator == 1:
            return str(value.numerator)
        return "%d/%d" % (value.numerator, value.denominator)


def show(value, **settings):
    return Shower(**settings).show(value)
"""

# gold: the digits setting in both number methods
GOLD_SHOW = BASE_SHOW.replace(
    "    def _show_float(self, value):\n        return repr(value)\n",
    "    def _show_float(self, value):\n"
    "        if self.digits is None:\n"
    "            return repr(value)\n"
    '        return "%.*f" % (self.digits, value)\n',
).replace(
    "            return str(value.numerator)\n",
    "            return str(value.numerator)\n"
    "        if self.digits is not None:\n"
    '            return "%.*f" % (self.digits, value)\n',
)
# the wrong patch the graded tests accept: the float method alone
PARTIAL_SHOW = GOLD_SHOW.replace(
    '        if self.digits is not None:\n            return "%.*f" % (self.digits, value)\n',
    "",
)
BASE_TESTS = """\
from fractions import Fraction

from pkg.show import show


def test_fraction():
    assert show(Fraction(1, 3)) == "1/3"
    assert show(Fraction(4, 2)) == "2"


def test_text():
    assert show("a") == "'a'"
"""
GRADED = """

def test_digits():
    assert show(2.5, digits=2) == "2.50"
"""
BASE = {"pkg/__init__.py": "", "pkg/show.py": BASE_SHOW, "tests/__init__.py": "",
        "tests/test_show.py": BASE_TESTS}  # fmt: skip


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    repo = make_repo(tmp_path_factory.mktemp("base"), BASE)
    gold = diff_of(repo, {"pkg/show.py": GOLD_SHOW}, ["pkg/show.py"])
    tests = diff_of(repo, {"tests/test_show.py": BASE_TESTS + GRADED}, ["tests/test_show.py"])
    return Task.model_validate(
        {"instance_id": "pkg__pkg-1", "repo": "pkg/pkg", "base_commit": "abc123", "patch": gold,
         "test_patch": tests, "FAIL_TO_PASS": ["tests/test_show.py::test_digits"]}
    )  # fmt: skip


def _line(text: str, fragment: str, nth: int = 0) -> int:
    found = [i for i, line in enumerate(text.splitlines(), 1) if fragment in line]
    return found[nth]


FLOAT_LINES = (_line(GOLD_SHOW, "if self.digits is None"), _line(GOLD_SHOW, "%.*f", 0))
# the Fraction hunk: its `if` runs under the base tests, its body under none
FRACTION_IF = _line(GOLD_SHOW, "if self.digits is not None")
FRACTION_BODY = _line(GOLD_SHOW, "%.*f", 1)


def _coverage(*, fraction_body_run: bool = False) -> GoldCoverage:
    graded = ("tests.test_show.test_digits",)
    fraction = {FRACTION_IF: graded} | ({FRACTION_BODY: graded} if fraction_body_run else {})
    return GoldCoverage(
        measured=True,
        hunks=(
            HunkCoverage(path="pkg/show.py", start=FLOAT_LINES[0], lines=FLOAT_LINES,
                         executed=dict.fromkeys(FLOAT_LINES, graded)),
            HunkCoverage(path="pkg/show.py", start=FRACTION_IF,
                         lines=(FRACTION_IF, FRACTION_BODY), executed=fraction),
        ),
    )  # fmt: skip


# --- planning ------------------------------------------------------------------------------------


def test_the_targets_are_the_unexecuted_lines_with_the_functions_holding_them(task: Task) -> None:
    targets = reach.unexecuted(_coverage(), task.gold_diff.applied())
    assert targets == (
        reach.Target("pkg/show.py", "pkg.show", (FRACTION_BODY,), ("_show_Fraction",)),
    )
    assert reach.unexecuted(_coverage(fraction_body_run=True), task.gold_diff.applied()) == ()
    assert reach.unexecuted(GoldCoverage(measured=False, reason="no run")) == ()


def test_the_shapes_are_the_graded_calls_with_their_options(task: Task) -> None:
    assert reach.shapes(task) == (
        reach.Shape("tests/test_show.py", "tests.test_show", (), "show", ("2.5",),
                    (("digits", "2"),)),
    )  # fmt: skip


def test_values_come_from_the_reaching_tests_or_the_test_patch_directories(task: Task) -> None:
    fallback = reach.plan(task, _coverage())
    assert fallback is not None and fallback.harvest == ("tests",)
    named = reach.plan(task, _coverage(), ["tests.test_show.test_fraction"])
    assert named is not None and named.harvest == ("tests.test_show.test_fraction",)
    assert reach.plan(task, _coverage(fraction_body_run=True)) is None


# --- the program run for real ------------------------------------------------------------------


def _run(root: Path, show_text: str, plan: reach.ReachPlan) -> RunResult:
    files = {**BASE, "pkg/show.py": show_text, "tests/test_show.py": BASE_TESTS + GRADED}
    return run_probe(root, files, reach.source(plan, total_s=20.0))


def test_a_graded_call_given_a_kept_value_shows_the_partial_fix(task: Task, tmp_path: Path) -> None:
    plan = reach.plan(task, _coverage())
    assert plan is not None
    gold = _run(tmp_path / "gold", GOLD_SHOW, plan)
    reference = reach.reference([gold, gold])
    # only the values the hooked method is given are kept (Fraction(1, 3), Fraction(2, 1));
    # Fraction(1, 3) reaches gold's unexecuted line, Fraction(2, 1) does not and is left out
    assert sorted(o.call for o in reference.values()) == ["show(Fraction(1, 3), digits=2)"]
    assert all(o.reached == (0,) for o in reference.values())
    outputs = reach.outputs(gold)
    assert sorted(o.call for o in outputs.values()) == [
        "show(Fraction(1, 3), digits=2)",
        "show(Fraction(2, 1), digits=2)",
    ]
    found = reach.differences(plan, reference, _run(tmp_path / "partial", PARTIAL_SHOW, plan))
    assert [(d.origin, d.expression, d.test, d.gold, d.candidate) for d in found] == [
        ("reach", "show(Fraction(1, 3), digits=2)", "tests/test_show.py::", "returns '0.33'",
         "returns '1/3'")
    ]  # fmt: skip
    assert reach.differences(plan, reference, _run(tmp_path / "again", GOLD_SHOW, plan)) == []


def test_named_reaching_tests_are_run_alone(task: Task, tmp_path: Path) -> None:
    plan = reach.plan(task, _coverage(), ["tests.test_show.test_text"])
    assert plan is not None
    # test_text gives the hooked method nothing: no value, no call
    assert reach.outputs(_run(tmp_path, GOLD_SHOW, plan)) == {}


# --- the program's pieces ------------------------------------------------------------------------


def test_a_value_is_kept_once_and_as_it_was_given() -> None:
    kept = reach_program._Kept(2)
    held = [1]
    kept.add(held)
    held.append(2)
    kept.add([1])
    kept.add("x")
    kept.add("y")
    assert [v for _, v in kept.values] == [[1], "x"]


def test_a_test_entry_is_a_name_a_file_or_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tdir").mkdir()
    (tmp_path / "tdir" / "__init__.py").write_text("")
    (tmp_path / "tdir" / "test_a.py").write_text("def test_one():\n    pass\n")
    (tmp_path / "tdir" / "helper.py").write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert reach_program._test_files("tdir") == ["tdir/test_a.py"]
    [module] = reach_program._tests_of("tdir")
    assert [f.__name__ for f in reach_program._runnables(module)] == ["test_one"]
    [function] = reach_program._tests_of("tdir.test_a.test_one")
    assert function is module.test_one
    assert reach_program._tests_of("tdir/missing.py") == []


# --- folded into the probe check ---------------------------------------------------------------


def _named(*names: str) -> RunResult:
    return RunResult(status=RunStatus.COMPLETED, tests=dict.fromkeys(names, TestStatus.PASSED))


def test_a_reaching_difference_is_evidence_beside_the_other_probes(task: Task) -> None:
    plan = reach.plan(task, _coverage())
    third = "show(Fraction(1, 3), digits=2)"
    gold = _named(
        f"test_reach_s0kaaaaaaaaaa_111111111111_h0 =>> {third} =>> returns '0.33' <<=",
        "test_reach_s0kbbbbbbbbbb_222222222222_n =>> show('a', digits=2) =>> returns \"'a'\" <<=",
    )
    candidate = _named(
        f"test_reach_s0kaaaaaaaaaa_333333333333_n =>> {third} =>> returns '1/3' <<=",
        "test_reach_s0kbbbbbbbbbb_444444444444_n =>> show('a', digits=2) =>> returns 'x' <<=",
    )
    other = CheckResult(check=Check.PROBES, note="3 probe cases agree with gold", compared=3)
    found = with_reach(other, plan, [gold, gold], candidate)
    assert found.evidence is not None
    assert (
        "show(Fraction(1, 3), digits=2)`: gold returns '0.33', candidate returns '1/3'"
        in found.evidence
    )
    assert "show('a'" not in found.evidence  # gold's call executes no target line
    assert found.compared == 4
    assert [d.expression for d in found.differences] == ["show(Fraction(1, 3), digits=2)"]
    same = with_reach(other, plan, [gold, gold], gold)
    assert same.evidence is None and "1 calls reaching gold's lines" in same.note
    assert with_reach(other, None, [gold], candidate) == other


def test_without_the_function_in_the_hunk_gold_file_text_names_it() -> None:
    """A hunk deep in a method shows no `def` line; gold's file text, when the coverage run
    returned it, says which method holds the lines (the program finds it by name on a
    candidate's file, whose lines may be numbered otherwise)."""
    text = (
        "class P:\n    def f(self, x):\n        y = 1\n        return y\n\n\ndef g():\n    pass\n"
    )
    hunk = HunkCoverage(path="pkg/p.py", start=4, lines=(4,), executed={})
    coverage = GoldCoverage(measured=True, hunks=(hunk,))
    assert reach.unexecuted(coverage, None, {"pkg/p.py": text}) == (
        reach.Target("pkg/p.py", "pkg.p", (4,), ("f",)),
    )
    assert reach.unexecuted(coverage) == (reach.Target("pkg/p.py", "pkg.p", (4,), ()),)


def test_a_repository_test_that_ends_its_process_costs_only_the_reach_values(
    task: Task, tmp_path: Path
) -> None:
    """The harvest runs in a child process: a test calling `os._exit` ends the child, and the
    probe's own run goes on (no values kept, no reach call, the run itself completes)."""
    plan = reach.plan(task, _coverage())
    assert plan is not None
    exiting = BASE_TESTS.replace(
        "def test_fraction",
        "def test_exits():\n    import os\n\n    os._exit(3)\n\n\ndef test_fraction",
    )
    files = {**BASE, "pkg/show.py": GOLD_SHOW, "tests/test_show.py": exiting + GRADED}
    result = run_probe(tmp_path, files, reach.source(plan, total_s=20.0))
    assert reach.outputs(result) == {}
    assert result.status is RunStatus.COMPLETED and result.tests


def test_a_candidate_counts_the_agreed_gold_calls_that_execute_its_lines(task: Task) -> None:
    plan = reach.plan(task, _coverage())
    assert plan is not None
    hit = "test_reach_s0kaaaaaaaaaa_111111111111_h0 =>> show(Fraction(1, 3), digits=2) =>> r <<="
    miss = "test_reach_s0kbbbbbbbbbb_222222222222_n =>> show('a', digits=2) =>> r <<="
    gold = [_named(hit, miss), _named(hit, miss)]
    target = plan.targets[0]
    assert reach.reaching(plan, gold, [f"{target.path}:{target.lines[0]}"]) == 1
    assert reach.reaching(plan, gold, [f"{target.path}:{FLOAT_LINES[0]}"]) == 0
    assert (
        reach.reaching(plan, [_named(hit), _named(miss)], [f"{target.path}:{target.lines[0]}"]) == 0
    )
