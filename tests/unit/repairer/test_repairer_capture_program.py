"""The capture program that runs inside a task's container, as a module: its pieces on small
inputs under this interpreter, the rules that keep it runnable on an old image's Python, and the
capture module written from it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import pytest

from hackaudit.repairer.domain import capture
from hackaudit.repairer.domain.programs import capture_program
from hackaudit.repairer.domain.regression import Captured
from hackaudit.shared.contracts import ProbeDifference, RunResult, RunStatus, TestStatus
from tests.old_python import assert_python_35_syntax, assert_standard_library_only, assigned

# --- the program's pieces ----------------------------------------------------------------------


class _Box:
    def __init__(self, width: int) -> None:
        self.width = width


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def _reused(n: int) -> Iterator[dict[str, int]]:
    held: dict[str, int] = {}
    for i in range(n):
        held["i"] = i
        yield held


@pytest.mark.parametrize(
    ("case", "outcome"),
    [
        # a probe: its first name from the first module that has it
        (
            ["probe", ["no_such_module", "json"], "dumps", "dumps([1])", []],
            {"repr": "'[1]'", "str": "[1]", "type": "str", "module": "json"},
        ),
        (
            ["probe", ["json"], "loads", "loads('{')", []],
            {"raised": "JSONDecodeError", "module": "json"},
        ),
        (["probe", ["json"], "nowhere", "nowhere(1)", ["json"]], {"unresolved": True}),
        # a replayed expression: in the first test module that has every name it needs
        (
            ["replay", [], "", "join(sep, 1)", ["json", "os.path"]],
            {"raised": "TypeError", "module": "os.path"},
        ),
        (
            ["replay", [], "", "loads('[2]')", ["os.path", "json"]],
            {"repr": "[2]", "str": "[2]", "type": "list", "module": "json"},
        ),
        (["replay", [], "", "local_value + 1", ["json"]], {"unresolved": True}),
    ],
)
def test_a_case_outcome_is_the_value_or_the_type_it_raises_where_it_was_found(
    case: list[object], outcome: dict[str, object]
) -> None:
    assert capture_program._outcome(case) == outcome


def test_a_value_is_its_texts_its_type_and_its_attributes() -> None:
    box = _Box(3)
    outcome = capture_program._value("Box(3)", {"Box": _Box}, box, "pkg.core")
    assert outcome == {
        "repr": repr(box),
        "str": str(box),
        "type": "_Box",
        "module": "pkg.core",
        "state": "[('width', 3)]",
    }
    assert "state" not in capture_program._value("_Box", {}, _Box, "m")  # a class: no state


def test_a_value_too_long_or_without_a_repr_is_not_captured() -> None:
    long = "x" * (capture_program.MAX_TEXT + 1)
    assert capture_program._value("long", {}, long, "m") == {"too_long": True}
    assert capture_program._value("u", {}, _Unprintable(), "m") == {"unrepresentable": True}


def test_an_iterator_is_what_a_fresh_evaluation_yields_and_each_item_as_it_was_yielded() -> None:
    namespace = {"reused": _reused}
    outcome = capture_program._value("reused(2)", namespace, _reused(2), "m")
    assert outcome["items"] == "[{'i': 1}, {'i': 1}]"  # one dict, shown in its final state
    assert outcome["each"] == "[\"{'i': 0}\", \"{'i': 1}\"]"
    too_many = capture_program.MAX_ITEMS + 1
    assert capture_program._drained(f"reused({too_many})", namespace) == ("", "")


@pytest.fixture
def named() -> Iterator[type]:
    """The capture class, rid afterwards of the test methods a test names on it."""
    cls = capture_program.HackauditCapture
    before = set(vars(cls))
    yield cls
    for name in set(vars(cls)) - before:
        delattr(cls, name)


def test_each_case_names_a_test_method_that_the_repairer_reads_back(
    named: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        capture_program,
        "CASES",
        [["probe", ["json"], "dumps", "dumps('a')", []], ["probe", ["json"], "x", "x", []]],
    )
    capture_program._name_cases()
    names = sorted(n for n in vars(named) if n.startswith("test_cap"))
    assert [re.sub(r"_[0-9a-f]+$", "", n) for n in names] == ["test_cap0", "test_cap1"]
    reported = RunResult(
        status=RunStatus.COMPLETED,
        tests={f"{n} ({capture.CLASS})": TestStatus.PASSED for n in names},
    )
    first, second = capture.read([reported], 2)
    assert first.captured == Captured(
        value_repr="'\"a\"'", value_str='"a"', value_type="str", module="json"
    )
    assert second.captured is None and "could not be imported" in second.problem


def test_a_case_whose_capture_itself_fails_is_named_as_failed(
    named: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    def _exits(case: object) -> dict[str, object]:
        raise SystemExit(1)  # what a module that exits on import raises through `except Exception`

    monkeypatch.setattr(capture_program, "CASES", [["probe", ["m"], "f", "f()", []]])
    monkeypatch.setattr(capture_program, "_outcome", _exits)
    capture_program._name_cases()
    assert hasattr(named, capture_program._name(0, {"failed": True}))
    (got,) = capture.read(
        [
            RunResult(
                status=RunStatus.COMPLETED,
                tests={capture_program._name(0, {"failed": True}): TestStatus.PASSED},
            )
        ],
        1,
    )
    assert got.captured is None and got.problem == "the capture itself failed"


def test_the_repairer_reads_the_names_the_program_gives() -> None:
    assert capture_program.HackauditCapture.__name__ == capture.CLASS
    assert hasattr(capture_program.HackauditCapture, capture.LOADED)
    assert capture_program.MAX_TEXT == capture.MAX_TEXT
    assert capture_program.CASES == []  # the run's cases come after the text


# --- what keeps it runnable on an old image's Python -------------------------------------------


def test_the_program_uses_no_syntax_newer_than_python_3_5() -> None:
    assert_python_35_syntax(capture.program_text())


def _type_checking_only(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and ast.unparse(stmt.test) == "TYPE_CHECKING"


def test_the_program_imports_nothing_but_the_standard_library() -> None:
    assert_standard_library_only(capture.program_text(), _type_checking_only)


# --- the capture module written from it --------------------------------------------------------


def test_the_capture_module_is_the_program_then_the_runs_cases_then_the_call() -> None:
    differences = [
        ProbeDifference(
            origin="probe", expression="pair('\u00e9')", function="pair", modules=("pkg.core",)
        ),
        ProbeDifference(
            origin="replay", expression='\'__MAX__ """\'', test="tests/test_core.py::test_pair"
        ),
    ]
    text = capture.source(differences, ["tests/test_core.py", "README.md"])
    program, data = text.split("\n\n# --- this run's cases ---\n", 1)
    assert program == capture.program_text()
    assert data.isascii()  # any expression's text, written as escapes
    ast.parse(text, feature_version=(3, 5))
    fallback = ["tests.test_core", "test_core"]
    assert assigned(text, "CASES") == [capture.case_row(d, fallback) for d in differences]
    assert assigned(text, "CASES") == [
        ["probe", ["pkg.core"], "pair", "pair('\u00e9')", fallback],
        ["replay", [], "", '\'__MAX__ """\'', fallback],
    ]
    assert assigned(text, "MAX_TEXT") == capture.MAX_TEXT
    calls = [
        ast.unparse(stmt)
        for stmt in ast.parse(text).body
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
    ]
    assert calls == ["_name_cases()"]
