"""The reach part of the probe: the graded tests' calls, given values that reach gold's lines the
graded tests never execute.

A fix that makes an option work in several places (one formatting method per type) is often
graded on one of them; the changed lines in the others run under no graded test, and a patch that
leaves them out passes. The calls the tests assert on already carry the option
(`fmt(Decimal("3.14159"), precision=2)`); what they lack is a value of the type the other lines
handle. This program finds such values the way the repository builds them, and recombines:

1. each function of the changed module whose code holds a target line (gold's line no graded test
   executes) is hooked, and every argument it is given is kept (a deep copy, as first seen);
2. the repository tests that reach those functions (`REACH_HARVEST`: test names as coverage.py's
   test contexts write them, `pkg.tests.test_x.test_a` or `pkg.tests.test_x.TestC.test_a`, test
   files, or test directories) are run — plain test functions and methods called without
   arguments, `unittest.TestCase` classes through unittest — and the hooks removed;
3. each graded call shape (`REACH_SHAPES`: the call's source, its positional and keyword arguments'
   sources, the statements that define the names they use) is evaluated in its test module's
   namespace with one positional argument replaced by a kept value, under a line tracer on the
   changed files.

Each evaluation is reported as a test name,
`test_reach_<key>_<digest>_<reached> =>> <call> =>> <outcome head> <<=`, where `reached` lists the
targets (`h<i>`) whose lines the call executed, or `n`: on gold, only a call that executes a
target line counts (the attacker drops the others), so a difference says the candidate treats
that code differently. The key is `s<shape index>k<digest of the shape, the position and the
value's stable text>`, so gold's and a candidate's runs name the same call alike even when they
keep values in another order.

This module's text is the third part of the probe file (`reach.source`): it follows the probe
program's (`probe_program`) in the same module, uses its names, and is followed by this task's
data (`REACH_TARGETS`, `REACH_HARVEST`, `REACH_SHAPES`, the limits) and the call
`_reach_names()`. It is written, as the probe program is, for any Python 3 the task's image may
have: no f-strings, no variable annotations, no `from __future__` import, nothing but the
standard library.
"""

# --- recombined calls that reach gold's unexecuted lines -------------------------------------

import copy
import dis
import functools
import hashlib
import importlib
import importlib.util as _ilu
import os as _os
import pickle
import re
import select
import signal
import sys
import time
import types
import unittest

TYPE_CHECKING = False  # a name mypy reads as true; `typing.TYPE_CHECKING` is newer than 3.5.0
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

if __name__ == "hackaudit.attacker.domain.confirm.programs.reach_program":
    # Imported from the attacker's package (by its tests and the type checker). In the probe
    # file this text follows the probe program's, which defines these names in the same module.
    from hackaudit.attacker.domain.confirm.programs.probe_program import (
        _ADDRESS,
        HackauditProbe,
        _on_alarm,
        _passes,
        _stable,
        _Timeout,
    )

# This task's data: the probe file assigns each after this text, then calls `_reach_names()`.
# (changed file, its module, the target lines, the names of the functions holding them in gold)
REACH_TARGETS = []  # type: list[tuple[str, str, list[int], list[str]]]
# the repository tests to take values from: test names, test files or test directories
REACH_HARVEST = []  # type: list[str]
# (test file, its module, prelude statements, callee source, positional sources, keyword sources)
REACH_SHAPES = []  # type: list[tuple[str, str, list[str], str, list[str], list[tuple[str, str]]]]
REACH_TOTAL_S = 60.0
REACH_MAX_VALUES = 24
REACH_MAX_CALLS = 240
REACH_CALL_S = 2.0
REACH_TEST_S = 5.0
_PLACEHOLDER = "_hackaudit_value"
_EXPR_CHARS = 160
_HEAD_CHARS = 100


class _Kept(object):
    """The values the hooked functions were given, each once (by type and stable text)."""

    def __init__(self, limit: "int") -> "None":
        self.limit = limit
        self.values = []  # type: list[tuple[str, object]]
        self.seen = set()  # type: set[str]

    def add(self, value: "object") -> "None":
        if len(self.values) >= self.limit:
            return
        try:
            text = type(value).__name__ + ":" + _ADDRESS.sub("0x?", _stable(value))
        except Exception:
            return
        if text in self.seen:
            return
        self.seen.add(text)
        try:
            value = copy.deepcopy(value)
        except Exception:
            pass
        self.values.append((text, value))


def _code_lines(code: "Any") -> "set[int]":
    """The line numbers of a code object and the code objects nested in it."""
    lines = {line for _, line in dis.findlinestarts(code) if line is not None}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            lines |= _code_lines(const)
    return lines


