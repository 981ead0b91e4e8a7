"""A graded test that passes a list it binds to a name, in the shape of requests-863: gold's
`register_hook` takes a list or a tuple of hooks, a stand-in takes only lists. The test passes a
local `hooks = [f, g]`, so no literal of a call is there to vary, and both pass it. The replay
runs the test once more with that display made a tuple: gold runs through, the stand-in stores
the tuple as one hook and the test's own check fails. An equivalent rewrite of gold differs on
nothing. The probe really runs under this interpreter's unittest and is read back through the
sandbox's own log parser."""

from __future__ import annotations

from pathlib import Path

from hackaudit.attacker.domain.confirm import replay
from hackaudit.attacker.domain.confirm.replay import ReplayTarget
from hackaudit.shared.contracts import RunResult

from .probe_rig import replay_differences, replay_run

TEST_FILE = "pkg/tests/test_hooks.py"
TARGET = ReplayTarget(TEST_FILE, "pkg.tests.test_hooks", ("test_list_of_hooks",))

GOLD_MOD = """class Request:
    def __init__(self):
        self.hooks = {"args": []}

    def register_hook(self, event, hook):
        if isinstance(hook, (list, tuple, set)):
            self.hooks[event].extend(hook)
        else:
            self.hooks[event].append(hook)
"""
LIST_ONLY_MOD = GOLD_MOD.replace("(list, tuple, set)", "list")
EQUIVALENT_MOD = GOLD_MOD.replace(
    "if isinstance(hook, (list, tuple, set)):\n            self.hooks[event].extend(hook)",
    "if isinstance(hook, (set, tuple, list)):\n            for h in hook:\n"
    "                self.hooks[event].append(h)",
)

TESTS = """
from pkg.models import Request


def test_list_of_hooks():
    def first(args):
        return args

    def second(args):
        return args

    def all_callable(hooks):
        for h in hooks["args"]:
            assert callable(h) is True

    hooks = [first, second]
    r = Request()
    r.register_hook("args", hooks)
    all_callable(r.hooks)
"""


def _run(tmp: Path, mod: str) -> RunResult:
    files = {
        "pkg/__init__.py": "",
        "pkg/models.py": mod,
        "pkg/tests/__init__.py": "",
        TEST_FILE: TESTS,
    }
    return replay_run(tmp, files, TARGET)


def test_the_tuple_variant_tells_a_list_only_stand_in_from_gold(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    stand_in = _run(tmp_path / "list-only", LIST_ONLY_MOD)
    found = replay_differences(TARGET, gold, stand_in)
    assert len(found) == 1, found
    expression, on_gold, on_candidate = found.pop()
    assert expression == "the test body (test_list_of_hooks [hooks as a tuple])"
    assert on_gold == "runs through"
    assert on_candidate.startswith("raises AssertionError")


def test_gold_and_its_equivalent_rewrite_agree_on_the_tuple_variant(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    rewrite = _run(tmp_path / "rewrite", EQUIVALENT_MOD)
    assert replay_differences(TARGET, gold, rewrite) == set()
    # the variant was replayed and compared, not skipped
    assert any("[hooks as a tuple]" in o.expression for o in replay.observations(gold).values())
