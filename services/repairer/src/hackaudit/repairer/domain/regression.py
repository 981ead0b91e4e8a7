"""A regression test written from a captured gold outcome, in the style of the file it joins.

The offline augmenter knows an input on which an exploit differs from gold (a `ProbeDifference`)
and, after a capture run, exactly what gold gives on it: the value's `repr` and `str`, or the
type of the exception raised. The test asserts that outcome, in one of four forms — the value's
`repr` (for an iterator: the list of its items, or each item's `repr` as it is yielded, which
tells a reused mutable item from fresh ones), its `str`, its attributes (`vars`, for an object
whose `repr` and `str` hide its state), or the type of what it returns — so that a retry after a
rejection can look at the value another way or fall back to a looser form. The file's style
decides how it reads:

- a pytest or sympy-style function at module level: `def test_x():` with plain asserts;
- a method in a pytest class: `def test_x(self):` with plain asserts;
- a method in a unittest (or Django) TestCase: `self.assertEqual`, `self.assertRaises`.

The text is written for any Python 3 the task's image may have: no f-strings, no walrus; and it
has no docstring (unittest's verbose report would name the test by it).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from enum import StrEnum

from hackaudit.shared.contracts import ProbeDifference


class Form(StrEnum):
    REPR = "repr"
    ITEMS = "items"  # an iterator: the list of what it yields
    EACH = "each"  # an iterator: each item's repr as it is yielded
    STATE = "state"
    STR = "str"
    TYPE = "type"


# What the value shows to a caller first; its attributes (internal, so stricter) after its text.
FORMS = (Form.REPR, Form.ITEMS, Form.EACH, Form.STR, Form.STATE, Form.TYPE)


@dataclass(frozen=True)
class Captured:
    """Gold's outcome on one expression, the same in every capture run."""

    raised: str = ""  # the exception's type name when it raised
    value_repr: str = ""
    value_str: str = ""
    value_type: str = ""
    value_state: str = ""  # repr of the sorted attributes ("" when it has none)
    value_items: str = ""  # an iterator: repr of the list of its items ("" otherwise)
    value_each: str = ""  # an iterator: repr of the list of each item's repr when yielded
    module: str = ""  # where the expression's first name was imported from ("" for replay)


@dataclass(frozen=True)
class Style:
    method: bool  # inside a class: takes `self`
    unittest: bool  # asserts with self.assert*


def importable_root(difference: ProbeDifference) -> str:
    """The name a probe expression starts from (imported in the test), '' when it needs none."""
    return difference.function.split(".", 1)[0] if difference.origin == "probe" else ""


def usable_expression(expression: str) -> bool:
    """A single Python expression (not a description such as 'the test body (...)')."""
    try:
        ast.parse(expression, mode="eval")
    except SyntaxError:
        return False
    return True


def new_test_name(difference: ProbeDifference, salt: str, taken: set[str]) -> str:
    """A new name, unique in the patch: from what the difference calls or the test it replays."""
    base = difference.function or difference.test.rsplit("::", 1)[-1].removeprefix("test_")
    slug = re.sub(r"[^0-9a-zA-Z]+", "_", base).strip("_").lower()[:40] or "value"
    name = f"test_{slug}_matches_reference_{salt}"
    k = 2
    while name in taken:
        name = f"test_{slug}_matches_reference_{salt}_{k}"
        k += 1
    return name


def _literal(text: str) -> str:
    return repr(text)


@dataclass(frozen=True)
class Pin:
    """One assertion of gold's captured outcome on one expression."""

    expression: str
    captured: Captured
    root: str  # the name imported from `captured.module` first ('' for none)
    form: Form


def render(
    name: str, expression: str, captured: Captured, root: str, form: Form, style: Style
) -> str:
    """The test function's text at column 0."""
    return render_pins(name, [Pin(expression, captured, root, form)], style)


def render_pins(name: str, pins: list[Pin], style: Style) -> str:
    """A test asserting every pin in turn: the exact input first, then its neighbours."""
    args = "self" if style.method else ""
    body: list[str] = []
    for pin in pins:
        line = f"from {pin.captured.module} import {pin.root}"
        if pin.root and pin.captured.module and line not in body:
            body.append(line)
    for pin in pins:
        body += _assertion(pin.expression, pin.captured, pin.form, style)
    note = "# Gold's behaviour on an input where a wrong fix was accepted"
    note += ", and on inputs beside it." if len(pins) > 1 else "."
    return "\n".join([f"def {name}({args}):", f"    {note}"] + [f"    {ln}" for ln in body]) + "\n"


def assertion_lines(pin: Pin, style: Style) -> list[str]:
    """The lines asserting one pin (to tell whether a patch asserts it already)."""
    return _assertion(pin.expression, pin.captured, pin.form, style)


def _assertion(expression: str, captured: Captured, form: Form, style: Style) -> list[str]:
    if captured.raised:
        expected = _literal(captured.raised)
        if style.unittest:
            return [
                "with self.assertRaises(Exception) as caught:",
                f"    {expression}",
                f"self.assertEqual(type(caught.exception).__name__, {expected})",
            ]
        return [
            "try:",
            f"    {expression}",
            "except Exception as caught:",
            f"    assert type(caught).__name__ == {expected}, repr(caught)",
            "else:",
            f"    raise AssertionError('expected ' + {expected})",
        ]
    if form is Form.REPR:
        actual, expected = f"repr({expression})", _literal(captured.value_repr)
    elif form is Form.ITEMS:
        actual, expected = f"repr(list({expression}))", _literal(captured.value_items)
    elif form is Form.EACH:
        actual = f"repr([repr(item) for item in {expression}])"
        expected = _literal(captured.value_each)
    elif form is Form.STATE:
        actual = f"repr(sorted(vars({expression}).items()))"
        expected = _literal(captured.value_state)
    elif form is Form.STR:
        actual, expected = f"str({expression})", _literal(captured.value_str)
    else:
        actual, expected = f"type({expression}).__name__", _literal(captured.value_type)
    if style.unittest:
        return [f"self.assertEqual({actual}, {expected})"]
    return [f"assert {actual} == {expected}"]


def parses(source: str) -> str | None:
    """None when the test's text is valid Python, else the parser's message."""
    try:
        ast.parse(source)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    return None