def _same_file(path: "str", filename: "str") -> "bool":
    try:
        return _os.path.realpath(filename) == _os.path.realpath(path)
    except Exception:
        return False


def _holders(
    module: "Any", path: "str", lines: "set[int]", names: "Sequence[str]"
) -> "list[tuple[Any, str, str]]":
    """(owner, attribute name, kind) of each function of `module` named in `names` or whose code
    holds a line of `lines` (gold's numbers: a candidate's file may number them otherwise):
    kind is "plain" (module level or static), "method" or "classmethod"."""
    found = []  # type: list[tuple[Any, str, str]]
    owners = [(module, vars(module))]
    for value in list(vars(module).values()):
        if isinstance(value, type) and getattr(value, "__module__", None) == module.__name__:
            owners.append((value, vars(value)))
    for owner, namespace in owners:
        is_class = isinstance(owner, type)
        for name, value in list(namespace.items()):
            kind = "method" if is_class else "plain"
            function = value
            if isinstance(value, staticmethod):
                kind, function = "plain", value.__func__
            elif isinstance(value, classmethod):
                kind, function = "classmethod", value.__func__
            code = getattr(function, "__code__", None)
            if not isinstance(function, types.FunctionType) or code is None:
                continue
            if not _same_file(path, code.co_filename):
                continue
            if function.__name__ not in names and not (_code_lines(code) & lines):
                continue
            found.append((owner, name, kind))
    return found


def _hook(owner: "Any", name: "str", kind: "str", kept: "_Kept") -> "Callable[[], None]":
    """Replaces the function with one that keeps its arguments; returns what undoes it."""
    original = vars(owner)[name] if isinstance(owner, type) else getattr(owner, name)
    function = getattr(original, "__func__", original)
    skip = 0 if kind == "plain" else 1

    def keeping(*args: "Any", **kwargs: "Any") -> "Any":
        for value in list(args[skip:]) + list(kwargs.values()):
            kept.add(value)
        return function(*args, **kwargs)

    wrapped = keeping  # type: Any
    if isinstance(original, staticmethod):
        wrapped = staticmethod(keeping)
    elif isinstance(original, classmethod):
        wrapped = classmethod(keeping)
    setattr(owner, name, wrapped)

    def undo() -> "None":
        setattr(owner, name, original)

    return undo


def _reach_load(path: "str", module_name: "str") -> "Any":
    try:
        return importlib.import_module(module_name)
    except Exception:
        pass
    name = "hackaudit_reach_" + str(abs(hash(path)))
    spec = _ilu.spec_from_file_location(name, path)  # type: Any
    module = _ilu.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module_name(path: "str") -> "str":
    trimmed = path[:-3] if path.endswith(".py") else path
    return trimmed.strip("/").replace("/", ".")


def _test_files(entry: "str") -> "list[str]":
    if _os.path.isdir(entry):
        names = sorted(_os.listdir(entry))
        return [
            _os.path.join(entry, n)
            for n in names
            if n.endswith(".py") and (n.startswith("test") or n.endswith("_test.py"))
        ]
    return [entry] if entry.endswith(".py") else []


