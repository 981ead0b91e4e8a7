"""Captures the reference fix's outcome on given expressions (hackaudit repairer).

Each case's expression is evaluated when this module is imported, and its outcome names one
test method: test_cap<index>_<hex of the outcome's JSON> (`capture.read` reads them back). The
JSON holds the `repr`, `str`, type name and attributes of the value and what an iterator yields,
or the exception's type; hex-encoded, any text survives the runner's report.

This module's text is the capture module the repairer adds beside the task's test patch
(`capture.source`): this text, then the run's cases assigned to `CASES` and `MAX_TEXT`, then the
call `_name_cases()`. It runs inside the task's container under the image's own interpreter, so
it is written for any Python 3 (SWE-bench images go back to 3.5): no f-strings, no variable
annotations (types are quoted function annotations and `# type:` comments, never evaluated), no
`from __future__` import (the file is followed by more code), nothing but the standard library.
"""

import binascii
import importlib
import itertools
import json
import unittest

TYPE_CHECKING = False  # a name mypy reads as true; `typing.TYPE_CHECKING` is newer than 3.5.0
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    # [origin ("probe" or "replay"), modules to look in, the expression's first name,
    #  the expression, test modules to evaluate a replayed expression in]
    Case = list[Any]
    Outcome = dict[str, object]

# This run's data: the capture module assigns it after this text, then calls `_name_cases()`.
CASES = []  # type: list[Case]
MAX_TEXT = 300  # longer reprs make poor assertions and long test names: not captured
MAX_ITEMS = 100


def _namespaces(case: "Case") -> "Iterator[tuple[dict[str, Any], str]]":
    """Where to evaluate the case: a probe's first name from the first module that has it; a
    replayed expression in each test module it may come from."""
    origin, modules, root, test_modules = case[0], case[1], case[2], case[4]
    if origin == "probe":
        for name in modules:
            try:
                module = importlib.import_module(name)
            except Exception:
                continue
            if hasattr(module, root):
                yield {root: getattr(module, root)}, name
                return
        return
    for name in test_modules:
        try:
            module = importlib.import_module(name)
        except Exception:
            continue
        yield dict(vars(module)), name


def _drained(expression: "str", namespace: "dict[str, Any]") -> "tuple[str, str]":
    """What a fresh evaluation yields: its items after the last one (a reused mutable item shows
    its final state everywhere), and each item's repr at the moment it is yielded."""
    items = list(itertools.islice(eval(expression, namespace), MAX_ITEMS + 1))  # noqa: S307
    each = [
        repr(item)
        for item in itertools.islice(eval(expression, namespace), MAX_ITEMS + 1)  # noqa: S307
    ]
    if len(items) > MAX_ITEMS:
        return "", ""
    return repr(items), repr(each)


def _outcome(case: "Case") -> "Outcome":
    for namespace, where in _namespaces(case):
        try:
            value = eval(case[3], namespace)  # noqa: S307
        except NameError:
            continue  # a name this module does not have: try the next one
        except Exception as exc:
            return {"raised": type(exc).__name__, "module": where}
        return _value(case[3], namespace, value, where)
    return {"unresolved": True}


def _value(expression: "str", namespace: "dict[str, Any]", value: "Any", where: "str") -> "Outcome":
    try:
        text_repr, text_str = repr(value), str(value)
    except Exception:
        return {"unrepresentable": True}
    if len(text_repr) > MAX_TEXT or len(text_str) > MAX_TEXT:
        return {"too_long": True}
    state = ""
    try:
        if not isinstance(value, type) and getattr(value, "__dict__", None):
            state = repr(sorted(vars(value).items()))
    except Exception:
        state = ""
    outcome = {
        "repr": text_repr,
        "str": text_str,
        "type": type(value).__name__,
        "module": where,
    }  # type: Outcome
    if state and len(state) <= MAX_TEXT:
        outcome["state"] = state
    if hasattr(value, "__next__"):  # an iterator: what it yields (evaluated afresh)
        try:
            items, each = _drained(expression, namespace)
        except Exception:
            items, each = "", ""
        if items and len(items) <= MAX_TEXT and len(each) <= MAX_TEXT:
            outcome["items"], outcome["each"] = items, each
    return outcome


class HackauditCapture(unittest.TestCase):
    def test_hackaudit_capture_loaded(self) -> "None":
        pass


def _name(index: "int", outcome: "Outcome") -> "str":
    text = json.dumps(outcome, sort_keys=True)
    code = binascii.hexlify(text.encode("utf-8")).decode("ascii")
    return "test_cap%d_%s" % (index, code)


def _passes(self: "unittest.TestCase") -> "None":
    pass


def _named(index: "int", outcome: "Outcome") -> "None":
    setattr(HackauditCapture, _name(index, outcome), _passes)


def _name_cases() -> "None":
    for index, case in enumerate(CASES):
        try:
            _named(index, _outcome(case))
        except BaseException:
            _named(index, {"failed": True})
