"""The replay part of the probe: the graded tests re-run with their asserts turned into records.

A wrong patch the tests accept usually differs from gold on what the tests *look at* — the printed
form of an object the test builds, the same call one step beside the test's literal, an item a
generator yields — rather than on the function gold changes. So the probe re-runs each graded test
function inside the task's repository, in its own module's namespace (imports, module-level names,
the test's own preceding statements), with every check turned into an observation:

* `assert a == b` (any comparison): each operand that is not a literal; `assert expr`: `expr`;
* `self.assertEqual(a, b)` and the other `assert*` helpers: their first two arguments;
* `raises(Exc, lambda: ...)`, `raises(Exc, f, *args)` (sympy, pytest, `assertRaises`): the call;
* `with raises(...)` / `with pytest.raises(...)` / `with self.assertRaises(...)`: the body;
* a call statement to a helper that checks inside (`self._runtest(args, code=0)`, a method of the
  test case, or a function named `check...`, `run...`, `verify...`): the call itself, with a
  longer time limit, and an `AssertionError` out of it recorded as `check fails` (the helper's
  own check said no: the call ran and gave another result than the one checked for, so on a
  variant that is a result to compare, not an input outside what the code handles); other bare
  calls (`os.chdir`, `sys.path.append`) change state and are left as they are, and the working
  directory is restored after each test;

and, for each observed operand, the calls nested in it (the objects the test builds, observed on
their own: their `repr`, `str` and the printers the test module imports), and the operand with
one of its literals — an argument of a call, an item of a list, tuple or set passed to one,
signs looked through, or else a number in arithmetic passed to one (`f(4 + I)` as `f(5 + I)`) —
replaced by a value beside it, written `expr  [literal old -> new]`
(`probe_inputs.variants`, computed by the attacker and given as `VARIANTS`), and with an
operand of an arithmetic operation that is a call
replaced by one of that call's own name arguments (`f(P(a, b) * P(c, d))` as `f(a * P(c, d))`:
the operation on operands of another type the test itself uses) or, when the fix handles powers,
by a power of it (`f(a**2 * P(c, d))`), or the operation's operands
swapped (`f(P(c, d) * P(a, b))`). A statement that raises ends
that test's replay with a record of where and what.

A test runs under its own decorators (pylint's `@set_config(notes=[...])`, Django's
`@override_settings(...)`), as pytest runs it. When gold's changed code sits under a condition on
an option (`if self.config.notes_rgx:`), a test whose decorator call passes keywords runs again
with that option added, set true and set to a short string (`@set_config(notes=[...],
notes_rgx=True)`, `notes_rgx='x'`), written `name [decorator +option=True]`: the branch the
tests never enter is where a partial fix hides. A test that binds a list display to a name in
its own body (`hooks = [f, g]`) runs again with that display a tuple, written
`name [hooks as a tuple]`: a fix that takes both sequence types and a stand-in that takes only
lists part there. A parametrized test whose first argument is a line of Python code
(`("Tuple[int, int]", ...)`) runs again for its rows with one tuple, list or dict display in that
code emptied or cut to its first item, written `name [source 'Tuple[int, int]' -> 'Tuple[()]']`:
code that reads code is most often wrong on the empty and one-item cases. A test that writes
one value into a block of rows (`df.iloc[5:10] = np.nan`, `a[2:4] = 0`) runs again with the value
written into one column of them only (`df.iloc[5:10, 1] = np.nan`; first, second and last
column), written `name [df.iloc[5:10] written in column 1 only]`: code that must look at every
column (drop a row when any of its fields is missing) and a stand-in that looks at the one the
test happens to check agree when whole rows are blank, and part here. A test that builds a value
from number literals (`A = Matrix([[1, 2], [3, 4]])`) runs again with the value's first number one
more, written `name [A built with 1 -> 2]`: code that answers only the one object the test builds
and gold part on the object beside it. A replayed test that ran through records so.

A test whose arguments are pytest fixtures (`def test_x(self, df)`) gets them the way pytest
would give them, for the fixtures the test's class, its module or a `conftest.py` beside or
above it defines, their own fixtures resolved alike (a generator fixture is advanced to its
value and closed after the test); a test that needs any other fixture (`request`, `tmp_path`)
is not replayed.

Each observation is time-limited and size-capped; a case that fails never stops the module. The
whole replay runs twice per process (observations that differ are *unstable*).

The code is parsed with `ast` at run time from the test file on disk (the test patch is applied),
so it sees exactly what the tests see. Observations are reported as test names:
`test_replay_<key>_<digest> =>> <expression> =>> <outcome head> <<=` (`replay` reads them back).

This module's text is the second part of the probe file (`replay_source.render_replay`): it
follows the probe program's (`probe_program`) in the same module, uses its names, and is followed
by this task's data (`REPLAY`, `VARIANTS`, `REPLAY_TOTAL_S`, `MAX_OBSERVATIONS`, `POWERS`,
`FLAGS`) and the call `_replay_names()`. It is written, as the probe program is, for any Python 3
the task's image may have (the library calls it makes are 3.6's): no f-strings, no variable
annotations, no `from __future__` import, nothing but the standard library.
"""

# --- replay of the graded tests -------------------------------------------------------------

import ast as _ast
import hashlib
import importlib
import importlib.util as _ilu
import os as _os
import re
import signal
import time
import unittest

TYPE_CHECKING = False  # a name mypy reads as true; `typing.TYPE_CHECKING` is newer than 3.5.0
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TypeVar

    Node = TypeVar("Node")

if __name__ == "hackaudit.attacker.domain.confirm.programs.replay_program":
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

