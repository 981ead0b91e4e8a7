"""A graded test that sets its options through a decorator, in the shape of pylint-5859: gold
changes a pattern in both branches of `if self.notes_rgx:`, the test sets only `notes`. The
partial fix that leaves the `notes_rgx` branch unfixed passes it. The replay runs the test under
its own decorator (without it, the option it sets is never set) and once more with the option
gold's condition tests added, set true: there the partial fix misses the note gold finds. The
probe really runs under this interpreter's unittest and is read back through the sandbox's own
log parser."""

from __future__ import annotations

from pathlib import Path

from hackaudit.attacker.domain.confirm import replay
from hackaudit.attacker.domain.confirm.replay import ReplayTarget, condition_options
from hackaudit.attacker.domain.confirm.replay_source import render_replay
from hackaudit.shared.contracts import RunResult

from .probe_rig import run_probe

TEST_FILE = "pkg/tests/test_notes.py"
TARGET = ReplayTarget(
    TEST_FILE, "pkg.tests.test_notes", ("test_punctuation_note", "test_punctuation_note_reported")
)

GOLD_PATCH = r"""--- a/pkg/checker.py
+++ b/pkg/checker.py
@@ -8,6 +8,6 @@ class Checker:
         notes = "|".join(re.escape(n) for n in self.notes)
         if self.notes_rgx:
-            regex = rf"#\s*({notes}|{self.notes_rgx})\b"
+            regex = rf"#\s*({notes}|{self.notes_rgx})(?=(:|\s|\Z))"
         else:
-            regex = rf"#\s*({notes})\b"
+            regex = rf"#\s*({notes})(?=(:|\s|\Z))"
"""

GOLD_MOD = r"""import re


class Checker:
    def __init__(self):
        self.notes, self.notes_rgx = ["FIXME"], ""

    def open(self):
        notes = "|".join(re.escape(n) for n in self.notes)
        if self.notes_rgx:
            regex = rf"#\s*({notes}|{self.notes_rgx})(?=(:|\s|\Z))"
        else:
            regex = rf"#\s*({notes})(?=(:|\s|\Z))"
        self.pattern = re.compile(regex, re.I)

    def found(self, text):
        match = self.pattern.search(text)
        return [match.group(1)] if match else []

    def process(self, text):
        self.seen += self.found(text)
"""
PARTIAL_MOD = GOLD_MOD.replace(r"{self.notes_rgx})(?=(:|\s|\Z))", r"{self.notes_rgx})\b")

DECORATOR = """import contextlib
import functools


@contextlib.contextmanager
def expect_notes(checker, wanted):
    checker.seen = []
    yield
    assert checker.seen == wanted


def set_config(**options):
    def wrap(test):
        @functools.wraps(test)
        def forward(self, *args, **kwargs):
            for name, value in options.items():
                setattr(self.checker, name, value)
            self.checker.open()
            test(self, *args, **kwargs)
        return forward
    return wrap
"""

TESTS = """
from pkg.checker import Checker
from pkg.testutils import expect_notes, set_config


class TestNotes:
    def setup_method(self):
        self.checker = Checker()
        self.checker.open()

    @set_config(notes=["???"])
    def test_punctuation_note(self):
        assert self.checker.found("a = 1  #???") == ["???"]

    @set_config(notes=["???"])
    def test_punctuation_note_reported(self):
        with expect_notes(self.checker, ["???"]):  # checked on leaving: nothing to observe
            self.checker.process("a = 1  #???")
"""


def _run(tmp: Path, mod: str, flags: list[str]) -> RunResult:
    files = {
        "pkg/__init__.py": "",
        "pkg/checker.py": mod,
        "pkg/testutils.py": DECORATOR,
        "pkg/tests/__init__.py": "",
        TEST_FILE: TESTS,
    }
    section = render_replay([(TARGET.path, TARGET.module, TARGET.functions)], {}, flags=flags)
    return run_probe(tmp, files, section)


def _found(gold: RunResult, candidate: RunResult) -> set[tuple[str, str, str]]:
    _, out = replay.differences([TARGET], [gold, gold], candidate)
    return {(d.expression, d.gold, d.candidate) for d in out}


def test_the_options_gold_tests_in_a_condition() -> None:
    assert condition_options(GOLD_PATCH) == ["notes_rgx"]
    head = "--- a/m.py\n+++ b/m.py\n"
    added = head + "@@ -1,0 +2 @@\n+    if os.path.isdir(p) and self.opts.verbose:\n"
    assert condition_options(added) == ["verbose"]
    changed = head + "@@ -1 +1 @@\n-    if self.gone:\n+    x = 1\n"
    assert condition_options(changed) == []  # old lines say nothing


def test_the_test_runs_under_its_decorator_and_again_with_the_option_gold_tests(
    tmp_path: Path,
) -> None:
    flags = condition_options(GOLD_PATCH)
    gold = _run(tmp_path / "gold", GOLD_MOD, flags)
    seen = {o.expression: o.head for o in replay.observations(gold).values()}
    # under its own decorator the test sees the note it sets ...
    assert seen['self.checker.found("a = 1  #???")'] == "returns list['???']"
    # ... and once more with the option gold's condition tests, set true
    again = 'self.checker.found("a = 1  #???") [set_config +notes_rgx=True]'
    assert seen[again] == "returns list['???']"

    partial = _run(tmp_path / "partial", PARTIAL_MOD, flags)
    found = _found(gold, partial)
    assert (again, "returns list['???']", "returns list[]") in found
    # a test that observes nothing: it ran through under gold, its check fails under the partial
    # fix, with the option set as text too
    body = "the test body (test_punctuation_note_reported [set_config +notes_rgx='x'])"
    assert (body, "runs through", "raises AssertionError at line 17") in found
    assert _found(gold, _run(tmp_path / "same", GOLD_MOD, flags)) == set()
    # without the option added, nothing tells the partial fix apart
    plain_gold = _run(tmp_path / "plain-gold", GOLD_MOD, [])
    assert _found(plain_gold, _run(tmp_path / "plain-partial", PARTIAL_MOD, [])) == set()