def _resolve_test(name: "str") -> "list[Any]":
    """The test objects a dotted test name means: its module's longest importable prefix, then
    attributes (`pkg.tests.test_x.TestC.test_a` -> the method, unbound)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))  # type: Any
        except Exception:
            continue
        owner = None  # type: Any
        for part in parts[cut:]:
            owner, target = target, getattr(target, part, None)
            if target is None:
                return []
        if isinstance(owner, type) and callable(target):
            return [(owner, parts[-1])]
        return [target]
    return []


def _tests_of(entry: "str") -> "list[Any]":
    """The runnable tests an entry of `REACH_HARVEST` stands for: functions, (class, method
    name) pairs, and modules (every test in them)."""
    files = _test_files(entry)
    if not files and ("/" in entry or entry.endswith(".py")):
        return []
    if not files:
        return _resolve_test(entry)
    out = []  # type: list[Any]
    for path in files:
        try:
            out.append(_reach_load(path, _module_name(path)))
        except Exception:
            continue
    return out


def _run_method(cls: "Any", method: "str") -> "None":
    if isinstance(cls, type) and issubclass(cls, unittest.TestCase):
        unittest.TestSuite([cls(method)]).run(unittest.TestResult())
        return
    instance = cls()
    for hook in ("setup_method", "setUp"):
        if hasattr(instance, hook):
            try:
                getattr(instance, hook)(getattr(instance, method))
            except TypeError:
                getattr(instance, hook)()
    getattr(instance, method)()


def _runnables(target: "Any") -> "list[Callable[[], object]]":
    if isinstance(target, tuple):
        cls, method = target
        return [functools.partial(_run_method, cls, method)]
    if not isinstance(target, types.ModuleType):
        return [target] if callable(target) else []
    out = []  # type: list[Callable[[], object]]
    for name, value in sorted(vars(target).items()):
        if not name.startswith("test") and not name.startswith("Test"):
            continue
        if isinstance(value, types.FunctionType) and value.__module__ == target.__name__:
            out.append(value)
        elif isinstance(value, type) and value.__module__ == target.__name__:
            for method in sorted(vars(value)):
                if method.startswith("test") and callable(getattr(value, method)):
                    out.append(functools.partial(_run_method, value, method))
    return out


def _reach_limited(thunk: "Callable[[], object]", seconds: "float") -> "object":
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    except (ValueError, AttributeError):
        return thunk()
    try:
        return thunk()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _harvest(kept: "_Kept", deadline: "float") -> "None":
    cwd = _os.getcwd()
    for entry in REACH_HARVEST:
        for target in _tests_of(entry):
            for run in _runnables(target):
                if time.time() > deadline or len(kept.values) >= kept.limit:
                    return
                try:
                    _reach_limited(run, REACH_TEST_S)
                except (Exception, SystemExit, _Timeout):
                    pass
                try:
                    _os.chdir(cwd)
                except OSError:
                    pass


def _keep_values() -> "list[tuple[str, object]]":
    """The values the harvest keeps, run in a child process where the platform forks: a
    repository test that kills its process, hangs past every alarm or changes global state
    then takes nothing from the probe's other parts. The values come back pickled, each on its
    own (one that does not pickle or unpickle is left out)."""
    try:
        read_end, write_end = _os.pipe()
        pid = _os.fork()
    except (AttributeError, OSError):
        return _harvested()
    if pid == 0:
        code = 1
        try:
            _os.close(read_end)
            with _os.fdopen(write_end, "wb") as out:
                out.write(pickle.dumps(_pickled(_harvested()), protocol=2))
            code = 0
        finally:
            _os._exit(code)
    _os.close(write_end)
    data = _read_all(read_end, time.time() + REACH_TOTAL_S / 2 + REACH_TEST_S + 5.0)
    try:
        _os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    _os.waitpid(pid, 0)
    return _unpickled(data)


def _read_all(fd: "int", deadline: "float") -> "bytes":
    """What the child writes before it closes its end, or nothing once `deadline` passes."""
    chunks = []  # type: list[bytes]
    try:
        while True:
            left = deadline - time.time()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return b""
            chunk = _os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except (OSError, _Timeout):
        return b""
    finally:
        _os.close(fd)


def _pickled(values: "Sequence[tuple[str, object]]") -> "list[tuple[str, bytes]]":
    out = []  # type: list[tuple[str, bytes]]
    for text, value in values:
        try:
            out.append((text, pickle.dumps(value, protocol=2)))
        except Exception:
            continue
    return out


def _unpickled(data: "bytes") -> "list[tuple[str, object]]":
    try:
        rows = pickle.loads(data) if data else []  # noqa: S301
    except Exception:
        return []
    out = []  # type: list[tuple[str, object]]
    for text, blob in rows:
        try:
            out.append((text, pickle.loads(blob)))  # noqa: S301
        except Exception:
            continue
    return out


def _harvested() -> "list[tuple[str, object]]":
    """Runs the harvest with every function holding a target line hooked."""
    kept = _Kept(REACH_MAX_VALUES)
    undo = []  # type: list[Callable[[], None]]
    for path, module_name, lines, names in REACH_TARGETS:
        try:
            module = _reach_load(path, module_name)
        except Exception:
            continue
        for owner, name, kind in _holders(module, path, set(lines), names):
            undo.append(_hook(owner, name, kind, kept))
    if not undo:
        return []
    try:
        _harvest(kept, time.time() + REACH_TOTAL_S / 2)
    finally:
        for step in reversed(undo):
            step()
    return kept.values


class _Tracer(object):
    """Which targets' lines run while it is installed (only frames of the changed files)."""

    def __init__(self) -> "None":
        self.hit = set()  # type: set[int]
        self.files = {}  # type: dict[str, list[tuple[int, set[int]]]]
        for index, (path, _, lines, _) in enumerate(REACH_TARGETS):
            real = _os.path.realpath(path)
            self.files.setdefault(real, []).append((index, set(lines)))
        self.codes = {}  # type: dict[str, Any]

    def _watched(self, filename: "str") -> "Any":
        if filename not in self.codes:
            self.codes[filename] = self.files.get(_os.path.realpath(filename))
        return self.codes[filename]

    def __call__(self, frame: "Any", event: "str", arg: "object") -> "Any":
        targets = self._watched(frame.f_code.co_filename)
        if targets is None:
            return None

        def local(frame: "Any", event: "str", arg: "object") -> "Any":
            if event == "line":
                for index, lines in targets:
                    if frame.f_lineno in lines:
                        self.hit.add(index)
            return local

        return local