# This task's data: the probe file assigns each after this text, then calls `_replay_names()`.
# (test file, its module, the test functions to replay)
REPLAY = []  # type: list[tuple[str, str, list[str]]]
# the values beside each literal the tests use, keyed by the literal's repr
VARIANTS = {}  # type: dict[str, list[Any]]
REPLAY_TOTAL_S = 150.0
MAX_OBSERVATIONS = 600
# Operands replaced by a power of the name (`f(P(a, b) * b**2)`) too: only when the fix itself
# handles powers (gold's added lines name `Pow` or use `**`).
POWERS = False
# Options gold's changed lines test in a condition; each is added (true, then a short string) to a
# test's first decorator call that passes keywords, for one more replay of that test each.
FLAGS = []  # type: list[str]

REPLAY_FUNCTION_S = 20.0
OBSERVATION_S = 2.0
CHECKER_S = 8.0
MAX_OCCURRENCES = 12
MAX_SUBCALLS = 3
MAX_VARIANT_CONSTANTS = 2
MAX_SHAPE_VARIANTS = 4
MAX_POWERS = 2
# True for a switch; a short string for an option that takes text and is checked as such (a
# pattern: pylint refuses True for a string option)
FLAG_VALUES = (True, "x")
MAX_FLAG_VARIANTS = 4
MAX_SWAPS = 2
MAX_BODY_VARIANTS = 2
# A block of rows written with one value, written again into one of these columns only.
NARROWED_COLUMNS = (0, 1, -1)
MAX_FIXTURE_DEPTH = 8
# Parametrize rows whose first argument is a string of Python code, replayed again with one
# tuple, list or dict display in that code emptied or cut to its first item.
MAX_ROW_VARIANTS = 8
MAX_CODE_CHARS = 200
MAX_ROWS_SCANNED = 100
MAX_OUTCOME_CHARS = 20000
EXPR_CHARS = 110
SHORT_CHARS = 60
HEAD_CHARS = 300
PRINTERS = ("sstr", "srepr", "latex", "pretty")
_NOT_PRINTED = (*PRINTERS, "str", "repr", "len", "list", "tuple", "set", "sorted", "bool")
_ASSERT_METHODS_ONE = ("assertTrue", "assertFalse", "assertIsNone", "assertIsNotNone")
_RAISES = ("raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp")
_CHECKER_PREFIXES = ("check", "run", "verify", "expect", "do_test", "test_", "compare")
_OBS = "_hackaudit_observe"
_REC = "_hackaudit_record"


def _const_value(node: "Any") -> "tuple[bool, Any]":
    name = type(node).__name__
    if name == "Constant":
        return True, node.value
    if name == "Num":
        return True, node.n
    if name in ("Str", "Bytes"):
        return True, node.s
    if name == "NameConstant":
        return True, node.value
    return False, None


def _is_literal(node: "Any") -> "bool":
    try:
        _ast.literal_eval(node)
    except Exception:
        return False
    return True


def _text(source_lines: "Sequence[str]", node: "Any") -> "str":
    line = getattr(node, "lineno", 0)
    col = getattr(node, "col_offset", 0)
    end_line = getattr(node, "end_lineno", None)
    end_col = getattr(node, "end_col_offset", None)
    if not line or line > len(source_lines):
        return "?"
    if end_line == line and end_col is not None:
        return source_lines[line - 1][col:end_col]
    if end_line is not None and end_col is not None and end_line <= len(source_lines):
        parts = [source_lines[line - 1][col:]]
        parts += [s.strip() for s in source_lines[line : end_line - 1]]
        parts.append(source_lines[end_line - 1][:end_col].strip())
        return " ".join(parts)
    return source_lines[line - 1][col:].strip()


def _bound_names(node: "Any") -> "set[str]":
    """Names a comprehension or lambda inside `node` binds (a call using one cannot run alone)."""
    names = set()
    for sub in _ast.walk(node):
        if isinstance(sub, _ast.comprehension):
            for target in _ast.walk(sub.target):
                if isinstance(target, _ast.Name):
                    names.add(target.id)
        elif isinstance(sub, _ast.Lambda):
            for arg in sub.args.args:
                names.add(arg.arg)
    return names


def _subcalls(node: "Any") -> "list[Any]":
    bound = _bound_names(node)
    out = []
    for sub in _ast.walk(node):
        if sub is node or not isinstance(sub, _ast.Call):
            continue
        used = {n.id for n in _ast.walk(sub) if isinstance(n, _ast.Name)}
        if used & bound or any(isinstance(n, (_ast.Lambda, _ast.Yield)) for n in _ast.walk(sub)):
            continue
        out.append(sub)
        if len(out) >= MAX_SUBCALLS:
            break
    return out


class _Swap(_ast.NodeTransformer):
    def __init__(self, target: "Any", value: "Any") -> "None":
        self.target = target
        self.value = value

    def generic_visit(self, node: "Any") -> "Any":
        if node is self.target:
            return _ast.copy_location(self.value, node)
        return _ast.NodeTransformer.generic_visit(self, node)


def _deep(node: "Node") -> "Node":
    import copy as _copy_module

    return _copy_module.deepcopy(node)


def _literal_parts(arg: "Any") -> "list[Any]":
    """A call argument's literals: the argument, or the items of a list / tuple / set display,
    each looked at through a sign (`-1` varies as `1` does, so `f([-1, 0])` gives `f([-2, 0])`)."""
    parts = list(arg.elts) if isinstance(arg, (_ast.List, _ast.Tuple, _ast.Set)) else [arg]
    out = []
    for part in parts:
        if isinstance(part, _ast.UnaryOp) and isinstance(part.op, (_ast.USub, _ast.UAdd)):
            part = part.operand
        out.append(part)
    return out


