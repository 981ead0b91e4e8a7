"""Gold's outcome is captured by a real interpreter run of the capture module, read back from the
runner's report, and turned into a regression test that parses and passes in every style."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hackaudit.repairer.domain import capture
from hackaudit.repairer.domain.regression import (
    Captured,
    Form,
    Style,
    importable_root,
    new_test_name,
    parses,
    render,
    usable_expression,
)
from hackaudit.sandbox.domain.log_parsers import parse_log
from hackaudit.shared.contracts import ProbeDifference, RunResult, RunStatus

PKG = {
    "pkg/__init__.py": "",
    "pkg/core.py": textwrap.dedent(
        """
        class Box:
            def __init__(self, items):
                self.items = list(items)

            def first(self):
                return self.items[0]

        def pair(x):
            return [x, x]

        def unstable():
            import random
            return random.random()
        """
    ),
    "tests/__init__.py": "",
    "tests/test_core.py": "from pkg.core import pair\nLIMIT = 3\n",
}
DIFFERENCES = [
    ProbeDifference(
        origin="probe", expression="pair('a')", function="pair", modules=("pkg.x", "pkg.core")
    ),
    ProbeDifference(
        origin="probe", expression="Box([]).first()", function="Box.first", modules=("pkg.core",)
    ),
    ProbeDifference(
        origin="replay", expression="pair(LIMIT)", test="tests/test_core.py::test_pair"
    ),
    ProbeDifference(
        origin="probe", expression="unstable()", function="unstable", modules=("pkg.core",)
    ),
    ProbeDifference(
        origin="probe", expression="nowhere(1)", function="nowhere", modules=("pkg.core",)
    ),
    ProbeDifference(
        origin="replay", expression="local_value + 1", test="tests/test_core.py::test_pair"
    ),
]


def _run_capture(root: Path) -> RunResult:
    for path, text in PKG.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / capture.CAPTURE_PATH).write_text(capture.source(DIFFERENCES))
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", capture.CAPTURE_PATH.removesuffix(".py")],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    tests = parse_log("unittest", done.stdout + done.stderr)
    return RunResult(status=RunStatus.COMPLETED, tests=tests)


def test_capture_reads_values_exceptions_and_rules_out_the_unstable(tmp_path: Path) -> None:
    first = _run_capture(tmp_path / "a")
    second = _run_capture(tmp_path / "b")
    got = capture.read([first, second], len(DIFFERENCES))
    assert got[0].captured == Captured(
        value_repr="['a', 'a']", value_str="['a', 'a']", value_type="list", module="pkg.core"
    )
    assert got[1].captured == Captured(raised="IndexError", module="pkg.core")
    assert got[2].captured is not None and got[2].captured.value_repr == "[3, 3]"
    assert got[3].captured is None and "unstable" in got[3].problem
    assert got[4].captured is None and "could not be imported" in got[4].problem
    assert got[5].captured is None  # a local of the replayed test: no capture, no NameError test


def test_capture_of_an_incomplete_run_is_no_capture() -> None:
    got = capture.read([RunResult(status=RunStatus.TIMEOUT)], 2)
    assert [g.captured for g in got] == [None, None] and "timeout" in got[0].problem


STYLES = {
    "pytest function": Style(method=False, unittest=False),
    "pytest class": Style(method=True, unittest=False),
    "unittest": Style(method=True, unittest=True),
}


@pytest.mark.parametrize("style", STYLES.values(), ids=list(STYLES))
@pytest.mark.parametrize("form", [Form.REPR, Form.STR, Form.TYPE])
def test_rendered_tests_parse_and_pass_on_gold_and_fail_otherwise(
    tmp_path: Path, style: Style, form: Form
) -> None:
    """The test is executed: against gold's captured behaviour and against a wrong value."""
    captured = Captured(
        value_repr="['a', 'a']", value_str="['a', 'a']", value_type="list", module="pkg.core"
    )
    difference = DIFFERENCES[0]
    source = render(
        "test_pair_x", difference.expression, captured, importable_root(difference), form, style
    )
    assert parses(source) is None
    for path, text in PKG.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    body = textwrap.indent(source, "    ") if style.method else source
    head = "import unittest\n\nclass T(unittest.TestCase):\n" if style.unittest else "class T:\n"
    module = (head + body) if style.method else source
    runner = "t = T()\nt.test_pair_x()\n" if style.method else "test_pair_x()\n"
    (tmp_path / "run_it.py").write_text(module + "\n" + runner)
    ok = subprocess.run(
        [sys.executable, "run_it.py"], cwd=tmp_path, capture_output=True, check=False
    )
    assert ok.returncode == 0, ok.stderr
    wrong = "def pair(x):\n    return (x, x) if isinstance(x, str) else [x, x]\n"
    (tmp_path / "pkg/core.py").write_text(PKG["pkg/core.py"] + "\n" + wrong)
    bad = subprocess.run(
        [sys.executable, "run_it.py"], cwd=tmp_path, capture_output=True, check=False
    )
    assert bad.returncode != 0 and b"AssertionError" in bad.stderr


