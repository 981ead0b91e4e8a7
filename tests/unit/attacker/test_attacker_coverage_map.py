"""The coverage map of gold's changed lines by the graded tests."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.confirm.coverage_map import (
    ChangedHunk,
    changed_hunks,
    coverage_map,
    invocation,
)
from hackaudit.shared.anatomy import read_patch
from hackaudit.shared.contracts import (
    CoverageResult,
    FileCoverage,
    RunResult,
    RunStatus,
)

GOLD = """\
diff --git a/pkg/ops.py b/pkg/ops.py
--- a/pkg/ops.py
+++ b/pkg/ops.py
@@ -1,3 +1,4 @@
 def add(a, b):
-    return a - b
+    c = a + b
+    return c
 # end
@@ -10,2 +11,3 @@ def sub(a, b):
     x = 1
+    y = 2
     return x
diff --git a/tests/test_ops.py b/tests/test_ops.py
--- a/tests/test_ops.py
+++ b/tests/test_ops.py
@@ -1,1 +1,2 @@
 import ops
+assert ops
"""

HUNKS = (ChangedHunk("pkg/ops.py", 2, (2, 3)), ChangedHunk("pkg/ops.py", 12, (12,)))


def test_changed_hunks_are_gold_source_hunks_with_new_side_lines() -> None:
    assert changed_hunks(read_patch(GOLD)) == HUNKS


def test_invocation_measures_the_changed_files_whole_their_changed_lines_first() -> None:
    run = invocation(HUNKS)
    assert run is not None
    assert run.files == ("pkg/ops.py",)
    assert run.lines == {}, "whole files: the mutants beyond gold's lines need the rest"
    assert run.first == {"pkg/ops.py": (2, 3, 12)}
    assert run.with_source and run.tests is None
    assert invocation(HUNKS, ("pkg/other.py",)).files == ("pkg/ops.py", "pkg/other.py")
    assert invocation(()) is None


def _covered(executed: dict[int, tuple[int, ...]], missing: tuple[int, ...] = ()) -> RunResult:
    coverage = CoverageResult(
        tests=("tests.test_ops.test_add", ""),
        files={"pkg/ops.py": FileCoverage(executed=executed, missing=missing)},
        per_test=True,
    )
    return RunResult(status=RunStatus.COMPLETED, coverage=coverage, duration_s=2.5)


@pytest.mark.parametrize(
    ("hunks", "results", "measured", "reason", "changed", "executed", "never"),
    [
        ((), [], False, "gold changes no line of a source file", 0, 0, 0),
        (HUNKS, [], False, "no coverage run of gold", 0, 0, 0),
        (
            HUNKS,
            [RunResult(status=RunStatus.INFRA_ERROR, reason="docker down")],
            False,
            "coverage run infra_error: docker down",
            0,
            0,
            0,
        ),
        (
            HUNKS,
            [RunResult(status=RunStatus.COMPLETED)],
            False,
            "coverage run completed: no coverage result",
            0,
            0,
            0,
        ),
        (HUNKS, [_covered({2: (0,), 3: (0, 1)}, missing=(12,))], True, "", 3, 2, 1),
        # line 12 is no statement (neither executed nor missing): not counted, its hunk dropped
        (HUNKS, [_covered({2: (0,), 3: (0, 1)}, missing=(5,))], True, "", 2, 2, 0),
        (HUNKS, [_covered({2: (0,)}, missing=(12,))], True, "", 2, 1, 1),
        (HUNKS, [_covered({})], True, "", 3, 0, 2),
    ],
)
def test_coverage_map(
    hunks: tuple[ChangedHunk, ...],
    results: list[RunResult],
    measured: bool,
    reason: str,
    changed: int,
    executed: int,
    never: int,
) -> None:
    found = coverage_map(hunks, results)
    assert (found.measured, found.reason) == (measured, reason)
    assert (found.changed_lines, found.executed_lines) == (changed, executed)
    assert len(found.never_executed) == never


def test_coverage_map_names_the_tests_of_each_line() -> None:
    found = coverage_map(HUNKS, [_covered({3: (0, 1)}, missing=(2, 12))])
    assert found.hunks[0].executed == {3: ("tests.test_ops.test_add", "")}
    assert found.never_executed[0].start == 12
    assert found.sandbox_seconds == 2.5


def test_the_repository_run_measures_the_suite_over_golds_whole_files_with_their_text() -> None:
    from hackaudit.attacker.domain.confirm.coverage_map import repository_invocation
    from hackaudit.shared.contracts import Suite

    run = repository_invocation(read_patch(GOLD), Suite(dirs=("tests",)))
    assert run is not None and run.files == ("pkg/ops.py",) and run.lines == {}
    assert run.with_source and run.suite == Suite(dirs=("tests",))


def test_the_repository_map_says_which_repository_tests_run_each_changed_line() -> None:
    from hackaudit.attacker.domain.confirm.coverage_map import of_gold
    from hackaudit.shared.contracts import Suite

    runs = {
        "coverage": (_covered({2: (0,)}, missing=(3, 12)),),
        "repository-coverage": (_covered({2: (0,), 3: (1,)}, missing=(12,)),),
    }
    found = of_gold(read_patch(GOLD), runs, Suite(dirs=("tests",)))
    repository = found.repository
    assert repository is not None and repository.measured and repository.tests == ("tests",)
    # "" as in the graded map: code run outside any test (set-up, imports)
    assert repository.executed == {
        "pkg/ops.py:2": ("tests.test_ops.test_add",),
        "pkg/ops.py:3": ("",),
    }
    assert repository.executed_lines == 2 and repository.sandbox_seconds == 2.5
    failed = {"repository-coverage": (RunResult(status=RunStatus.TIMEOUT, reason="600 s"),)}
    missing = of_gold(read_patch(GOLD), failed).repository
    assert missing is not None and not missing.measured and "timeout" in missing.reason
    assert of_gold(read_patch(GOLD), {}).repository is None