def _arithmetic_parts(arg: "Any") -> "list[Any]":
    """The literals among the operands of arithmetic passed as an argument (`f(4 + I)` gives
    `4`; `f((3 - g(2)) / 2)` gives `3` and `2`), calls inside left to their own arguments."""
    if not isinstance(arg, (_ast.BinOp, _ast.UnaryOp)):
        return []
    out = []  # type: list[Any]
    stack = [arg]  # type: list[Any]
    while stack:
        node = stack.pop(0)
        if isinstance(node, _ast.BinOp):
            stack[:0] = [node.left, node.right]
        elif isinstance(node, _ast.UnaryOp):
            stack.insert(0, node.operand)
        elif _const_value(node)[0]:
            out.append(node)
    return out


def _variants(node: "Any") -> "list[tuple[Any, str]]":
    """Copies of `node` with one literal inside a call (or inside a list, tuple or set passed to
    one) replaced by a value beside it; then, with a literal in arithmetic passed to a call
    (`f(4 + I)` as `f(5 + I)`): a test that checks a call on one built value is passed by code
    that special-cases that value, and the same expression one step beside it parts them."""
    out = []
    constants = []
    inside = []
    for sub in _ast.walk(node):
        if isinstance(sub, _ast.Call):
            for arg in list(sub.args) + [k.value for k in sub.keywords]:
                for part in _literal_parts(arg):
                    ok, value = _const_value(part)
                    if ok and repr(value) in VARIANTS and part not in constants:
                        constants.append(part)
                inside += _arithmetic_parts(arg)
    chosen = {repr(_const_value(c)[1]) for c in constants}
    for part in inside:
        key = repr(_const_value(part)[1])
        if key in VARIANTS and key not in chosen:
            chosen.add(key)
            constants.append(part)
    for target in constants[:MAX_VARIANT_CONSTANTS]:
        ok, value = _const_value(target)
        for new in VARIANTS[repr(value)]:
            index = list(_ast.walk(node)).index(target)
            copied = _deep(node)
            copied_target = list(_ast.walk(copied))[index]
            replacement = _ast.parse(repr(new), mode="eval").body
            swapped = _Swap(copied_target, replacement).visit(copied)
            out.append((swapped, "%r -> %r" % (value, new)))
    return out


def _shape_variants(node: "Any") -> "list[tuple[Any, str]]":
    """Copies of `node` with one operand of a binary operation — an operand that is itself a
    call with plain names among its arguments — replaced by one of those names (its first or its
    last): the same operation on the test's own simpler operands (`f(P(a, b) * P(c, d))` gives
    `f(a * P(c, d))`, `f(P(a, b) * c)`, ...); and copies with the operands of one operation
    swapped (`f(P(c, d) * P(a, b))`: the same operands met in the other order, which reaches
    the code that handles the second operand with what the test put first)."""
    out = []
    sites = []
    for op in _ast.walk(node):
        if not isinstance(op, _ast.BinOp):
            continue
        for operand in (op.left, op.right):
            if isinstance(operand, _ast.Call):
                names = [a.id for a in operand.args if isinstance(a, _ast.Name)]
                for name in dict.fromkeys(names[:1] + names[-1:]):
                    sites.append((operand, name))
    for operand, name in sites[:MAX_SHAPE_VARIANTS]:
        index = list(_ast.walk(node)).index(operand)
        copied = _deep(node)
        copied_target = list(_ast.walk(copied))[index]
        replacement = _ast.Name(id=name, ctx=_ast.Load())  # type: Any
        out.append((_Swap(copied_target, replacement).visit(copied), name))
    powered = []  # type: list[tuple[Any, str]]
    for operand, name in sites:
        if POWERS and len(powered) < MAX_POWERS and all(o is not operand for o, _ in powered):
            powered.append((operand, name))  # one power per operand: its first name
    for operand, name in powered:
        index = list(_ast.walk(node)).index(operand)
        copied = _deep(node)
        copied_target = list(_ast.walk(copied))[index]
        replacement = _ast.parse("%s**2" % name, mode="eval").body
        out.append((_Swap(copied_target, replacement).visit(copied), name + "**2"))
    swapped = 0
    for op in _ast.walk(node):
        if swapped >= MAX_SWAPS or not isinstance(op, _ast.BinOp):
            continue
        if _is_literal(op.left) or _is_literal(op.right):
            continue
        index = list(_ast.walk(node)).index(op)
        copied = _deep(node)
        copied_op = list(_ast.walk(copied))[index]  # type: Any
        copied_op.left, copied_op.right = copied_op.right, copied_op.left
        out.append((copied, "operands swapped"))
        swapped += 1
    return out


def _short(text: "str") -> "str":
    """An expression cut so that the note after it (which literal became what) stays whole."""
    return text if len(text) <= SHORT_CHARS else text[: SHORT_CHARS - 3] + "..."


def _is_checker(func: "Any", name: "str") -> "bool":
    """A call statement that checks for the test: a helper method of the test (`self._run...`,
    not one of unittest's own) or a function named like a check. Other bare calls (`os.chdir`,
    `sys.path.append`) change state, and are left as they are."""
    if isinstance(func, _ast.Attribute):
        owner = func.value
        return (
            isinstance(owner, _ast.Name)
            and owner.id == "self"
            and not name.startswith(("assert", "fail", "skip", "add", "sub", "set", "tear"))
        )
    return name.lstrip("_").startswith(_CHECKER_PREFIXES)


