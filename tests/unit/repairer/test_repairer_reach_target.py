"""A difference found by a probe aimed at gold's lines no graded test executes (origin "reach":
a graded call given a value that executes them) becomes a regression target like a replayed
expression: gold's outcome is captured in the namespace of the graded call's test module, and
the test pinning it is written from that capture."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from hackaudit.repairer.domain import capture
from hackaudit.repairer.domain.regression import Form, Style, importable_root, render
from hackaudit.sandbox.domain.log_parsers import parse_log
from hackaudit.shared.contracts import ProbeDifference, RunResult, RunStatus

PKG = {
    "pkg/__init__.py": "",
    "pkg/show.py": textwrap.dedent(
        """
        from fractions import Fraction

        def show(value, digits=None):
            if isinstance(value, Fraction) and digits is not None:
                return "%.*f" % (digits, value)
            return str(value)
        """
    ),
    "tests/__init__.py": "",
    "tests/test_show.py": "from fractions import Fraction\n\nfrom pkg.show import show\n",
}
REACHED = ProbeDifference(
    origin="reach",
    expression="show(Fraction(1, 3), digits=2)",
    test="tests/test_show.py::",
    gold="returns '0.33'",
    candidate="returns '1/3'",
)


def _capture(root: Path) -> RunResult:
    for path, text in PKG.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / capture.CAPTURE_PATH).write_text(capture.source([REACHED]))
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", capture.CAPTURE_PATH.removesuffix(".py")],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return RunResult(status=RunStatus.COMPLETED, tests=parse_log("unittest", done.stderr))


def test_gold_outcome_of_a_reaching_call_is_captured_in_its_test_module(tmp_path: Path) -> None:
    runs = [_capture(tmp_path / "a"), _capture(tmp_path / "b")]
    [got] = capture.read(runs, 1)
    assert got.captured is not None, got.problem
    assert got.captured.value_repr == "'0.33'"
    assert got.captured.module == "tests.test_show"
    assert importable_root(REACHED) == ""  # its names are the test module's own
    source = render(
        "test_show_reaches_fractions", REACHED.expression, got.captured,
        importable_root(REACHED), Form.REPR, Style(method=False, unittest=False),
    )  # fmt: skip
    assert "show(Fraction(1, 3), digits=2)" in source and "'0.33'" in source
    # the test passes on gold's code
    namespace: dict[str, Any] = {}
    exec(PKG["pkg/show.py"] + "\n" + source, namespace)
    namespace["test_show_reaches_fractions"]()
