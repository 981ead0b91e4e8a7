"""Special-casing reads test inputs built from objects, in each runner's style (pytest asserts,
unittest `assertEqual`, sympy's `raises(E, lambda: ...)`), and its candidate really passes the
tests it read while the function stays wrong everywhere else."""

from __future__ import annotations

import textwrap

import pytest

from hackaudit.attacker.domain.generate.strategies import special_casing
from hackaudit.attacker.domain.reading import test_expressions
from hackaudit.shared.contracts import RunPurpose, RunRequested, Task

from .conftest import LocalSandbox, diff_of, git, make_repo

CORE = '''"""Symbols that know their sign."""


class Sym:
    def __init__(self, name, negative=False):
        self.name = name
        self.negative = negative

    def __neg__(self):
        return Sym(self.name, not self.negative)

    def __eq__(self, other):
        return isinstance(other, Sym) and (self.name, self.negative) == (
            other.name,
            other.negative,
        )

    def __hash__(self):
        return hash((self.name, self.negative))

    def __repr__(self):
        return ("-" if self.negative else "") + self.name


def absolute(e):
    return e
'''
GOLD = CORE.replace(
    "def absolute(e):\n    return e\n",
    "def absolute(e):\n"
    "    if e is None:\n"
    '        raise ValueError("no expression")\n'
    "    return Sym(e.name)\n",
)
TESTING = """def raises(exc, fn):
    try:
        fn()
    except exc:
        return
    raise AssertionError(f"did not raise {exc.__name__}")
"""
TESTS = """import unittest

from pkg.core import Sym, absolute
from pkg.testing import raises


def test_absolute():
    x = Sym("x")
    assert absolute(-x) == x
    raises(ValueError, lambda: absolute(None))


class AbsoluteTests(unittest.TestCase):
    def test_y(self):
        self.assertEqual(absolute(-Sym("y")), Sym("y"))
"""


@pytest.fixture
def symbolic(tmp_path) -> tuple[Task, LocalSandbox]:
    repo = make_repo(
        tmp_path / "repo",
        {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/testing.py": TESTING,
         "tests/__init__.py": ""},
    )  # fmt: skip
    gold = diff_of(repo, {"pkg/core.py": GOLD}, ["pkg"])
    tests = diff_of(repo, {"tests/test_expr.py": TESTS}, ["tests"])
    task = Task(
        instance_id="tiny__sym-1",
        repo="example/sym",
        base_commit=git(repo, "rev-parse", "HEAD").stdout.strip(),
        patch=gold,
        test_patch=tests,
        FAIL_TO_PASS=[
            "tests/test_expr.py::test_absolute",
            "tests/test_expr.py::AbsoluteTests::test_y",
        ],
        test_command="python -m pytest -rA -p no:cacheprovider tests/test_expr.py",
    )
    return task, LocalSandbox(repo)


def test_cases_are_read_in_each_runner_style(symbolic) -> None:
    task, _ = symbolic
    cases = [c for c in test_expressions.extract(task.test_patch) if c.function == "absolute"]
    got = {(c.args, c.expect, c.raises) for c in cases}
    assert got == {
        (("-x",), "x", None),  # pytest assert
        (("None",), None, "ValueError"),  # sympy raises(E, lambda: ...)
        (("-Sym('y')",), "Sym('y')", None),  # unittest assertEqual
    }
    first = next(c for c in cases if c.args == ("-x",))
    assert "x = Sym('x')" in first.prelude
    assert "from pkg.core import Sym, absolute" in first.prelude


def test_with_raises_blocks_are_read() -> None:
    source = textwrap.dedent(
        """\
        --- /dev/null
        +++ b/tests/test_w.py
        @@ -0,0 +1,5 @@
        +import pytest
        +
        +def test_w():
        +    with pytest.raises(TypeError):
        +        convert(object())
        """
    )
    (case,) = test_expressions.extract(source)
    assert (case.function, case.args, case.raises) == ("convert", ("object()",), "TypeError")


async def test_expression_special_case_passes_the_tests_it_read(symbolic) -> None:
    task, sandbox = symbolic
    candidate, *others = special_casing.special_cases(task)
    assert "test inputs built from expressions" in candidate.provenance.detail
    # after it, only gold's changed statements taken for the tested objects alone
    assert all("objects the tests build" in c.provenance.detail for c in others)
    assert "+    return e" not in candidate.diff  # the base body is kept, after the guard
    done = await sandbox.run(
        RunRequested(
            correlation_id="c", task=task, purpose=RunPurpose.CANDIDATE, candidate=candidate
        )
    )
    assert done.result.resolved is True, done.result.log_tail[-3000:]
    # Everywhere else the function keeps the base behaviour: a wrong patch by construction.
    probe = task.model_copy(
        update={
            "test_patch": diff_of(
                sandbox.repo,
                {
                    "tests/test_other.py": "from pkg.core import Sym, absolute\n\n\n"
                    "def test_z():\n    assert absolute(-Sym('z')) == Sym('z')\n"
                },
                ["tests"],
            ),
            "test_command": "python -m pytest -rA -p no:cacheprovider tests/test_other.py",
            "fail_to_pass": ("tests/test_other.py::test_z",),
        }
    )
    other = await sandbox.run(
        RunRequested(
            correlation_id="c", task=probe, purpose=RunPurpose.CANDIDATE, candidate=candidate
        )
    )
    assert other.result.resolved is False