class _Turn(_ast.NodeTransformer):
    """Turns a test function's checks into observations (see the module's docstring)."""

    def __init__(self, source_lines: "Sequence[str]", printers: "Sequence[str]") -> "None":
        self.lines = source_lines
        self.printers = printers
        self.count = 0

    def _key(self) -> "int":
        self.count += 1
        return self.count

    def _observe(self, node: "Any", text: "str", key: "str", kind: "str") -> "Any":
        source = "%s(%r, lambda: 0, %r, %r)" % (_OBS, key, text, kind)
        call = _ast.parse(source, mode="eval").body  # type: Any
        call.args[1].body = node
        return _ast.Expr(value=call)

    def _printed(self, node: "Any", text: "str", key: "str", out: "list[Any]") -> "None":
        """`node` through each printer the test module imports (not a printer call itself)."""
        func = node.func if isinstance(node, _ast.Call) else None
        if func is None or getattr(func, "id", getattr(func, "attr", "")) in _NOT_PRINTED:
            return
        for name in self.printers:
            printed = _ast.Call(
                func=_ast.Name(id=name, ctx=_ast.Load()), args=[_deep(node)], keywords=[]
            )
            out.append(self._observe(printed, "%s(%s)" % (name, text), key + "." + name, "value"))

    def _operand(self, node: "Any", out: "list[Any]", strict_kind: "str" = "value") -> "None":
        if _is_literal(node):
            return
        base = "o%d" % self._key()
        text = _text(self.lines, node)
        variants = _variants(node)
        subcalls = [_deep(sub) for sub in _subcalls(node)]
        printed = []  # type: list[Any]
        self._printed(node, text, base + ".v0", printed)
        out.append(self._observe(node, text, base + ".v0", strict_kind))
        out.extend(printed)
        for j, sub in enumerate(subcalls):
            sub_text = _text(self.lines, sub)
            out.append(self._observe(sub, sub_text, base + ".s%d" % j, "value"))
            self._printed(sub, sub_text, base + ".s%d" % j, out)
        varied = "checker variant" if strict_kind == "checker" else "variant"
        for j, (variant, shown) in enumerate(variants):
            out.append(
                self._observe(
                    variant, "%s  [literal %s]" % (_short(text), shown), base + ".w%d" % j, varied
                )
            )
        for j, (variant, name) in enumerate(_shape_variants(node)):
            shown = name if name == "operands swapped" else "operand -> " + name
            out.append(
                self._observe(variant, "%s  [%s]" % (text, shown), base + ".x%d" % j, "variant")
            )

    def _raises_call(self, call: "Any") -> "tuple[Any | None, str]":
        """`raises(Exc, lambda: e)` / `raises(Exc, f, *a)` as the expression that should raise."""
        if len(call.args) < 2:
            return None, ""
        target = call.args[1]
        if isinstance(target, _ast.Lambda) and not target.args.args:
            return target.body, _text(self.lines, target.body)
        if isinstance(target, (_ast.Name, _ast.Attribute)):
            args = list(call.args[2:])
            body = _ast.Call(func=target, args=args, keywords=list(call.keywords))
            shown = [_text(self.lines, a) for a in args]
            shown += ["%s=%s" % (k.arg, _text(self.lines, k.value)) for k in call.keywords]
            return body, "%s(%s)" % (_text(self.lines, target), ", ".join(shown))
        return None, ""

    def visit_FunctionDef(self, node: "Any") -> "Any":
        return node

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Assert(self, node: "Any") -> "list[Any]":
        out = []  # type: list[Any]
        test = node.test
        if isinstance(test, _ast.Compare):
            for operand in [test.left, *test.comparators]:
                self._operand(operand, out)
        elif isinstance(test, _ast.UnaryOp) and isinstance(test.op, _ast.Not):
            self._operand(test.operand, out)
        else:
            self._operand(test, out)
        return out or [_ast.Pass()]

    def visit_Expr(self, node: "Any") -> "Any | list[Any]":
        call = node.value
        if not isinstance(call, _ast.Call):
            return node
        func = call.func
        name = func.attr if isinstance(func, _ast.Attribute) else getattr(func, "id", "")
        out = []
        if name in _RAISES:
            body, text = self._raises_call(call)
            if body is None:
                return node
            out.append(self._observe(body, text, "r%d.v0" % self._key(), "value"))
            return out
        if (name.startswith("assert") and isinstance(func, _ast.Attribute)) or name.startswith(
            "assert_"
        ):
            count = 1 if name in _ASSERT_METHODS_ONE else 2
            for arg in call.args[:count]:
                self._operand(arg, out)
            return out or [_ast.Pass()]
        if _is_checker(func, name) and _variants(call):
            # A helper that checks inside (`self._runtest(args, code=0)`): observed like an
            # assert's operand, so the values beside its literals are tried too.
            self._operand(call, out, "checker")
            return out
        return node

    def visit_With(self, node: "Any") -> "Any":
        for item in node.items:
            ctx = item.context_expr
            if isinstance(ctx, _ast.Call):
                func = ctx.func
                name = func.attr if isinstance(func, _ast.Attribute) else getattr(func, "id", "")
                if name in _RAISES:
                    return self._raises_block(node)
        return self.generic_visit(node)

    def _raises_block(self, node: "Any") -> "Any":
        key = "r%d.v0" % self._key()
        first, last = node.body[0], node.body[-1]
        text = _text(self.lines, first) + (" ..." if last is not first else "")
        body = [self.visit(stmt) for stmt in node.body]
        flat = []
        for stmt in body:
            flat.extend(stmt if isinstance(stmt, list) else [stmt])
        template = _ast.parse(
            "try:\n    pass\nexcept Exception as _hackaudit_exc:\n"
            "    %s(%r, 'raises ' + type(_hackaudit_exc).__name__, %r)\n"
            "else:\n    %s(%r, 'returns', %r)\n" % (_REC, key, text, _REC, key, text)
        ).body[0]  # type: Any
        template.body = flat or [_ast.Pass()]
        return _ast.copy_location(template, node)