@pytest.mark.parametrize("style", STYLES.values(), ids=list(STYLES))
def test_a_raising_outcome_asserts_the_exception_type(style: Style) -> None:
    source = render(
        "test_first",
        "Box([]).first()",
        Captured(raised="IndexError", module="pkg.core"),
        "Box",
        Form.REPR,
        style,
    )
    assert parses(source) is None
    assert "IndexError" in source and "from pkg.core import Box" in source
    if style.unittest:
        assert "self.assertRaises(Exception)" in source


def test_names_are_new_and_expressions_must_be_expressions() -> None:
    d = DIFFERENCES[1]
    assert new_test_name(d, "abc123", set()) == "test_box_first_matches_reference_abc123"
    taken = {"test_box_first_matches_reference_abc123"}
    assert new_test_name(d, "abc123", taken).endswith("_2")
    assert usable_expression("f(1)") and not usable_expression("the test body (x == 1)")
    assert ast.parse(
        render("test_a", "f(1)", Captured(value_repr="1"), "", Form.REPR, STYLES["unittest"])
    )


def test_the_state_form_sees_what_a_repr_hides(tmp_path: Path) -> None:
    """An object whose repr is its input: only its attributes tell gold from a wrong fix."""
    root = tmp_path / "cap"
    root.mkdir()
    (root / "rng.py").write_text(
        "class Range:\n    def __init__(self, text):\n        self.text = text\n"
        "        self.low = text.lstrip('^')\n    def __repr__(self):\n"
        "        return 'Range(%r)' % self.text\n"
    )
    difference = ProbeDifference(
        origin="probe", expression="Range('^1')", function="Range", modules=("rng",)
    )
    (root / capture.CAPTURE_PATH).write_text(capture.source([difference]))
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", capture.CAPTURE_PATH.removesuffix(".py")],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    result = RunResult(status=RunStatus.COMPLETED, tests=parse_log("unittest", done.stderr))
    (got,) = capture.read([result], 1)
    assert got.captured is not None
    assert got.captured.value_state == "[('low', '1'), ('text', '^1')]"
    source = render(
        "test_r", difference.expression, got.captured, "Range", Form.STATE, STYLES["unittest"]
    )
    assert "self.assertEqual(repr(sorted(vars(Range('^1')).items()))" in source
    assert '"""' not in source  # unittest -v would report a docstring in place of the name


GENERATORS = {
    "gen/__init__.py": "",
    "gen/core.py": (
        "def fresh(n):\n    for i in range(n):\n        yield {'i': i}\n\n\n"
        "def reused(n):\n    d = {}\n    for i in range(n):\n        d['i'] = i\n        yield d\n"
    ),
    "tests/__init__.py": "",
    "tests/test_gen.py": "from gen.core import fresh\n",
}


def _capture_in(root: Path, differences: list[ProbeDifference], files: list[str]) -> list[object]:
    for path, text in GENERATORS.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / capture.CAPTURE_PATH).write_text(capture.source(differences, files))
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", capture.CAPTURE_PATH.removesuffix(".py")],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    result = RunResult(status=RunStatus.COMPLETED, tests=parse_log("unittest", done.stderr))
    return [c.captured for c in capture.read([result], len(differences))]


def test_an_iterator_is_captured_by_what_it_yields_and_the_test_tells_reuse(tmp_path: Path) -> None:
    d = ProbeDifference(
        origin="probe", expression="fresh(3)", function="fresh", modules=("gen.core",)
    )
    (got,) = _capture_in(tmp_path, [d], [])
    assert isinstance(got, Captured)
    assert got.value_items == "[{'i': 0}, {'i': 1}, {'i': 2}]"
    assert got.value_each == "[\"{'i': 0}\", \"{'i': 1}\", \"{'i': 2}\"]"
    source = render("test_fresh", d.expression, got, "fresh", Form.ITEMS, STYLES["pytest function"])
    (tmp_path / "check.py").write_text(source + "\ntest_fresh()\n")
    assert subprocess.run([sys.executable, "check.py"], cwd=tmp_path, check=False).returncode == 0
    # A wrong fix that reuses one dict yields the same items at the end: the test catches it.
    core = tmp_path / "gen" / "core.py"
    core.write_text(core.read_text() + "\nfresh = reused\n")
    bad = subprocess.run(
        [sys.executable, "check.py"], cwd=tmp_path, capture_output=True, check=False
    )
    assert bad.returncode != 0 and b"AssertionError" in bad.stderr


def test_a_replayed_expression_from_outside_the_patch_uses_a_test_module_of_it(
    tmp_path: Path,
) -> None:
    d = ProbeDifference(
        origin="replay", expression="list(fresh(1))", test="issue_examples.py::test_issue"
    )
    (got,) = _capture_in(tmp_path, [d], ["tests/test_gen.py"])
    assert isinstance(got, Captured) and got.module == "tests.test_gen"
    assert capture.module_file(got.module, ["tests/test_gen.py"]) == "tests/test_gen.py"
