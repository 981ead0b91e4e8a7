"""Test selection for the wider suite: a candidate's change placed on gold's lines, widened to
its function, and the repository tests that execute it on gold, in the form the runner takes."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.confirm import selection
from hackaudit.attacker.domain.confirm.selection import (
    WHOLE,
    executing_tests,
    gold_lines,
    module_file,
    node_ids,
    reach,
    runnable,
    select,
    widen,
)
from hackaudit.shared.contracts import Candidate, CoverageResult, FileCoverage, Task
from hackaudit.shared.runners import RunnerKind

# Base file pkg/ops.py:
#  1 def add(a, b):
#  2     return a - b
#  3
#  4
#  5 def mul(a, b):
#  6     return a * b
#  7
#  8
#  9 def neg(a):
# 10     return a
GOLD = (
    "diff --git a/pkg/ops.py b/pkg/ops.py\n--- a/pkg/ops.py\n+++ b/pkg/ops.py\n"
    "@@ -1,3 +1,4 @@\n def add(a, b):\n-    return a - b\n"
    "+    total = a + b\n+    return total\n \n"
    "@@ -8,3 +9,3 @@ def mul(a, b):\n \n def neg(a):\n-    return a\n+    return -a\n"
)
# Gold's file (new side).
GOLD_TEXT = (
    "def add(a, b):\n    total = a + b\n    return total\n\n\n"
    "def mul(a, b):\n    return a * b\n\n\ndef neg(a):\n    return -a\n"
)
TEST_PATCH = """\
diff --git a/pkg/tests/test_ops.py b/pkg/tests/test_ops.py
--- a/pkg/tests/test_ops.py
+++ b/pkg/tests/test_ops.py
@@ -1 +1,2 @@
 x = 1