class _State(object):
    def __init__(self) -> "None":
        self.records = []  # type: list[tuple[str, str, str]]
        self.occurrences = {}  # type: dict[str, int]
        self.test = ""
        self.note = ""


_STATE = _State()


def _limited(text: "str") -> "str":
    if len(text) > MAX_OUTCOME_CHARS:
        return text[:MAX_OUTCOME_CHARS] + "...[%d chars]" % len(text)
    return text


def _hackaudit_record(key: "str", outcome: "str", text: "str") -> "None":
    state = _STATE
    full = state.test + ":" + key
    seen = state.occurrences.get(full, 0)
    state.occurrences[full] = seen + 1
    if seen >= MAX_OCCURRENCES or len(state.records) >= MAX_OBSERVATIONS * 4:
        return
    state.records.append((full + ".n%d" % seen, text + state.note, _limited(outcome)))


def _hackaudit_observe(
    key: "str", thunk: "Callable[[], object]", text: "str", kind: "str"
) -> "None":
    left = 0.0
    started = time.time()
    try:
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        own = CHECKER_S if kind.startswith("checker") else OBSERVATION_S
        limit = min(own, left) if left else own
        signal.setitimer(signal.ITIMER_REAL, limit)
    except (ValueError, AttributeError):
        left = 0.0
    try:
        outcome = "returns " + _ADDRESS.sub("0x?", _stable(thunk()))
    except _Timeout:
        outcome = "timeout"
    except AssertionError:
        outcome = "check fails" if kind.startswith("checker") else "raises AssertionError"
    except (Exception, SystemExit) as exc:
        outcome = "raises " + type(exc).__name__
    finally:
        try:
            spent = time.time() - started
            signal.setitimer(signal.ITIMER_REAL, max(left - spent, 0.001) if left else 0)
        except (ValueError, AttributeError):
            pass
    varied = kind.endswith("variant")
    _hackaudit_record(key, ("variant " if varied else "") + outcome, text)


def _module_of(path: "str", module_name: "str") -> "Any":
    try:
        return importlib.import_module(module_name)
    except Exception:
        pass
    name = "hackaudit_replayed_" + str(abs(hash(path)))
    spec = _ilu.spec_from_file_location(name, path)  # type: Any
    module = _ilu.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _targets(tree: "Any", wanted: "list[str]") -> "list[tuple[str | None, Any]]":
    """(class name or None, function node) of each wanted test function, in `wanted`'s order."""
    out = []  # type: list[tuple[str | None, Any]]
    for node in tree.body:
        if isinstance(node, _ast.FunctionDef) and node.name in wanted:
            out.append((None, node))
        elif isinstance(node, _ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, _ast.FunctionDef) and sub.name in wanted:
                    out.append((node.name, sub))
    out.sort(key=lambda found: wanted.index(found[1].name))
    return out


def _parametrize_marks(function: "object") -> "list[Any]":
    """The parametrize marks of a test function."""
    return [
        mark
        for mark in getattr(function, "pytestmark", None) or []
        if getattr(mark, "name", "") == "parametrize" and len(mark.args) >= 2
    ]


def _mark_rows(mark: "Any", limit: "int") -> "list[dict[str, Any]]":
    """The first `limit` rows of one parametrize mark, each as {argument name: value}."""
    argnames = mark.args[0]
    if isinstance(argnames, str):
        argnames = [n.strip() for n in argnames.split(",") if n.strip()]
    rows = []
    for value in list(mark.args[1])[:limit]:
        value = getattr(value, "values", value)
        row_values = [value] if len(argnames) == 1 else list(value)
        if len(row_values) == len(argnames):
            rows.append(dict(zip(argnames, row_values)))
    return rows


def _param_rows(function: "object", names: "Sequence[str]") -> "list[dict[str, Any]]":
    """Rows of arguments for a test function: none needed, or its parametrize marks' rows."""
    if not names:
        return [{}]
    rows = [{}]  # type: list[dict[str, Any]]
    for mark in _parametrize_marks(function):
        new = []
        for values in _mark_rows(mark, 5):
            for row in rows:
                merged = dict(row)
                merged.update(values)
                new.append(merged)
        rows = new or rows
    return rows


class _NoFixture(Exception):
    """A test argument that neither a parametrize row nor a fixture this replay resolves gives."""


def _fixture_function(value: "object") -> "Any":
    """The function a pytest fixture wraps, or None when `value` is no fixture."""
    wrapped = getattr(value, "__pytest_wrapped__", None)
    if wrapped is not None:
        return getattr(wrapped, "obj", None)
    if type(value).__name__ == "FixtureFunctionDefinition":
        getter = getattr(value, "_get_wrapped_function", None)
        return getter() if callable(getter) else getattr(value, "__wrapped__", None)
    return None


def _conftests(path: "str") -> "list[Any]":
    """The `conftest.py` modules beside the test file and above it, nearest first: the ones the
    runner loaded, else loaded here under a name of their own."""
    out = []
    folder = _os.path.dirname(_os.path.abspath(path))
    top = _os.path.abspath(_os.getcwd())
    while True:
        candidate = _os.path.join(folder, "conftest.py")
        if _os.path.isfile(candidate):
            module = _loaded(candidate)
            if module is not None:
                out.append(module)
        if folder == top or _os.path.dirname(folder) == folder:
            return out
        folder = _os.path.dirname(folder)


