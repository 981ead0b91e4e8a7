"""The state part of the probe file: what the changed modules hold once imported.

A change at import (a constant, a class attribute, an import) is seen by every test that uses its
module, so no coverage map narrows the tests that could tell it apart. What such a change can do
is in the module once it is imported: this program imports each module in `STATE_MODULES` and
writes down everything it binds — each name's value, and for every function and class the module
defines, its code (bytecode, constants, names, defaults; not its line numbers), recursively
through containers, classes and instances' attributes. Each module's record is reported as a test
name, `test_state<index>_<digest of the record>` (`test_state<index>_raises_<exception>` when the
import fails), so gold's run and a candidate's say whether the candidate leaves every changed
module as gold's.

This module's text follows the probe program's (`probe_program`) in the same file and uses its
names; then comes this task's data (`STATE_MODULES`) and the call `_name_states()`. It is written,
as the probe program is, for any Python 3 the task's image may have: no f-strings, no variable
annotations, no `from __future__` import, nothing but the standard library.
"""

# --- the changed modules' state once imported ------------------------------------------------

import hashlib
import importlib
import re
import types

TYPE_CHECKING = False  # a name mypy reads as true; `typing.TYPE_CHECKING` is newer than 3.5.0
if TYPE_CHECKING:
    from typing import Any

if __name__ == "hackaudit.attacker.domain.confirm.programs.state_program":
    # Imported from the attacker's package (by its tests and the type checker). In the probe
    # file this text follows the probe program's, which defines these names in the same module.
    from hackaudit.attacker.domain.confirm.programs.probe_program import (
        _ADDRESS,
        HackauditProbe,
        _passes,
    )

# This task's data: the probe file assigns it after this text, then calls `_name_states()`.
STATE_MODULES = []  # type: list[str]

_STATE_DEPTH = 6
_STATE_ITEMS = 1000
# what every module binds and no test can tell apart
_STATE_SKIPPED = ("__builtins__", "__cached__", "__file__", "__loader__", "__spec__")
_SIMPLE = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))


def _code_record(code: "types.CodeType", depth: "int") -> "str":
    """A code object without its position: its bytecode, constants, names and flags."""
    consts = ", ".join(_record(c, depth + 1, "") for c in code.co_consts)
    return "code(%s %s [%s] %r %r %r %r %d %d)" % (
        code.co_name,
        code.co_code.hex(),
        consts,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_flags,
    )


def _attributes(value: "object", depth: "int", home: "str") -> "str":
    found = []
    for name, item in sorted((getattr(value, "__dict__", None) or {}).items()):
        if name in ("__dict__", "__weakref__"):
            continue
        found.append(str(name) + "=" + _record(item, depth + 1, home))
    return ", ".join(found)


def _cells(function: "types.FunctionType") -> "list[object]":
    """The values a function's closure holds (an empty cell as `Ellipsis`)."""
    found = []  # type: list[object]
    for cell in function.__closure__ or ():
        try:
            found.append(cell.cell_contents)
        except ValueError:
            found.append(Ellipsis)
    return found


def _record(value: "Any", depth: "int", home: "str") -> "str":
    """The value as text that is the same in every process and changes with any code or value
    it holds: functions and classes of the module `home` by their code, others by name."""
    if depth > _STATE_DEPTH:
        return "..."
    if isinstance(value, _SIMPLE):
        return repr(value)
    kind = type(value).__name__
    if isinstance(value, types.CodeType):
        return _code_record(value, depth)
    if isinstance(value, types.ModuleType):
        return "module:" + value.__name__
    if isinstance(value, (list, tuple)):
        items = [_record(v, depth + 1, home) for v in value[:_STATE_ITEMS]]
        return kind + "[" + ", ".join(items) + "]"
    if isinstance(value, (set, frozenset)):
        items = sorted(_record(v, depth + 1, home) for v in value)
        return kind + "{" + ", ".join(items[:_STATE_ITEMS]) + "}"
    if isinstance(value, dict):
        pairs = list(value.items())[:_STATE_ITEMS]
        items = [_record(k, depth + 1, home) + ": " + _record(v, depth + 1, home) for k, v in pairs]
        return kind + "{" + ", ".join(items) + "}"
    if isinstance(value, (staticmethod, classmethod)):
        return kind + "(" + _record(value.__func__, depth + 1, home) + ")"
    if isinstance(value, property):
        parts = [_record(f, depth + 1, home) for f in (value.fget, value.fset, value.fdel)]
        return "property(" + ", ".join(parts) + ")"
    name = str(getattr(value, "__module__", "")) + "." + str(getattr(value, "__qualname__", "?"))
    if isinstance(value, types.FunctionType):
        if value.__module__ != home:
            return "function:" + name
        return (
            "function:"
            + name
            + _code_record(value.__code__, depth)
            + " defaults "
            + _record(value.__defaults__, depth + 1, home)
            + " "
            + _record(value.__kwdefaults__, depth + 1, home)
            + " closure "
            + _record(_cells(value), depth + 1, home)
        )
    if isinstance(value, type):
        if value.__module__ != home:
            return "class:" + name
        bases = ", ".join(b.__module__ + "." + b.__qualname__ for b in value.__bases__)
        return "class:" + name + "(" + bases + ") {" + _attributes(value, depth, home) + "}"
    if callable(value) and not hasattr(value, "__dict__"):
        return kind + ":" + name  # a builtin or a method of one
    return kind + ":" + _shown(value) + "(" + _attributes(value, depth, home) + ")"


def _shown(value: "object") -> "str":
    """The value's own `repr`, addresses masked (nothing for `object`'s, or one that fails)."""
    if getattr(type(value), "__repr__", None) is getattr(object, "__repr__", None):
        return ""
    try:
        return _ADDRESS.sub("0x?", repr(value))
    except Exception:
        return "?"


def _module_record(name: "str") -> "str":
    module = importlib.import_module(name)
    names = sorted(n for n in vars(module) if n not in _STATE_SKIPPED)
    return "\n".join(n + " = " + _record(vars(module)[n], 0, name) for n in names)


def _name_states() -> "None":
    for index, name in enumerate(STATE_MODULES):
        try:
            record = _module_record(name)
        except (Exception, SystemExit) as exc:
            head = re.sub(r"[^0-9A-Za-z]+", "_", type(exc).__name__)
            setattr(HackauditProbe, "test_state%d_raises_%s" % (index, head), _passes)
            continue
        digest = hashlib.sha256(record.encode("utf-8", "replace")).hexdigest()[:12]
        setattr(HackauditProbe, "test_state%d_%s" % (index, digest), _passes)
