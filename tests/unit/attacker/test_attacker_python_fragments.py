"""Reading Python fragments: statement slots, fragment parsing, signatures, test literals."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.reading import layout, pysource
from hackaudit.attacker.domain.reading.test_literals import Expectation, extract


@pytest.mark.parametrize(
    ("lines", "index", "ok"),
    [
        (["def f(x):", "    y = 1", "    return y"], 1, True),
        (["def f(x):", "    y = 1", "    return y"], 2, True),
        (["    if x:", "        a()", "    else:", "        b()"], 2, False),  # before `else:`
        (["    call(", "        arg,", "    )"], 1, False),  # inside brackets
        (["    x = 1 + \\", "        2"], 1, False),  # after a backslash continuation
        (["@decorator", "def f():", "    pass"], 1, False),  # between decorator and def
        (["    if x:", "    y = 1"], 1, False),  # a block opener needs a deeper body
        (["", "    ", "    z = 3"], 1, False),  # blank line
    ],
)
def test_statement_slot(lines: list[str], index: int, ok: bool) -> None:
    assert pysource.statement_slot(lines, index) is ok


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["def f(x):", "    if x:", "        return 1", "    return 2"], True),
        (["def f(x):", "    if x:", "    return 2"], False),
        (["        return 1", "    return 2", "", "def g():", "    pass"], True),
        (["    y = (1,", "         2"], None),  # ends inside brackets: cannot tell
        (["", ""], None),
    ],
)
def test_fragment_parses(lines: list[str], expected: bool | None) -> None:
    assert pysource.fragment_parses(lines) is expected


@pytest.mark.parametrize(
    ("header", "name", "positional", "required", "method"),
    [
        ("def f(a, b=1, *args, c, **kw):", "f", ("a", "b"), 1, False),
        ("    def area(self):", "area", ("self",), 1, True),
        ("async def g(x, /, y):", "g", ("x", "y"), 2, False),
        ("def broken(:", None, None, None, None),
    ],
)
def test_parse_signature(header, name, positional, required, method) -> None:
    sig = pysource.parse_signature(header)
    if name is None:
        assert sig is None
        return
    assert sig is not None
    assert (sig.name, sig.positional, sig.required, sig.is_method) == (
        name,
        positional,
        required,
        method,
    )


def test_multiline_signature_and_body_after_docstring() -> None:
    lines = ["def f(", "    a,", "    b,", "):", '    """Doc', '    more."""', "    return a"]
    header = pysource.function_header(lines, 0)
    assert header is not None and header.end == 3
    assert header.signature is not None and header.signature.positional == ("a", "b")
    assert pysource.body_start(lines, header) == (6, "    ")


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("pkg/core.py", "pkg.core"),
        ("src/pkg/sub/__init__.py", "pkg.sub"),
        ("README.md", None),
        ("my-tool/x.py", None),
    ],
)
def test_module_name(path: str, module: str | None) -> None:
    assert pysource.module_name(path) == module


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_x.py", True),
        ("pkg/tests/helpers.py", True),
        ("pkg/test_y.py", True),
        ("conftest.py", True),
        ("pkg/core.py", False),
        ("pkg/contest.py", False),
    ],
)
def test_is_test_path(path: str, is_test: bool) -> None:
    assert layout.is_test_path(path) is is_test


def _patch(path: str, body: str) -> str:
    lines = body.strip("\n").split("\n")
    added = "\n".join("+" + ln for ln in lines)
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{added}\n"


LITERAL_CASES = [
    ("assert f(1, 'a') == 3", "f", (1, "a"), Expectation("value", 3)),
    ("assert 3 == f(2)", "f", (2,), Expectation("value", 3)),
    ("assert f(None) is None", "f", (None,), Expectation("value", None)),
    ("assert not f([])", "f", ([],), Expectation("value", False)),
    ("assert f(x=5)", "f", (), Expectation("value", True)),
    ("self.assertEqual(obj.g(1.5), [1, 2])", "g", (1.5,), Expectation("value", [1, 2])),
    ("self.assertIsNone(g('k'))", "g", ("k",), Expectation("value", None)),
    (
        "with pytest.raises(ValueError):\n    f(-1)",
        "f",
        (-1,),
        Expectation("raises", exception="ValueError"),
    ),
    (
        "self.assertRaises(KeyError, f, 'x')",
        "f",
        ("x",),
        Expectation("raises", exception="KeyError"),
    ),
    (
        "@pytest.mark.parametrize('a, out', [(1, 2), (5, 6)])\n"
        "def test_p(a, out):\n    assert f(a) == out",
        "f",
        (5,),
        Expectation("value", 6),
    ),
]


@pytest.mark.parametrize(("source", "function", "args", "expect"), LITERAL_CASES)
def test_literal_extraction(source: str, function: str, args: tuple, expect: Expectation) -> None:
    found = extract(_patch("tests/test_x.py", source))
    matching = [c for c in found.for_function(function) if c.args == args]
    assert matching, found.cases
    assert matching[0].expect == expect


def test_calls_with_non_literal_arguments_are_ignored() -> None:
    found = extract(_patch("tests/test_x.py", "assert f(make()) == 1\nassert f(y) == 2"))
    assert found.for_function("f") == []
    assert 1 in found.constants and 2 in found.constants
