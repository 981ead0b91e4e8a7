"""Replaying a test whose checks live in a helper (`self._runtest(args, code=0)`): the helper
call is observed like an assert's operand, with the values beside its literals, so a candidate
that passes the test's own input and fails a path spelled another way is told apart. State-changing
bare calls (`os.chdir`) are left as they are. The probe runs under this interpreter's unittest and
is read back through the sandbox's own log parser."""

from __future__ import annotations

from pathlib import Path

from hackaudit.attacker.domain.confirm import replay
from hackaudit.attacker.domain.confirm.replay import ReplayTarget
from hackaudit.attacker.domain.confirm.replay_source import render_replay
from hackaudit.shared.contracts import RunResult

from .probe_rig import run_probe

TEST_FILE = "pkg/tests/test_walk.py"
TARGET = ReplayTarget(TEST_FILE, "pkg.tests.test_walk", ("test_ignored_relative_to_cwd",))

GOLD_MOD = """
import os
import re


def ignored(element, pattern):
    element = os.path.normpath(element)
    return re.match(pattern, element) is not None
"""
# The narrower stand-in: only a leading "./" cut, which the test's own input needs.
WRONG_MOD = GOLD_MOD.replace(
    "os.path.normpath(element)", "(element[2:] if element.startswith('./') else element)"
)

TESTS = """
import os
import unittest

from pkg.walk import ignored


class TestWalk(unittest.TestCase):
    def _check(self, start, pattern, expected):
        found = ignored(os.path.join(start, "sub", "file.py"), pattern)
        assert found == expected, (start, found)

    def test_ignored_relative_to_cwd(self):
        os.chdir(os.path.dirname(os.path.abspath(__file__)))
        self._check(".", "^sub/.*", True)

    def test_others_are_kept(self):
        self._check("sub", "^other/.*", False)
"""
# A fix that ignores nothing: the only check it meets asks for "not ignored".
NOTHING_MOD = GOLD_MOD.replace("return re.match(pattern, element) is not None", "return False")
KEPT = ReplayTarget(TEST_FILE, "pkg.tests.test_walk", ("test_others_are_kept",))


def _run(tmp: Path, mod: str, target: ReplayTarget = TARGET) -> RunResult:
    files = {
        "pkg/__init__.py": "",
        "pkg/walk.py": mod,
        "pkg/tests/__init__.py": "",
        TEST_FILE: TESTS,
    }
    table = replay.variant_table(
        "diff --git a/t.py b/t.py\n--- /dev/null\n+++ b/t.py\n@@ -0,0 +1,2 @@\n"
        '+check(".", "^sub/.*", True)\n+check("sub", "^other/.*", False)\n'
    )
    section = render_replay([(target.path, target.module, target.functions)], table)
    return run_probe(tmp, files, section)


def test_a_checking_helper_is_replayed_with_the_values_beside_its_literals(tmp_path) -> None:
    seen = {o.expression: o.head for o in replay.observations(_run(tmp_path, GOLD_MOD)).values()}
    call = 'self._check(".", "^sub/.*", True)'
    assert seen[call] == "returns None"
    assert seen[f"{call}  [literal '.' -> './.']"] == "variant returns None"
    # the state-changing call before it is not varied
    assert not any(e.startswith("os.chdir") for e in seen)


def test_a_path_spelled_another_way_tells_the_narrower_fix_apart(tmp_path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    wrong = _run(tmp_path / "wrong", WRONG_MOD)
    compared, found = replay.differences([TARGET], [gold, gold], wrong)
    assert compared > 0
    assert {(d.expression, d.gold, d.candidate) for d in found} >= {
        (
            "self._check(\".\", \"^sub/.*\", True)  [literal '.' -> './.']",
            "variant returns None",
            "variant check fails",
        )
    }
    # gold against itself: nothing
    assert replay.differences([TARGET], [gold, gold], gold)[1] == []


def test_a_check_gold_fails_on_a_variant_tells_apart_a_fix_that_does_nothing(tmp_path) -> None:
    """The helper's own check failing under gold on a variant (`"^other/.*"` cut to `""`, which
    matches everything) is gold's result there, not an input it cannot handle: a fix that never
    ignores anything meets the check instead, and that is a difference."""
    gold = _run(tmp_path / "gold", GOLD_MOD, KEPT)
    nothing = _run(tmp_path / "nothing", NOTHING_MOD, KEPT)
    call = 'self._check("sub", "^other/.*", False)'
    seen = {o.expression: o.head for o in replay.observations(gold).values()}
    assert seen[call] == "returns None"  # the test itself passes on both
    assert {o.expression: o.head for o in replay.observations(nothing).values()}[call] == (
        "returns None"
    )
    compared, found = replay.differences([KEPT], [gold, gold], nothing)
    assert compared > 0
    assert (
        f"{call}  [literal '^other/.*' -> '']",
        "variant check fails",
        "variant returns None",
    ) in {(d.expression, d.gold, d.candidate) for d in found}
    assert replay.differences([KEPT], [gold, gold], gold)[1] == []