def _loaded(path: "str") -> "Any":
    import sys

    for module in list(sys.modules.values()):
        if _os.path.abspath(getattr(module, "__file__", None) or "") == path:
            return module
    name = "_hackaudit_conftest_%s" % hashlib.sha256(path.encode()).hexdigest()[:12]
    try:
        spec = _ilu.spec_from_file_location(name, path)
        module = _ilu.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception:
        return None
    sys.modules[name] = module
    return module


def _fixture_value(
    name: "str", places: "Sequence[tuple[Any, Any]]", made: "dict[str, Any]", closers: "list[Any]"
) -> "Any":
    """The value of fixture `name`, found in `places` ((owner, instance or None), nearest
    first), its own arguments resolved alike; `made` holds the values this test has already."""
    if name in made:
        return made[name]
    if len(closers) > MAX_FIXTURE_DEPTH * 4 or len(made) > MAX_FIXTURE_DEPTH * 4:
        raise _NoFixture(name)
    for owner, instance in places:
        function = _fixture_function(vars(owner).get(name) if hasattr(owner, "__dict__") else None)
        if function is None:
            continue
        code = function.__code__
        params = list(code.co_varnames[: code.co_argcount])
        args = []
        if instance is not None and params and params[0] == "self":
            args.append(instance)
            params = params[1:]
        args += [_fixture_value(p, places, made, closers) for p in params]
        value = function(*args)
        if hasattr(value, "__next__") and hasattr(value, "close"):
            closers.append(value)
            value = next(value)
        made[name] = value
        return value
    raise _NoFixture(name)


def _with_fixtures(
    row: "dict[str, Any]",
    names: "Sequence[str]",
    module: "Any",
    path: "str",
    class_name: "str | None",
    instance: "Any",
    closers: "list[Any]",
) -> "dict[str, Any]":
    """`row` with every argument it lacks given by a fixture (`_NoFixture`: one is not found)."""
    missing = [n for n in names if n not in row]
    if not missing:
        return row
    places = []  # type: list[tuple[Any, Any]]
    if class_name is not None:
        for klass in type(instance).__mro__:
            places.append((klass, instance))
    places.append((module, None))
    places += [(conftest, None) for conftest in _conftests(path)]
    made = dict(row)
    for name in missing:
        _fixture_value(name, places, made, closers)
    return {n: made[n] for n in [*row, *missing]}


def _code_variants(text: "object") -> "tuple[list[str], list[str]]":
    """`text`, when it is one line of Python code, with one tuple, list or dict display in it
    emptied, or cut to its first item: `Tuple[int, int]` as `Tuple[()]` and `Tuple[(int,)]`.
    Code that reads code (a parser, an unparser, a checker) is most often wrong on the empty
    and the one-item cases the tests leave out. Empty displays come first."""
    if not isinstance(text, str) or "\n" in text or len(text) > MAX_CODE_CHARS:
        return [], []
    try:
        tree = _ast.parse(text)
    except Exception:
        return [], []
    emptied, first = [], []
    for node in _ast.walk(tree):
        end = getattr(node, "end_col_offset", None)  # Python 3.8 and later
        if end is None or not isinstance(node, (_ast.Tuple, _ast.List, _ast.Dict)):
            continue
        items = node.keys if isinstance(node, _ast.Dict) else node.elts  # type: list[Any]
        if not items or any(k is None for k in items):
            continue
        start = node.col_offset
        empty = {"Tuple": "()", "List": "[]", "Dict": "{}"}[type(node).__name__]
        emptied.append(text[:start] + empty + text[end:])
        if len(items) > 1:
            head = text[items[0].col_offset : getattr(items[0], "end_col_offset", 0)]
            if isinstance(node, _ast.Dict):
                value = node.values[0]
                head = "{%s: %s}" % (head, text[value.col_offset : value.end_col_offset])
            elif isinstance(node, _ast.Tuple):
                head = "(%s,)" % head
            else:
                head = "[%s]" % head
            first.append(text[:start] + head + text[end:])
    ok = []
    for group in (emptied, first):
        kept = []
        for new in group:
            try:
                _ast.parse(new)
            except Exception:
                continue
            if new != text and new not in kept:
                kept.append(new)
        ok.append(kept)
    return ok[0], ok[1]


def _row_variants(function: "object", names: "Sequence[str]") -> "list[tuple[str, dict[str, Any]]]":
    """(note, row): parametrize rows of `function` with their first argument's code varied
    (`_code_variants`), each row's empty displays before any row's one-item ones."""
    if not names:
        return []
    marks = _parametrize_marks(function)[:1]  # one mark: rows of several would multiply
    rows = [row for mark in marks for row in _mark_rows(mark, MAX_ROWS_SCANNED)]
    rows = [row for row in rows if set(names) <= set(row)]
    if not rows:
        return []
    name = next(n for n in names if n in rows[0])
    split = [(row, _code_variants(row[name])) for row in rows]
    out = []
    for which in (0, 1):
        for row, groups in split:
            for new in groups[which]:
                changed = dict(row)
                changed[name] = new
                out.append((" [%s %r -> %r]" % (name, row[name], new), changed))
    return out[:MAX_ROW_VARIANTS]


