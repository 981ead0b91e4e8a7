"""The test patch's calls whose inputs are expressions, not literals, with what each expects.

`test_literals` reads cases whose arguments are plain literals. Many suites build their inputs
from objects instead — sympy's `f(Symbol('x') + 1)`, a model instance, a parsed tree — and check
the result in their runner's own style:

* pytest: `assert f(x) == y`, `assert f(x) is y`, `assert f(x)`, `assert not f(x)`;
* unittest: `self.assertEqual(f(x), y)`, `assertIs`, `assertTrue`, `assertFalse`;
* sympy: `raises(ValueError, lambda: f(x))`; and `with raises(E):` / `pytest.raises(E)`.

Each case keeps the *source text* of its inputs and its expectation, and the statements that
define the names they use (the test module's imports and simple assignments, the test function's
assignments before the check), so a candidate can rebuild the same objects at run time.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, replace

from hackaudit.attacker.domain.reading import diffs

MAX_CASES = 40
_EQUAL = {"assertEqual", "assertEquals", "assert_equal", "assertIs"}
_FIXED = {"assertTrue": "True", "assertFalse": "False", "assertIsNone": "None"}


@dataclass(frozen=True)
class ExprCase:
    function: str  # the called name (last attribute)
    via_attribute: bool
    receiver: str | None  # source of `obj` in `obj.f(...)`
    args: tuple[str, ...]  # source of each positional argument
    kwargs: tuple[tuple[str, str], ...]
    expect: str | None  # source of the expected value (None with `raises`)
    raises: str | None  # the exception's name
    prelude: tuple[str, ...]  # statements defining the names the sources use
    path: str = ""  # the test file the check is in


def _source(node: ast.AST) -> str:
    return ast.unparse(node)


def _call(node: ast.AST | None) -> ast.Call | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if not isinstance(name, str) or name.startswith("assert") or name == "raises":
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        return None
    return node


def _case(call: ast.Call, expect: str | None, raises: str | None, prelude: list[str]) -> ExprCase:
    func = call.func
    attribute = isinstance(func, ast.Attribute)
    return ExprCase(
        function=func.attr if isinstance(func, ast.Attribute) else _source(func),
        via_attribute=attribute,
        receiver=_source(func.value) if isinstance(func, ast.Attribute) else None,
        args=tuple(_source(a) for a in call.args),
        kwargs=tuple((str(k.arg), _source(k.value)) for k in call.keywords),
        expect=expect,
        raises=raises,
        prelude=tuple(prelude),
    )


def _checks(stmt: ast.stmt) -> Iterator[tuple[ast.Call, str | None, str | None]]:
    """(call, expected source, exception name) for each check one statement makes."""
    if isinstance(stmt, ast.Assert):
        test = stmt.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            if isinstance(test.ops[0], ast.Eq | ast.Is):
                for a, b in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
                    if (call := _call(a)) is not None:
                        yield call, _source(b), None
                        return
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            if (call := _call(test.operand)) is not None:
                yield call, "False", None
        elif (call := _call(test)) is not None:
            yield call, "True", None
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        outer = stmt.value
        func = outer.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        args = outer.args
        if name in _EQUAL and len(args) >= 2:
            for a, b in ((args[0], args[1]), (args[1], args[0])):
                if (call := _call(a)) is not None:
                    yield call, _source(b), None
                    return
        elif name in _FIXED and args and (call := _call(args[0])) is not None:
            yield call, _FIXED[name], None
        elif name in ("raises", "assertRaises") and len(args) == 2:
            exc, body = args
            call = _call(body.body) if isinstance(body, ast.Lambda) else None
            if isinstance(exc, ast.Name) and call is not None:
                yield call, None, exc.id
    elif isinstance(stmt, ast.With):
        for item in stmt.items:
            ctx = item.context_expr
            if not (isinstance(ctx, ast.Call) and ctx.args and isinstance(ctx.args[0], ast.Name)):
                continue
            name = getattr(ctx.func, "id", None) or getattr(ctx.func, "attr", None)
            if name not in ("raises", "assertRaises"):
                continue
            for inner in stmt.body:
                value = inner.value if isinstance(inner, ast.Expr | ast.Assign) else None
                if (call := _call(value)) is not None:
                    yield call, None, ctx.args[0].id


def _is_definition(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return True
    return isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets)


def _from_function(
    func: ast.FunctionDef, module_prelude: list[str], path: str = ""
) -> Iterator[ExprCase]:
    local: list[str] = []
    for stmt in func.body:
        for call, expect, raises in _checks(stmt):
            yield replace(_case(call, expect, raises, [*module_prelude, *local]), path=path)
        if _is_definition(stmt):
            local.append(_source(stmt))


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (n for n in node.body if isinstance(n, ast.FunctionDef))


def _visible_imports(f: diffs.FileDiff) -> list[str]:
    """Import statements the patch shows for a file, added or as context."""
    out: list[str] = []
    for hunk in f.hunks:
        for text in hunk.new_side():
            if text.startswith(("import ", "from ")) and "(" not in text and text not in out:
                try:
                    ast.parse(text)
                except SyntaxError:
                    continue
                out.append(text)
    return out


def extract(test_patch: diffs.PatchSource) -> list[ExprCase]:
    """Checks of direct calls in the lines `test_patch` adds (empty when unparseable)."""
    try:
        patch = diffs.read(test_patch)
    except diffs.DiffError:
        return []
    out: list[ExprCase] = []
    for f in patch.files:
        if not f.path.endswith(".py") or f.is_deleted:
            continue
        imports = _visible_imports(f)
        for block in diffs.added_blocks(f):
            try:
                tree = ast.parse(textwrap.dedent(block))
            except (SyntaxError, ValueError):
                continue
            prelude = list(imports)
            for stmt in tree.body:
                if _is_definition(stmt) and (text := _source(stmt)) not in prelude:
                    prelude.append(text)
            for func in _functions(tree):
                out.extend(_from_function(func, prelude, f.path))
                if len(out) >= MAX_CASES:
                    return out[:MAX_CASES]
    return out
