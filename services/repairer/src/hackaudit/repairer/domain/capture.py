"""Capturing gold's exact outcome on the inputs where exploits differ from it.

A difference names the input and only a summary of the two outcomes, so before a regression test
can assert gold's behaviour the repairer runs the expression on gold in the sandbox: a small
module, added beside the task's test patch and run by the image's own interpreter whatever the
task's runner (a `Capture` invocation, like the attacker's probes), evaluates each expression
when it is imported and names one test method per case after the outcome — JSON (the `repr`,
`str`, type name and attributes of the value, or the exception's type), hex-encoded so that any
text survives the runner's report.
Probe expressions are evaluated with their first name imported from the first module that has
it; replayed ones in the namespace of the test module they come from (the task's test patch is
applied too), and one that needs a name the module does not have (a local of its test:
NameError) is not captured. Gold runs it several times; an outcome that is not the same in every
run is unstable and not used.
"""

from __future__ import annotations

import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hackaudit.repairer.domain import test_patch
from hackaudit.repairer.domain.regression import Captured, importable_root
from hackaudit.shared.contracts import Capture, ProbeDifference, RunResult, RunStatus, Task

CAPTURE_PATH = "test_hackaudit_capture.py"
CLASS = "HackauditCapture"
LOADED = "test_hackaudit_capture_loaded"
MAX_TEXT = 300  # longer reprs make poor assertions and long test names: not captured
_NAME = re.compile(r"test_cap(\d+)_([0-9a-f]+)")

_TEMPLATE = '''"""Captures the reference fix's outcome on given expressions (hackaudit repairer)."""

import binascii
import importlib
import itertools
import json
import unittest

CASES = __CASES__
MAX_TEXT = __MAX__
MAX_ITEMS = 100


def _namespaces(case):
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


def _drained(expression, namespace):
    """What a fresh evaluation yields: its items after the last one (a reused mutable item shows
    its final state everywhere), and each item's repr at the moment it is yielded."""
    items = list(itertools.islice(eval(expression, namespace), MAX_ITEMS + 1))
    each = [repr(item) for item in itertools.islice(eval(expression, namespace), MAX_ITEMS + 1)]
    if len(items) > MAX_ITEMS:
        return "", ""
    return repr(items), repr(each)


def _outcome(case):
    for namespace, where in _namespaces(case):
        try:
            value = eval(case[3], namespace)
        except NameError:
            continue  # a name this module does not have: try the next one
        except Exception as exc:
            return {"raised": type(exc).__name__, "module": where}
        return _value(case[3], namespace, value, where)
    return {"unresolved": True}


def _value(expression, namespace, value, where):
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
    outcome = {"repr": text_repr, "str": text_str, "type": type(value).__name__, "module": where}
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


class __CLASS__(unittest.TestCase):
    def __LOADED__(self):
        pass


def _named(index, outcome):
    text = json.dumps(outcome, sort_keys=True)
    code = binascii.hexlify(text.encode("utf-8")).decode("ascii")
    setattr(__CLASS__, "test_cap%d_%s" % (index, code), lambda self: None)


for _index, _case in enumerate(CASES):
    try:
        _named(_index, _outcome(_case))
    except BaseException:
        _named(_index, {"failed": True})
'''


def _test_modules(test_path: str) -> list[str]:
    """Import names the replayed test's module may have: dotted from the root, or from under
    its first directory (Django's `tests/` is on the path, not a package)."""
    module = test_path.removesuffix(".py").replace("/", ".")
    names = [module]
    if "." in module:
        names.append(module.split(".", 1)[1])
    return names


def module_file(module: str, paths: Sequence[str]) -> str | None:
    """The test patch's file that imports as `module` (None: none of them)."""
    return next((p for p in paths if p.endswith(".py") and module in _test_modules(p)), None)


def case_row(difference: ProbeDifference, fallback: Sequence[str] = ()) -> list[object]:
    """One case; a replayed expression is evaluated in its test's module, else in the first of
    the test patch's modules (`fallback`) that has every name it needs."""
    path = difference.test.split("::", 1)[0]
    own = _test_modules(path) if path else []
    return [
        difference.origin,
        list(difference.modules),
        importable_root(difference),
        difference.expression,
        list(dict.fromkeys([*own, *fallback])),
    ]


def source(differences: Sequence[ProbeDifference], test_files: Sequence[str] = ()) -> str:
    fallback = [m for p in test_files if p.endswith(".py") for m in _test_modules(p)]
    rows = json.dumps([case_row(d, fallback) for d in differences], indent=1)
    return (
        _TEMPLATE.replace("__CASES__", rows)
        .replace("__MAX__", str(MAX_TEXT))
        .replace("__CLASS__", CLASS)
        .replace("__LOADED__", LOADED)
    )


def invocation(task: Task, differences: Sequence[ProbeDifference]) -> Capture:
    """The capture run: the capture module, added beside the task's test patch (so replayed
    tests' modules exist)."""
    files = test_patch.paths(task.test_diff.applied())
    module = source(differences, files)
    return Capture(files={CAPTURE_PATH: module}, test=CAPTURE_PATH, loaded=f"{CLASS}.{LOADED}")


@dataclass(frozen=True)
class CaptureOutcome:
    captured: Captured | None  # None: not usable (see `problem`)
    problem: str = ""


def _decode(code: str) -> dict[str, object] | None:
    try:
        value = json.loads(binascii.unhexlify(code).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, binascii.Error):
        return None
    return value if isinstance(value, dict) else None


def _one_run(result: RunResult) -> dict[int, str]:
    out: dict[int, str] = {}
    for name in result.tests:
        match = _NAME.search(name)
        if match:
            out[int(match.group(1))] = match.group(2)
    return out


def read(results: Sequence[RunResult], count: int) -> list[CaptureOutcome]:
    """Each case's captured outcome, usable only when every run completed and agrees on it."""
    if not results or any(r.status is not RunStatus.COMPLETED for r in results):
        status = results[0].status.value if results else "missing"
        return [CaptureOutcome(None, f"capture run ended {status}")] * count
    runs = [_one_run(r) for r in results]
    out = []
    for i in range(count):
        codes = {run.get(i) for run in runs}
        if None in codes:
            out.append(CaptureOutcome(None, "the capture module did not load or report the case"))
        elif len(codes) > 1:
            out.append(CaptureOutcome(None, "unstable: gold's outcome differs across runs"))
        else:
            out.append(_outcome(_decode(codes.pop() or "")))
    return out


def _outcome(data: dict[str, object] | None) -> CaptureOutcome:
    if data is None:
        return CaptureOutcome(None, "unreadable capture")
    for flag, why in (
        ("unresolved", "the expression's name or test module could not be imported"),
        ("unrepresentable", "the value has no repr"),
        ("too_long", f"the value's text is longer than {MAX_TEXT} characters"),
        ("failed", "the capture itself failed"),
    ):
        if data.get(flag):
            return CaptureOutcome(None, why)
    module = str(data.get("module", ""))
    if "raised" in data:
        return CaptureOutcome(Captured(raised=str(data["raised"]), module=module))
    return CaptureOutcome(
        Captured(
            value_repr=str(data.get("repr", "")),
            value_str=str(data.get("str", "")),
            value_type=str(data.get("type", "")),
            value_state=str(data.get("state", "")),
            value_items=str(data.get("items", "")),
            value_each=str(data.get("each", "")),
            module=module,
        )
    )
