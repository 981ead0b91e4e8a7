"""The programs that run inside a task's container, as modules: their pieces on small inputs under
this interpreter, the rules that keep them runnable on an old image's Python, and the probe file
written from them, run for real on a tiny package."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hackaudit.attacker.domain.confirm import probes, replay
from hackaudit.attacker.domain.confirm.probe_source import CLASS, LOADED, program_text, render
from hackaudit.attacker.domain.confirm.programs import probe_program, replay_program
from hackaudit.attacker.domain.confirm.replay_source import render_replay
from hackaudit.shared.contracts import RunResult, RunStatus, TestStatus
from tests.old_python import assert_python_35_syntax, assert_standard_library_only, assigned

from .probe_rig import run_probe

PROGRAMS = ("probe_program.py", "replay_program.py", "reach_program.py", "state_program.py")

# --- the probe program's pieces ----------------------------------------------------------------


class _Box:
    def __init__(self, width: int) -> None:
        self.width = width


class _Shown:
    def __repr__(self) -> str:
        return "<Shown at 0xdeadbeef>"


def _reused() -> Iterator[dict[str, int]]:
    held: dict[str, int] = {}
    for i in range(2):
        held["i"] = i
        yield held


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({3, 1, 2}, "set{1, 2, 3}"),
        ({"b": [1, (2,)], "a": None}, "dict{'b': list[1, tuple[2]], 'a': None}"),
        (_Box(3), "_Box(width=3)"),  # no repr of its own: its state
        (_Shown(), "_Shown:<Shown at 0x?>"),  # no memory address
        # each item written down as it is yielded, and the one changed later marked
        (
            _reused(),
            "generator (items changed after they were yielded: 0)[dict{'i': 0}, dict{'i': 1}]",
        ),
        (iter([1, 2]), "list_iterator[1, 2]"),
    ],
)
def test_a_value_is_written_the_same_in_every_process(value: object, text: str) -> None:
    assert probe_program._stable(value) == text


@pytest.mark.parametrize(
    ("case", "outcome"),
    [
        ((("json",), "dumps", ([1],), (), None), "returns '[1]'"),
        ((("json",), "loads", ("{",), (), None), "raises JSONDecodeError"),
        ((("no_such_module", "json"), "no_such_name", (), (), None), "unresolved"),
        # a method: the instance built first, then its state after the call
        (
            (("collections",), "deque.append", ("ab",), (), (([1],), ())),
            "returns None | self deque:deque([1, 'ab'])",
        ),
    ],
)
def test_a_case_outcome_is_what_it_returns_or_the_type_it_raises(
    case: tuple[object, ...], outcome: str
) -> None:
    assert probe_program._outcome(case) == outcome


def test_a_case_is_named_by_the_digest_and_the_head_of_its_outcome() -> None:
    name = probe_program._name(3, (("json",), "dumps", ([1],), (), None), deadline=1e12)
    assert re.fullmatch(r"test_case3_[0-9a-f]{12}_returns_1", name)
    assert probe_program._name(0, (("json",), "dumps", (), (), None), deadline=0) == (
        "test_case0_timeout"
    )
    reported = RunResult(status=RunStatus.COMPLETED, tests={name: TestStatus.PASSED})
    assert probes.outputs(reported)[3].head == "returns_1"


def test_the_attacker_reads_the_names_the_program_gives() -> None:
    assert probe_program.HackauditProbe.__name__ == CLASS
    assert hasattr(probe_program.HackauditProbe, LOADED)
    assert replay_program.HackauditProbe is probe_program.HackauditProbe
    assert replay_program._stable is probe_program._stable


# --- the replay program's pieces ---------------------------------------------------------------


def _turned(source: str) -> list[str]:
    """The statements of the one test function in `source`, its checks turned into records."""
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    turn = replay_program._Turn(source.split("\n"), printers=[])
    out: list[str] = []
    for stmt in function.body:
        done = turn.visit(stmt)
        out.extend(ast.unparse(s) for s in (done if isinstance(done, list) else [done]))
    return out


def test_asserts_become_observations_of_their_operands_and_beside_their_literals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replay_program, "VARIANTS", {"4": [5]})
    source = (
        "def test_half():\n"
        "    x = 4\n"
        "    assert half(4) == 2\n"
        "    self.assertEqual(f(x), 3)\n"
        "    raises(ValueError, lambda: half(-1))\n"
    )
    assert _turned(source) == [
        "x = 4",  # a statement that checks nothing is kept
        "_hackaudit_observe('o1.v0', lambda: half(4), 'half(4)', 'value')",
        "_hackaudit_observe('o1.w0', lambda: half(5), 'half(4)  [literal 4 -> 5]', 'variant')",
        "_hackaudit_observe('o2.v0', lambda: f(x), 'f(x)', 'value')",
        "_hackaudit_observe('r3.v0', lambda: half(-1), 'half(-1)', 'value')",
    ]


def test_code_in_a_parametrize_row_is_varied_empty_first() -> None:
    assert replay_program._code_variants("Tuple[int, int]") == (["Tuple[()]"], ["Tuple[(int,)]"])
    assert replay_program._code_variants("not code (") == ([], [])


@pytest.fixture
def state() -> Iterator[replay_program._State]:
    fresh = replay_program._State()
    fresh.test = "f0.test_half.p0"
    saved = replay_program._STATE
    replay_program._STATE = fresh
    yield fresh
    replay_program._STATE = saved


def _raise(exc: BaseException) -> object:
    raise exc


def test_an_observation_records_what_the_call_gives(state: replay_program._State) -> None:
    observe = replay_program._hackaudit_observe
    observe("o1.v0", lambda: 2, "half(4)", "value")
    observe("o1.v0", lambda: 3, "half(6)", "value")  # the same key again: a second occurrence
    observe("o2.w0", lambda: _raise(ValueError()), "half(-1)", "variant")
    observe("o3.v0", lambda: _raise(AssertionError()), "check(1)", "checker")
    observe("o4.v0", lambda: _raise(AssertionError()), "f(1)", "value")
    assert state.records == [
        ("f0.test_half.p0:o1.v0.n0", "half(4)", "returns 2"),
        ("f0.test_half.p0:o1.v0.n1", "half(6)", "returns 3"),
        ("f0.test_half.p0:o2.w0.n0", "half(-1)", "variant raises ValueError"),
        ("f0.test_half.p0:o3.v0.n0", "check(1)", "check fails"),  # the helper's own check
        ("f0.test_half.p0:o4.v0.n0", "f(1)", "raises AssertionError"),
    ]


def test_a_record_is_capped_and_carries_the_replay_note(state: replay_program._State) -> None:
    state.note = " [hooks as a tuple]"
    replay_program._hackaudit_record("o1.v0", "x" * (replay_program.MAX_OUTCOME_CHARS + 5), "f()")
    (_, text, outcome), *_ = state.records
    assert text == "f() [hooks as a tuple]"
    assert outcome.endswith(f"...[{replay_program.MAX_OUTCOME_CHARS + 5} chars]")
    for _ in range(replay_program.MAX_OCCURRENCES + 3):
        replay_program._hackaudit_record("o2.v0", "returns 1", "g()")
    assert sum(k.startswith(state.test + ":o2.v0") for k, _, _ in state.records) == 12


def test_text_in_a_test_name_cannot_forge_the_frame_around_it() -> None:
    framed = replay_program._safe("a =>> b <<= c ... \x01\u00e9", 100)
    assert framed == "a => b <= c ..  \\xe9"
    assert replay_program._safe("x" * 500, 10) == "x" * 10


# --- what keeps them runnable on an old image's Python -----------------------------------------


def _guarded(stmt: ast.stmt) -> bool:
    """An `if TYPE_CHECKING:` block or the import of the probe program's names in the package:
    never run in the container."""
    if not isinstance(stmt, ast.If):
        return False
    test = stmt.test
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    return names <= {"TYPE_CHECKING", "__name__"} and bool(names)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_program_uses_no_syntax_newer_than_python_3_5(name: str) -> None:
    assert_python_35_syntax(program_text(name))


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_program_imports_nothing_but_the_standard_library(name: str) -> None:
    assert_standard_library_only(program_text(name), _guarded)


# --- the probe file written from them ----------------------------------------------------------


def test_the_probe_file_is_the_programs_then_the_tasks_data_then_the_calls() -> None:
    rows = [repr((("pkg.mod",), "half", (4,), (), None))]
    section = render_replay(
        [("pkg/tests/test_mod.py", "pkg.tests.test_mod", ["test_half", "test_half"])],
        {"4": [0, 5]},
        total_s=30,
        max_observations=12,
        powers=True,
        flags=["notes_rgx"],
    )
    text = render(rows, section)
    probe, rest = text.split("\n\n# --- this task's cases ---\n", 1)
    assert probe == program_text("probe_program.py")
    assert program_text("replay_program.py") in rest
    ast.parse(text, feature_version=(3, 5))
    assert assigned(text, "CASES") == [(("pkg.mod",), "half", (4,), (), None)]
    assert assigned(text, "REPLAY") == [
        ("pkg/tests/test_mod.py", "pkg.tests.test_mod", ["test_half"])
    ]
    assert assigned(text, "VARIANTS") == {"4": [0, 5]}
    assert assigned(text, "REPLAY_TOTAL_S") == 30.0
    assert assigned(text, "MAX_OBSERVATIONS") == 12
    assert assigned(text, "POWERS") is True
    assert assigned(text, "FLAGS") == ["notes_rgx"]
    runs = [
        ast.unparse(stmt)
        for stmt in ast.parse(text).body
        if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)) or _runs_replay(stmt)
    ]
    assert runs == ["_name_cases()", "if REPLAY:\n    _replay_names()"]


def _runs_replay(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and ast.unparse(stmt.test) == "REPLAY"


HALF = """
def half(n):
    if n < 0:
        raise ValueError(n)
    return n // 2
"""

TESTS = """
from pkg.mod import half


def test_half():
    assert half(4) == 2
"""


def test_the_probe_file_runs_on_a_tiny_package(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": HALF,
        "pkg/tests/__init__.py": "",
        "pkg/tests/test_mod.py": TESTS,
    }
    cases = [
        probes.ProbeCase(("pkg.mod",), "half", (6,)),
        probes.ProbeCase(("pkg.mod",), "half", (-1,)),
    ]
    section = render_replay(
        [("pkg/tests/test_mod.py", "pkg.tests.test_mod", ["test_half"])], {"4": [5]}
    )
    result = run_probe(tmp_path, files, section, cases)
    outputs = probes.outputs(result)
    assert (outputs[0].head, outputs[1].head) == ("returns_3", "raises_ValueError")
    seen = {o.expression: o.head for o in replay.observations(result).values()}
    assert seen["half(4)"] == "returns 2"
    assert seen["half(4)  [literal 4 -> 5]"] == "variant returns 2"
    assert seen["test_half"] == "runs through"
    assert any(LOADED in name for name in result.tests)