+y = 2
"""


def _task() -> Task:
    return Task(
        instance_id="pkg__pkg-1",
        repo="pkg/pkg",
        base_commit="abc",
        patch=GOLD,
        test_patch=TEST_PATCH,
        FAIL_TO_PASS=["pkg/tests/test_ops.py::test_add"],
    )


def _candidate(diff: str) -> Candidate:
    return Candidate(instance_id="pkg__pkg-1", diff=diff)


def _hunk(old_start: int, new_start: int, body: str) -> str:
    lines = body.splitlines()
    old = sum(not line.startswith("+") for line in lines)
    new = sum(not line.startswith("-") for line in lines)
    return (
        "diff --git a/pkg/ops.py b/pkg/ops.py\n--- a/pkg/ops.py\n+++ b/pkg/ops.py\n"
        f"@@ -{old_start},{old} +{new_start},{new} @@\n{body}"
    )


ADD_ONLY = _hunk(
    1, 1, " def add(a, b):\n-    return a - b\n+    total = a + b\n+    return total\n \n"
)
NEG_WRONG = GOLD.replace("+    return -a", "+    return -a + 0")
MUL_CHANGED = _hunk(5, 5, " def mul(a, b):\n-    return a * b\n+    return b * a\n \n")


@pytest.mark.parametrize(
    ("diff", "lines"),
    [
        (GOLD, {}),  # gold itself differs from gold nowhere
        (ADD_ONLY, {"pkg/ops.py": {11}}),  # a partial fix: gold's `neg` hunk left out
        (NEG_WRONG, {"pkg/ops.py": {11}}),  # a mutant of gold's line
        (MUL_CHANGED, {"pkg/ops.py": {7, 2, 3, 11}}),  # base line 6 is gold's 7; gold's hunks
    ],
)
def test_a_candidate_is_placed_where_it_differs_from_gold_on_golds_lines(
    diff: str, lines: dict[str, set[int]]
) -> None:
    found = gold_lines(_task(), _candidate(diff))
    assert found == {path: frozenset(n) for path, n in lines.items()}


def test_a_file_replaced_whole_stands_for_all_of_it() -> None:
    candidate = Candidate(instance_id="pkg__pkg-1", kind="files", files={"pkg/ops.py": "x = 1\n"})
    assert gold_lines(_task(), candidate) == {"pkg/ops.py": frozenset({WHOLE})}


def test_lines_are_widened_to_the_function_that_holds_them() -> None:
    widened = widen({"pkg/ops.py": frozenset({2})}, {"pkg/ops.py": GOLD_TEXT})
    assert widened == {"pkg/ops.py": frozenset({1, 2, 3})}
    assert widen({"pkg/ops.py": frozenset({2})}, {}) == {"pkg/ops.py": frozenset({2})}


ADD_T = "pkg.tests.test_ops.OpsTest.test_add"
MUL_T = "pkg.tests.test_ops.test_mul"
NEG_T = "pkg.tests.test_ops.test_neg[1]"


def _map(**extra: object) -> CoverageResult:
    fields: dict[str, object] = {
        "tests": ("", ADD_T, MUL_T),
        "files": {
            "pkg/ops.py": FileCoverage(
                executed={1: (0,), 2: (1,), 3: (1,), 6: (0,), 7: (2,), 10: (0,)}, missing=(11,)
            )
        },
        "per_test": True,
        "sources": {"pkg/ops.py": GOLD_TEXT},
    }
    return CoverageResult.model_validate(fields | extra)


REPORTED = (
    "pkg/tests/test_ops.py::OpsTest::test_add",
    "pkg/tests/test_ops.py::test_mul",
    "pkg/tests/test_ops.py::test_neg[1]",
    "pkg/tests/test_ops.py::test_neg[2]",
)


def test_coverage_names_map_to_node_ids_whatever_the_module_name_pytest_gave() -> None:
    ids = node_ids(REPORTED)
    assert ids[ADD_T] == {"pkg/tests/test_ops.py::OpsTest::test_add"}
    assert ids["test_ops.test_mul"] == {"pkg/tests/test_ops.py::test_mul"}
    assert ids["pkg.tests.test_ops.test_neg"] == {"pkg/tests/test_ops.py::test_neg"}


@pytest.mark.parametrize(
    ("kind", "tests", "run"),
    [
        (RunnerKind.PYTEST, {ADD_T, MUL_T}, ("pkg/tests/test_ops.py::OpsTest::test_add",
                                              "pkg/tests/test_ops.py::test_mul")),
        (RunnerKind.PYTEST, {"pkg.tests.test_gone.test_x"}, None),
        (RunnerKind.SYMPY, {ADD_T, MUL_T}, ("pkg/tests/test_ops.py::test_add",
                                             "pkg/tests/test_ops.py::test_mul")),
        (RunnerKind.UNITTEST, {ADD_T}, None),
    ],
)  # fmt: skip
def test_tests_are_given_in_the_form_the_runner_takes(
    kind: RunnerKind, tests: set[str], run: tuple[str, ...] | None
) -> None:
    assert runnable(kind, sorted(tests), REPORTED, ("pkg/tests",)) == run


def test_a_module_file_is_found_under_the_suites_directories() -> None:
    assert module_file("sympy.printing.tests.test_str.test_Poly") == (
        "sympy/printing/tests/test_str.py"
    )
    assert module_file("sympy.printing.tests.test_str.test_Poly", ("sympy/core",)) is None


def test_the_tests_that_execute_a_candidates_change_are_selected() -> None:
    chosen = select(_task(), _candidate(ADD_ONLY), _map(), RunnerKind.PYTEST, REPORTED)
    # gold's `neg` hunk (line 11) is left out: nothing executes it, nor `def neg` but import
    assert chosen == selection.Selection(tests=(), run=())
    mutant = select(_task(), _candidate(MUL_CHANGED), _map(), RunnerKind.PYTEST, REPORTED)
    assert mutant is not None and mutant.tests == (ADD_T, MUL_T)
    assert mutant.run == (
        "pkg/tests/test_ops.py::OpsTest::test_add",
        "pkg/tests/test_ops.py::test_mul",
    )


@pytest.mark.parametrize(
    "measured",
    [
        _map(cut={"pkg/ops.py": (7,)}),  # the lines' tests were cut from the report
        _map(files={}),  # the file was not measured
        _map(per_test=False),
        _map(files={"pkg/ops.py": FileCoverage(executed={7: (0,)})}),  # runs at import only
    ],
)
def test_when_the_map_cannot_say_the_whole_suite_runs(measured: CoverageResult) -> None:
    assert select(_task(), _candidate(MUL_CHANGED), measured, RunnerKind.PYTEST, REPORTED) is None


def test_code_outside_any_test_is_no_test() -> None:
    assert executing_tests({"pkg/ops.py": frozenset({1, 6})}, _map()) == set()


def test_reach_lists_the_statements_of_the_change_and_the_tests_that_run_them() -> None:
    found = reach({"pkg/ops.py": frozenset({7, 8})}, [_map()])
    assert found.lines == ("pkg/ops.py:7",) and found.tests == (MUL_T,)
    unreached = reach({"pkg/ops.py": frozenset({11})}, [_map()])
    assert unreached.lines == ("pkg/ops.py:11",) and unreached.unreached


def test_past_the_limit_of_selected_tests_only_the_first_run_and_the_rest_is_counted() -> None:
    chosen = select(_task(), _candidate(MUL_CHANGED), _map(), RunnerKind.PYTEST, REPORTED, limit=1)
    assert chosen is not None and chosen.tests == (ADD_T, MUL_T)
    assert chosen.run == ("pkg/tests/test_ops.py::OpsTest::test_add",)
    assert chosen.left_out == 1
    # sympy's runner is given its tests one by one too (file and function), within the limit
    sympy = select(_task(), _candidate(MUL_CHANGED), _map(), RunnerKind.SYMPY, (), limit=1)
    assert sympy is not None and sympy.run == ("pkg/tests/test_ops.py::test_add",)
    assert sympy.left_out == 1


def test_tests_closest_to_the_change_come_first_and_files_take_turns() -> None:
    direct = {"pkg.tests.test_b.test_2"}
    tests = ["pkg.tests.test_a.test_1", "pkg.tests.test_ops.test_9", "pkg.tests.test_b.test_2"]
    order = selection.ranked(tests, direct, frozenset({"ops"}))
    assert order == [
        "pkg.tests.test_b.test_2",  # executes the changed statement itself
        "pkg.tests.test_ops.test_9",  # a module named after the changed one
        "pkg.tests.test_a.test_1",
    ]


def test_tests_named_after_a_name_on_the_changed_line_come_first_their_function_before_module() -> (
    None
):
    text = "def __eq__(self, other):\n    other = _sympify(other)\n    return True\n"
    words = selection.change_words({"pkg/expr.py": frozenset({2})}, {"pkg/expr.py": text})
    assert words == frozenset({"expr", "sympify"}), "keywords, builtins, self/other left out"
    tests = [
        "pkg.tests.test_basic.test_sympify_text",
        "pkg.tests.test_sympify.test_issue_1",
        "pkg.tests.test_sympify.test_sympify2",
        "pkg.tests.test_basic.test_atoms",
        "pkg.tests.test_expr.test_ExprBuilder",
    ]
    ranks = selection.ranks(tests, set(tests), words)
    assert ranks == [
        # the function's own name and its module's, then the function's, then the module's
        ["pkg.tests.test_expr.test_ExprBuilder", "pkg.tests.test_sympify.test_sympify2"],
        ["pkg.tests.test_basic.test_sympify_text"],
        ["pkg.tests.test_sympify.test_issue_1"],
        ["pkg.tests.test_basic.test_atoms"],
    ]
    # the limit takes the first ranks first, each rank's files taking turns
    task = _task()
    chosen = select(
        task, _candidate(MUL_CHANGED), _map(), RunnerKind.SYMPY, (), ("pkg/tests",), limit=1
    )
    assert chosen is not None and chosen.run is not None and len(chosen.run) == 1
    nodes = ["a.py::t1", "a.py::t2", "a.py::t3", "b.py::t1", "c.py::t1"]
    assert selection.spread(nodes) == ["a.py::t1", "b.py::t1", "c.py::t1", "a.py::t2", "a.py::t3"]


def test_a_change_at_module_level_is_seen_from_the_graded_tests_map() -> None:
    # the graded tests' map (changed lines only, with gold's text) says where a line runs
    text = GOLD_TEXT + "\nLIMIT = 3\n"
    line = text.count("\n")
    graded = _map(
        files={"pkg/ops.py": FileCoverage(executed={2: (1,)})}, sources={"pkg/ops.py": text}
    )
    assert selection.at_import({"pkg/ops.py": frozenset({line})}, graded)
    assert not selection.at_import({"pkg/ops.py": frozenset({2})}, graded)


def test_golds_side_of_a_selection_is_the_coverage_runs_statuses_of_those_tests() -> None:
    from hackaudit.shared.contracts import RunResult, RunStatus, TestStatus

    statuses = dict.fromkeys(REPORTED, TestStatus.PASSED)
    measured = RunResult(status=RunStatus.COMPLETED, tests=statuses, duration_s=100.0)
    chosen = selection.Selection(
        tests=(NEG_T.removesuffix("[1]"),), run=("pkg/tests/test_ops.py::test_neg",)
    )
    gold = selection.gold_reference(measured, chosen)
    assert gold is not None
    assert set(gold.tests) == {
        "pkg/tests/test_ops.py::test_neg[1]",
        "pkg/tests/test_ops.py::test_neg[2]",
    }
    assert gold.duration_s == 100.0, "twice the share of 2 tests in 4"
    sympy = RunResult(
        status=RunStatus.COMPLETED,
        tests={"test_neg": TestStatus.PASSED, "test_x": TestStatus.PASSED},
    )
    files = selection.Selection(
        tests=("pkg.tests.test_ops.test_neg", "pkg.tests.test_ops.test_x"),
        run=("pkg/tests/test_ops.py::test_neg",),
    )
    found = selection.gold_reference(sympy, files)
    assert found is not None and set(found.tests) == {"test_neg"}
    timed_out = measured.model_copy(update={"status": RunStatus.TIMEOUT})
    assert selection.gold_reference(timed_out, chosen) is None


def test_the_reaching_tests_are_those_that_execute_a_line_leaving_out_set_up() -> None:
    assert selection.reaching_tests({"pkg/ops.py": frozenset({1, 2, 3})}, _map()) == (ADD_T,)
    assert selection.reaching_tests({"pkg/ops.py": frozenset({6, 7})}, _map()) == (MUL_T,)
    assert selection.reaching_tests({"pkg/ops.py": frozenset({11})}, _map()) == ()


def test_a_change_outside_every_function_runs_the_whole_suite_whichever_test_imported_it() -> None:
    # a module-level line (gold's text puts it in no function) seen under one test only: that
    # test imported the module first, every other test that uses the module sees the line too
    text = GOLD_TEXT + "\nLIMIT = 3\n"
    line = text.count("\n")
    measured = _map(
        files={"pkg/ops.py": FileCoverage(executed={2: (1,), line: (1,)})},
        sources={"pkg/ops.py": text},
    )
    assert selection.at_import({"pkg/ops.py": frozenset({line})}, measured)
    assert not selection.at_import({"pkg/ops.py": frozenset({2})}, measured)


def test_a_line_inside_a_statement_spread_over_lines_is_reached_through_its_first_line() -> None:
    # gold adds an entry to a module-level dict literal: coverage.py counts the assignment on its
    # first line only, executed at import (outside any test function)
    text = GOLD_TEXT + '\nNAMES = {\n    "add": add,\n    "neg": neg,\n}\n'
    first = GOLD_TEXT.count("\n") + 2
    entry = first + 2  # the `"neg": neg,` line
    measured = _map(
        files={"pkg/ops.py": FileCoverage(executed={2: (1,), first: (0,)})},
        sources={"pkg/ops.py": text},
        tests=("", "pkg.tests.test_ops.test_add"),
    )
    found = reach({"pkg/ops.py": frozenset({entry})}, [measured])
    assert found.lines == (f"pkg/ops.py:{first}",)
    assert found.at_import and not found.unreached  # executed, at import: not unreached
    # without gold's text the entry cannot be placed on a statement: nothing is said of it
    blind = reach({"pkg/ops.py": frozenset({entry})}, [_map(files=measured.files, sources={})])
    assert blind.lines == () and not blind.unreached