def _evaluate(code: "Any", namespace: "dict[str, Any]", value: "object") -> "tuple[str, set[int]]":
    scope = dict(namespace)
    try:
        scope[_PLACEHOLDER] = copy.deepcopy(value)
    except Exception:
        scope[_PLACEHOLDER] = value
    tracer = _Tracer()
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = _reach_limited(lambda: eval(code, scope), REACH_CALL_S)  # noqa: S307
        outcome = "returns " + _ADDRESS.sub("0x?", _stable(result))
    except _Timeout:
        outcome = "timeout"
    except (Exception, SystemExit) as exc:
        outcome = "raises " + type(exc).__name__
    finally:
        sys.settrace(previous)
    return outcome, tracer.hit


def _namespace(path: "str", module_name: "str", prelude: "Sequence[str]") -> "dict[str, Any]":
    try:
        scope = dict(vars(_reach_load(path, module_name)))
    except Exception:
        scope = {}
    for statement in prelude:
        try:
            _reach_limited(functools.partial(exec, statement, scope), REACH_CALL_S)
        except (Exception, SystemExit, _Timeout):
            pass
    return scope


def _shown(value: "object") -> "str":
    """The value as the call's source shows it: its repr (read back where the type allows)."""
    try:
        return _ADDRESS.sub("0x?", repr(value))
    except Exception:
        return _ADDRESS.sub("0x?", _stable(value))


def _calls(
    values: "Sequence[tuple[str, object]]",
) -> "list[tuple[str, str, Any, dict[str, Any], object]]":
    """(key, text, compiled call, namespace, value) of every recombined call, in order."""
    out = []  # type: list[tuple[str, str, Any, dict[str, Any], object]]
    for index, (path, module_name, prelude, callee, args, kwargs) in enumerate(REACH_SHAPES):
        namespace = None  # type: dict[str, Any] | None
        keywords = ["%s=%s" % (k, v) for k, v in kwargs]
        for position in range(len(args)):
            parts = list(args)
            parts[position] = _PLACEHOLDER
            source = "%s(%s)" % (callee, ", ".join(parts + keywords))
            try:
                code = compile(source, "<hackaudit reach>", "eval")
            except SyntaxError:
                continue
            if namespace is None:
                namespace = _namespace(path, module_name, prelude)
            for text, value in values:
                if len(out) >= REACH_MAX_CALLS:
                    return out
                shown = list(args)
                shown[position] = _shown(value)
                call = "%s(%s)" % (callee, ", ".join(shown + keywords))
                digest = "%d|%d|%s" % (index, position, text)
                hexed = hashlib.sha256(digest.encode("utf-8", "replace")).hexdigest()[:10]
                key = "s%dk%s" % (index, hexed)
                out.append((key, call, code, namespace, value))
    return out


def _reach_safe(text: "str", limit: "int") -> "str":
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    text = re.sub(r"[\x00-\x1f\x7f]", " ", text)
    text = text.replace(" ... ", " .. ").replace("=>>", "=>").replace("<<=", "<=")
    return text[:limit]


def _reach_records() -> "list[tuple[str, str, str, str]]":
    """(key, call, tag, reached) of every recombined call, each evaluated twice."""
    out = []  # type: list[tuple[str, str, str, str]]
    deadline = time.time() + REACH_TOTAL_S
    seen = set()  # type: set[str]
    for key, call, code, namespace, value in _calls(_keep_values()):
        if time.time() > deadline or key in seen:
            continue
        seen.add(key)
        first, hit = _evaluate(code, namespace, value)
        second, _ = _evaluate(code, namespace, value)
        if "timeout" in (first, second):
            tag = "timeout"
        elif first != second:
            tag = "unstable"
        else:
            tag = hashlib.sha256(first.encode("utf-8", "replace")).hexdigest()[:12]
        reached = "".join("h%d" % i for i in sorted(hit)) or "n"
        out.append((key, call + " =>> " + _reach_safe(first, _HEAD_CHARS), tag, reached))
    return out


def _reach_names() -> "None":
    try:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
    except (ValueError, AttributeError):
        previous = None
    try:
        records = _reach_records()
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if previous is not None:
                signal.signal(signal.SIGALRM, previous)
        except (ValueError, AttributeError):
            pass
    for key, text, tag, reached in records:
        call, _, head = text.partition(" =>> ")
        name = "test_reach_%s_%s_%s =>> %s =>> %s <<=" % (
            key,
            tag,
            reached,
            _reach_safe(call, _EXPR_CHARS),
            head,
        )
        setattr(HackauditProbe, name, _passes)