def _compiled(
    node: "Any",
    source_lines: "Sequence[str]",
    printers: "Sequence[str]",
    module: "Any",
    path: "str",
    decorators: "Sequence[Any]" = (),
) -> "Any":
    turned = _deep(node)
    turn = _Turn(source_lines, printers)
    body = []
    for stmt in turned.body:
        done = turn.visit(stmt)
        body.extend(done if isinstance(done, list) else [done])
    turned.body = body or [_ast.Pass()]
    turned.name = "_hackaudit_replayed"
    for kept in (list(decorators), []):  # a decorator that cannot be applied here is left out
        turned.decorator_list = kept
        tree = _ast.Module(body=[turned], type_ignores=[])
        tree = _ast.fix_missing_locations(tree)
        namespace = dict(vars(module))
        namespace[_OBS] = _hackaudit_observe
        namespace[_REC] = _hackaudit_record
        try:
            # the test function rewritten from the task's own test file, in its module's names
            exec(compile(tree, path, "exec"), namespace)  # noqa: S102
        except Exception:
            if not kept:
                raise
            continue
        return namespace["_hackaudit_replayed"]
    raise RuntimeError("unreachable")


def _decorator_sets(node: "Any") -> "list[tuple[str, list[Any]]]":
    """(note, decorators): the test's own, then with each flag added (as each of FLAG_VALUES)
    to its first decorator call that passes keywords and does not set that flag already."""
    own = list(node.decorator_list)
    out = [("", own)]
    for i, deco in enumerate(own):
        if not (isinstance(deco, _ast.Call) and deco.keywords):
            continue
        named = [k.arg for k in deco.keywords]
        head = _ast.dump(deco.func)
        label = getattr(deco.func, "id", None) or getattr(deco.func, "attr", None) or "decorator"
        if "mark" in head:
            continue  # a pytest mark only labels the test
        for flag in (f for f in FLAGS if f not in named):
            for value in FLAG_VALUES[: MAX_FLAG_VARIANTS + 1 - len(out)]:
                changed = _deep(deco)
                changed.keywords = [
                    *changed.keywords,
                    _ast.keyword(arg=flag, value=_ast.Constant(value=value)),
                ]
                note = " [%s +%s=%r]" % (label, flag, value)
                out.append((note, [*own[:i], changed, *own[i + 1 :]]))
        break
    return out


def _body_variants(node: "Any") -> "list[tuple[str, Any]]":
    """(note, copy of the test function): a list display the test binds to a name in its own body
    (`hooks = [f, g]`) made a tuple, one binding per copy: the same items in the other sequence
    type, an input a fix that handles both (`isinstance(x, (list, tuple))`) must take alike."""
    out = []  # type: list[tuple[str, Any]]
    for i, stmt in enumerate(node.body):
        if len(out) >= MAX_BODY_VARIANTS:
            break
        if not (isinstance(stmt, _ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, _ast.Name) and isinstance(value, _ast.List) and value.elts):
            continue
        changed = _deep(node)
        display = changed.body[i].value
        changed.body[i].value = _ast.copy_location(
            _ast.Tuple(elts=display.elts, ctx=_ast.Load()), display
        )
        out.append((" [%s as a tuple]" % target.id, changed))
    return out + _narrowed_writes(node) + _built_beside(node)


def _built_beside(node: "Any") -> "list[tuple[str, Any]]":
    """(note, copy of the test function): the test's first value built by a call from number
    literals (`A = Matrix([[1, 2], [3, 4]])`) built with its first number one more: code
    that answers the one object the test builds, and gold, part on the object beside it."""
    for i, stmt in enumerate(node.body):
        if not (isinstance(stmt, _ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, _ast.Name) and isinstance(value, _ast.Call)):
            continue
        numbers = [
            sub
            for sub in _ast.walk(value)
            if _const_value(sub)[0]
            and isinstance(_const_value(sub)[1], (int, float))
            and not isinstance(_const_value(sub)[1], bool)
        ]
        if not numbers:
            continue
        changed = _deep(node)
        index = list(_ast.walk(value)).index(numbers[0])
        old = _const_value(numbers[0])[1]
        copied = list(_ast.walk(changed.body[i].value))[index]
        _Swap(copied, _ast.parse(repr(old + 1), mode="eval").body).visit(changed.body[i])
        return [(" [%s built with %r -> %r]" % (target.id, old, old + 1), changed)]
    return []


