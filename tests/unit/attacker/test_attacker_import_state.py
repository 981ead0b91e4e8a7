"""The state run: what a changed module holds once imported, gold's against a candidate's.

Each variant of a small module is written out with the state file beside it and run under this
interpreter's unittest, read back through the sandbox's unittest log parser (`probe_rig`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.attacker.domain.confirm import import_state
from hackaudit.attacker.domain.confirm.selection import WHOLE
from hackaudit.shared.contracts import RunResult, RunStatus, TestStatus

from .probe_rig import run_added_module, write_files

GOLD = '''\
"""Prints values."""
import re
from os.path import join as path_join

LIMIT = 3
PATTERN = re.compile(r"a+")
TABLE = {"Max": [(lambda *x: True, "Max")]}


class Printer:
    mode = "plain"

    def show(self, value, width=8):
        return ("%s" % value).rjust(width)
'''

# gold's fallback import kept (the name is bound to the same function), blank lines moved
SAME = GOLD.replace(
    "from os.path import join as path_join\n",
    "try:\n    from os.path import join as path_join\nexcept ImportError:\n"
    "    from posixpath import join as path_join\n\n\n",
)

DIFFERENT = {
    "a constant": GOLD.replace("LIMIT = 3", "LIMIT = 4"),
    "a lambda's body in a table": GOLD.replace("lambda *x: True", "lambda *x: False"),
    "a class attribute": GOLD.replace('mode = "plain"', 'mode = "fancy"'),
    "a method's code": GOLD.replace("rjust(width)", "ljust(width)"),
    "a default": GOLD.replace("width=8", "width=9"),
    "a compiled pattern": GOLD.replace('r"a+"', 'r"a*"'),
    "an entry left out": GOLD.replace('TABLE = {"Max": [(lambda *x: True, "Max")]}', "TABLE = {}"),
}


def _state_run(root: Path, module_text: str) -> RunResult:
    write_files(root, {"pkg/__init__.py": "", "pkg/printing.py": module_text})
    probe = import_state.invocation(["pkg.printing"])
    return run_added_module(root, import_state.STATE_PATH, probe.files[import_state.STATE_PATH])


@pytest.fixture(scope="module")
def gold_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, RunResult]:
    return (
        _state_run(tmp_path_factory.mktemp("gold1"), GOLD),
        _state_run(tmp_path_factory.mktemp("gold2"), GOLD),
    )


def test_a_change_at_import_that_binds_the_same_things_leaves_the_module_as_golds(
    gold_runs, tmp_path
) -> None:
    candidate = _state_run(tmp_path, SAME)
    assert import_state.same_as_gold(["pkg.printing"], gold_runs, candidate)


@pytest.mark.parametrize("what", sorted(DIFFERENT))
def test_any_value_or_code_the_module_holds_that_differs_is_seen(
    what: str, gold_runs, tmp_path
) -> None:
    candidate = _state_run(tmp_path, DIFFERENT[what])
    assert not import_state.same_as_gold(["pkg.printing"], gold_runs, candidate), what


def test_a_module_that_fails_to_import_is_never_the_same(gold_runs, tmp_path) -> None:
    broken = _state_run(tmp_path, GOLD + "\nraise RuntimeError('at import')\n")
    (name,) = [t for t in broken.tests if "test_state0_" in t]
    assert "raises_RuntimeError" in name
    assert not import_state.same_as_gold(["pkg.printing"], (broken, broken), broken)


def test_gold_runs_that_disagree_or_did_not_complete_decide_nothing(gold_runs) -> None:
    gold, _ = gold_runs
    other = RunResult(
        status=RunStatus.COMPLETED, tests={"test_state0_0123456789ab": TestStatus.PASSED}
    )
    assert not import_state.same_as_gold(["pkg.printing"], (gold, other), gold)
    timed_out = RunResult(status=RunStatus.TIMEOUT)
    assert not import_state.same_as_gold(["pkg.printing"], (gold,), timed_out)
    assert not import_state.same_as_gold(["pkg.printing"], (), gold)


def test_only_python_modules_changed_in_part_have_a_state() -> None:
    assert import_state.modules({"src/pkg/a.py": frozenset({3}), "pkg/b.py": frozenset({1})}) == (
        "pkg.b",
        "pkg.a",
    )
    assert import_state.modules({"pkg/a.py": frozenset({WHOLE})}) is None
    assert import_state.modules({"docs/conf.txt": frozenset({1})}) is None
    assert import_state.modules({}) is None
