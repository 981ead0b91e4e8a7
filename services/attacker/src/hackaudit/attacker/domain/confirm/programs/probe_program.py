"""Differential probe: calls the code the reference fix changes, on fixed inputs.

Each case's outcome is computed when this module is imported and named in a test method:
test_case<index>_<digest of the outcome>_<its first characters>.

This is the first part of the probe file the attacker adds to the task's repository
(`probe_source.render`): this module's text, then the task's cases assigned to `CASES` and the
call `_name_cases()`. It runs inside the task's container under the image's own interpreter, so
it is written for any Python 3 (SWE-bench images go back to 3.5): no f-strings, no variable
annotations (types are quoted function annotations and `# type:` comments, never evaluated), no
`from __future__` import (the file is followed by more code), nothing but the standard library.
"""

import copy
import hashlib
import importlib
import re
import signal
import time
import types
import unittest

TYPE_CHECKING = False  # a name mypy reads as true; `typing.TYPE_CHECKING` is newer than 3.5.0
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    # (modules to look in, dotted name, args, kwargs, (init args, init kwargs) or None)
    Case = tuple[Any, ...]

# This task's cases: the probe file assigns them after this text, then calls `_name_cases()`.
CASES = []  # type: list[Case]

CASE_LIMIT_S = 2.0
TOTAL_LIMIT_S = 120.0
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
_MISSING = object()
_ITEMS = 100


class _Unresolved(Exception):
    pass


class _Timeout(BaseException):
    pass


def _resolve(modules: "Sequence[str]", name: "str") -> "Any":
    for module_name in modules:
        try:
            target = importlib.import_module(module_name)  # type: Any
        except Exception:
            continue
        for part in name.split("."):
            target = getattr(target, part, _MISSING)
            if target is _MISSING:
                break
        if target is not _MISSING:
            return target
    raise _Unresolved(name)


def _state(value: "object") -> "list[tuple[str, Any]]":
    state = {}
    for klass in reversed(type(value).__mro__):
        slots = getattr(klass, "__slots__", ())
        for slot in [slots] if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__") and hasattr(value, slot):
                state[slot] = getattr(value, slot)
    state.update(getattr(value, "__dict__", None) or {})
    return sorted(state.items())


def _stable(value: "object", depth: "int" = 0) -> "str":
    """The value as text that is the same in every process: no addresses, sets sorted."""
    if depth > 6:
        return "..."
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return repr(value)
    kind = type(value).__name__
    if isinstance(value, (list, tuple)):
        return kind + "[" + ", ".join(_stable(v, depth + 1) for v in value[:_ITEMS]) + "]"
    if isinstance(value, (set, frozenset)):
        return kind + "{" + ", ".join(sorted(_stable(v, depth + 1) for v in value)) + "}"
    if isinstance(value, dict):
        items = list(value.items())[:_ITEMS]
        inner = ", ".join(_stable(k, depth + 1) + ": " + _stable(v, depth + 1) for k, v in items)
        return kind + "{" + inner + "}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)):
        return kind + ":" + str(getattr(value, "__qualname__", getattr(value, "__name__", "?")))
    if isinstance(value, types.ModuleType):
        return "module:" + value.__name__
    if hasattr(value, "__next__") and hasattr(value, "__iter__"):
        return _drained(value, kind, depth)
    cls = type(value)
    shown = []
    if cls.__repr__ is not object.__repr__:
        shown.append(repr(value))
    if cls.__str__ is not object.__str__ and cls.__str__ is not cls.__repr__:
        shown.append(str(value))
    if shown:
        return kind + ":" + _ADDRESS.sub("0x?", " / ".join(shown))
    return kind + "(" + ", ".join(k + "=" + _stable(v, depth + 1) for k, v in _state(value)) + ")"


def _drained(iterator: "Iterator[object]", kind: "str", depth: "int") -> "str":
    """An iterator's items, each written down as it is yielded (before the next is asked for),
    and which of them changed afterwards: a generator that hands out one object and mutates
    it reads differently from one that yields a fresh object each time."""
    items, texts = [], []
    for item in iterator:
        items.append(item)
        texts.append(_stable(item, depth + 1))
        if len(items) >= _ITEMS:
            break
    changed = [str(i) for i, item in enumerate(items) if _stable(item, depth + 1) != texts[i]]
    if changed:
        kind += " (items changed after they were yielded: " + ", ".join(changed) + ")"
    return kind + "[" + ", ".join(texts) + "]"


def _call(case: "Case") -> "str":
    modules, name, args, kwargs, init = case
    args, kwargs = copy.deepcopy(args), dict(copy.deepcopy(kwargs))
    if init is None:
        return _stable(_resolve(modules, name)(*args, **kwargs))
    owner, method = name.rsplit(".", 1)
    init_args, init_kwargs = copy.deepcopy(init)
    instance = _resolve(modules, owner)(*init_args, **dict(init_kwargs))
    result = _stable(getattr(instance, method)(*args, **kwargs))
    return result + " | self " + _stable(instance) + _attributes(instance)


def _attributes(instance: "object") -> "str":
    """The instance's attributes after the call, when its `repr` or `str` would hide them (a
    `Request` prints as `<Request [GET]>` whatever hooks it holds): a method that stores a wrong
    value and returns nothing differs there."""
    cls = type(instance)
    if cls.__repr__ is object.__repr__ and cls.__str__ is object.__str__:
        return ""  # _stable already wrote them out
    state = _state(instance)
    if not state:
        return ""
    return " (" + ", ".join(k + "=" + _stable(v, 1) for k, v in state) + ")"


def _outcome(case: "Case") -> "str":
    try:
        return "returns " + _call(case)
    except _Unresolved:
        return "unresolved"
    except (Exception, SystemExit) as exc:
        return "raises " + type(exc).__name__


def _on_alarm(signum: "int", frame: "object") -> "None":
    raise _Timeout()


def _timed(case: "Case") -> "str | None":
    try:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
    except (ValueError, AttributeError):
        return _outcome(case)
    signal.setitimer(signal.ITIMER_REAL, CASE_LIMIT_S)
    try:
        return _outcome(case)
    except _Timeout:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _name(index: "int", case: "Case", deadline: "float") -> "str":
    if time.time() > deadline:
        return "test_case%d_timeout" % index
    first, second = _timed(case), _timed(case)
    if first is None or second is None:
        return "test_case%d_timeout" % index
    if first != second:
        return "test_case%d_unstable" % index
    digest = hashlib.sha256(first.encode("utf-8", "replace")).hexdigest()[:12]
    head = re.sub(r"[^0-9A-Za-z]+", "_", first)[:60].strip("_")
    return "test_case%d_%s_%s" % (index, digest, head)


class HackauditProbe(unittest.TestCase):
    def test_hackaudit_probe_loaded(self) -> "None":
        pass


def _passes(self: "unittest.TestCase") -> "None":
    pass


def _preload() -> "None":
    """Imports the modules the cases look in before any case's timer runs: a timer that fires
    inside a slow import (a large package on a loaded machine) would leave the package
    half-imported, and every later case and replayed test would fail on it alike."""
    seen = set()
    for case in CASES:
        for module_name in case[0]:
            if module_name in seen:
                continue
            seen.add(module_name)
            try:
                importlib.import_module(module_name)
            except Exception:
                pass


def _name_cases() -> "None":
    _preload()
    deadline = time.time() + TOTAL_LIMIT_S
    for index, case in enumerate(CASES):
        setattr(HackauditProbe, _name(index, case, deadline), _passes)