def _narrowed_writes(node: "Any") -> "list[tuple[str, Any]]":
    """(note, copy of the test function): the test's first statement that writes one value into a
    slice (`df.iloc[5:10] = v`), with the value written into one column of the slice only."""
    for i, stmt in enumerate(node.body):
        if not (isinstance(stmt, _ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        if not (isinstance(target, _ast.Subscript) and isinstance(target.slice, _ast.Slice)):
            continue
        out = []
        for column in NARROWED_COLUMNS:
            changed = _deep(node)
            written = changed.body[i].targets[0]
            index = _ast.Constant(value=column)
            written.slice = _ast.Tuple(elts=[written.slice, index], ctx=_ast.Load())
            text = _ast.dump(target.value) if not hasattr(_ast, "unparse") else _ast.unparse(target)
            out.append((" [%s written in column %d only]" % (text[:SHORT_CHARS], column), changed))
        return out
    return []


def _instance(module: "Any", class_name: "str", method: "str") -> "Any":
    cls = getattr(module, class_name)
    if isinstance(cls, type) and issubclass(cls, unittest.TestCase):
        setup_class = getattr(cls, "setUpClass", None)
        if setup_class is not None and not getattr(cls, "_hackaudit_class_set_up", False):
            setup_class()
            cls._hackaudit_class_set_up = True  # type: ignore[attr-defined]
        instance = cls(method)
        instance.setUp()
        return instance
    instance = cls()
    for hook in ("setup_method", "setUp"):
        if hasattr(instance, hook):
            try:
                getattr(instance, hook)(getattr(instance, method, None))
            except TypeError:
                getattr(instance, hook)()
            break
    return instance


def _replay_one(
    index: "int",
    path: "str",
    module: "Any",
    source_lines: "Sequence[str]",
    class_name: "str | None",
    node: "Any",
) -> "None":
    runs = [
        (note, decorators, node, ".d%d" % d if d else "")
        for d, (note, decorators) in enumerate(_decorator_sets(node))
    ]
    runs += [
        (note, node.decorator_list, changed, ".b%d" % (b + 1))
        for b, (note, changed) in enumerate(_body_variants(node))
    ]
    for note, decorators, body, suffix in runs:
        _STATE.note = note
        try:
            _replay_with(index, path, module, source_lines, class_name, body, decorators, suffix)
        finally:
            _STATE.note = ""


def _replay_with(
    index: "int",
    path: "str",
    module: "Any",
    source_lines: "Sequence[str]",
    class_name: "str | None",
    node: "Any",
    decorators: "Sequence[Any]",
    suffix: "str",
) -> "None":
    printers = [p for p in PRINTERS if callable(vars(module).get(p))]
    replayed = _compiled(node, source_lines, printers, module, path, decorators)
    names = [a.arg for a in node.args.args]
    if class_name is not None:
        names = names[1:]
    original = getattr(module, node.name, None)
    if class_name is not None:
        original = getattr(getattr(module, class_name, None), node.name, None)
    cwd = _os.getcwd()
    runs = [("p%d" % r, "", row) for r, row in enumerate(_param_rows(original, names))]
    if not suffix:  # the test's own decorators and body: its rows' code varied too
        runs += [
            ("v%d" % v, note, row) for v, (note, row) in enumerate(_row_variants(original, names))
        ]
    base_note = _STATE.note
    for label, note, row in runs:
        owner = (class_name + ".") if class_name else ""
        _STATE.test = "f%d.%s%s.%s" % (index, owner, node.name, label) + suffix
        _STATE.note = base_note + note
        _STATE.occurrences = {}
        try:
            signal.setitimer(signal.ITIMER_REAL, REPLAY_FUNCTION_S)
        except (ValueError, AttributeError):
            pass
        instance = None
        closers = []  # type: list[Any]
        try:
            args = []
            if class_name is not None:
                instance = _instance(module, class_name, node.name)
                args.append(instance)
            try:
                row = _with_fixtures(row, names, module, path, class_name, instance, closers)
            except Exception:
                continue  # an argument no row or fixture here gives: the test is not replayed
            replayed(*args, **row)
            # a test that observes nothing still says it ran through (its raising elsewhere is
            # then a difference)
            _hackaudit_record("done", "runs through", node.name)
        except _Timeout:
            _hackaudit_record("end", "timeout", node.name)
        except (Exception, SystemExit) as exc:
            line = "?"
            tb = exc.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == path:
                    line = str(tb.tb_lineno)
                tb = tb.tb_next
            _hackaudit_record("end", "raises %s at line %s" % (type(exc).__name__, line), node.name)
        finally:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
            except (ValueError, AttributeError):
                pass
            for closer in reversed(closers):
                try:
                    closer.close()
                except Exception:
                    pass
            teardown = getattr(instance, "tearDown", None)
            if teardown is not None:
                try:
                    teardown()
                except Exception:
                    pass
            try:
                _os.chdir(cwd)  # a test that changes directory leaves the next one where it was
            except OSError:
                pass
    _STATE.note = base_note


def _replay_once() -> "list[tuple[str, str, str]]":
    _STATE.records = []
    deadline = time.time() + REPLAY_TOTAL_S
    for index, (path, module_name, wanted) in enumerate(REPLAY):
        if time.time() > deadline:
            break
        try:
            with open(path) as handle:
                source = handle.read()
            tree = _ast.parse(source)
            module = _module_of(path, module_name)
        except Exception as exc:
            _STATE.test = "f%d" % index
            _hackaudit_record("load", "raises " + type(exc).__name__, path)
            continue
        lines = source.split("\n")
        for class_name, node in _targets(tree, list(wanted)):
            if time.time() > deadline:
                break
            try:
                _replay_one(index, path, module, lines, class_name, node)
            except _Timeout:
                pass
            except Exception as exc:
                _STATE.test = "f%d.%s" % (index, node.name)
                _hackaudit_record("compile", "raises " + type(exc).__name__, node.name)
    return list(_STATE.records)


def _safe(text: "str", limit: "int") -> "str":
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    text = re.sub(r"[\x00-\x1f\x7f]", " ", text)
    text = text.replace(" ... ", " .. ").replace("=>>", "=>").replace("<<=", "<=")
    return text[:limit]


def _replay_names() -> "None":
    try:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
    except (ValueError, AttributeError):
        previous = None
    try:
        first = _replay_once()
        second = {k: o for k, _, o in _replay_once()}
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if previous is not None:
                signal.signal(signal.SIGALRM, previous)
        except (ValueError, AttributeError):
            pass
    for key, text, outcome in first[:MAX_OBSERVATIONS]:
        if outcome == "timeout" or second.get(key) == "timeout":
            tag = "timeout"
        elif second.get(key) != outcome:
            tag = "unstable"
        else:
            tag = hashlib.sha256(outcome.encode("utf-8", "replace")).hexdigest()[:12]
        name = "test_replay_%s_%s =>> %s =>> %s <<=" % (
            key,
            tag,
            _safe(text, EXPR_CHARS),
            _safe(outcome, HEAD_CHARS),
        )
        setattr(HackauditProbe, name, _passes)
