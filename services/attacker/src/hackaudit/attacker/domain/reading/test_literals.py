"""What the task's tests call, with which literal inputs, and what they expect back.

Read from the lines the test patch adds. A case is a call whose arguments are all literals,
paired when the test says so with the literal it must equal (`assert f(2) == 4`,
`assertEqual(f(2), 4)`, `@pytest.mark.parametrize` rows) or the exception it must raise
(`with pytest.raises(ValueError): f(-1)`). Special-casing turns these into guards; the
differential probes use them as inputs.
"""

from __future__ import annotations

import ast
import math
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hackaudit.attacker.domain.reading import diffs

_EQUAL_ASSERTS = {"assertEqual", "assertEquals", "assert_equal", "assertIs"}
_UNSET = object()


@dataclass(frozen=True)
class Expectation:
    kind: str  # "value" | "raises"
    value: Any = None
    exception: str = ""


@dataclass(frozen=True)
class CallCase:
    function: str  # the called name (last attribute)
    via_attribute: bool  # `obj.f(...)` rather than `f(...)`
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    expect: Expectation | None
    receiver: str | None = None  # `pkg.mod` of `pkg.mod.f(...)`, when the receiver is a name

    @property
    def inputs(self) -> tuple[tuple[Any, ...], tuple[tuple[str, Any], ...]]:
        return self.args, self.kwargs


@dataclass
class TestLiterals:
    cases: list[CallCase] = field(default_factory=list)
    constants: list[Any] = field(default_factory=list)

    def for_function(self, name: str) -> list[CallCase]:
        return [c for c in self.cases if c.function == name]


def is_literal_value(value: Any) -> bool:
    """Whether `repr(value)` reads back as the same value (what generated code may embed)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if value is None or isinstance(value, bool | int | str | bytes | complex):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return all(is_literal_value(v) for v in value)
    if isinstance(value, dict):
        return all(is_literal_value(k) and is_literal_value(v) for k, v in value.items())
    return False


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return _UNSET
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNSET
    return value if is_literal_value(value) else _UNSET


def _called_name(call: ast.Call) -> tuple[str, bool] | None:
    if isinstance(call.func, ast.Name):
        return call.func.id, False
    if isinstance(call.func, ast.Attribute):
        return call.func.attr, True
    return None


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def _call_case(
    node: ast.AST | None, env: dict[str, Any], expect: Expectation | None
) -> CallCase | None:
    if not isinstance(node, ast.Call):
        return None
    named = _called_name(node)
    if named is None or named[0].startswith("assert"):
        return None
    args = [_bind(a, env) for a in node.args]
    kwargs = [(k.arg, _bind(k.value, env)) for k in node.keywords]
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k is None for k, _ in kwargs):
        return None
    if any(v is _UNSET for v in args) or any(v is _UNSET for _, v in kwargs):
        return None
    receiver = _dotted(node.func.value) if isinstance(node.func, ast.Attribute) else None
    return CallCase(
        named[0],
        named[1],
        tuple(args),
        tuple((str(k), v) for k, v in kwargs),
        expect,
        receiver,
    )


def _bind(node: ast.AST, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    return _literal(node)


def _value(node: ast.AST, env: dict[str, Any]) -> Expectation | None:
    value = _bind(node, env)
    return None if value is _UNSET else Expectation("value", value)


def _assert_cases(test: ast.AST, env: dict[str, Any]) -> Iterator[CallCase]:
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = test.left, test.comparators[0]
        if isinstance(test.ops[0], ast.Eq | ast.Is):
            for call, other in ((left, right), (right, left)):
                case = _call_case(call, env, _value(other, env))
                if case is not None:
                    yield case
                    return
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        case = _call_case(test.operand, env, Expectation("value", False))
        if case is not None:
            yield case
    else:
        case = _call_case(test, env, Expectation("value", True))
        if case is not None:
            yield case


def _method_assert_cases(call: ast.Call, env: dict[str, Any]) -> Iterator[CallCase]:
    named = _called_name(call)
    if named is None:
        return
    name, args = named[0], call.args
    if name in _EQUAL_ASSERTS and len(args) >= 2:
        for a, b in ((args[0], args[1]), (args[1], args[0])):
            case = _call_case(a, env, _value(b, env))
            if case is not None:
                yield case
                return
    fixed = {"assertTrue": True, "assertFalse": False, "assertIsNone": None}
    if name in fixed and args:
        case = _call_case(args[0], env, Expectation("value", fixed[name]))
        if case is not None:
            yield case
    if name == "assertRaises" and len(args) >= 2 and isinstance(args[0], ast.Name):
        target = args[1]
        if isinstance(target, ast.Name | ast.Attribute):
            fake = ast.Call(func=target, args=list(args[2:]), keywords=list(call.keywords))
            case = _call_case(fake, env, Expectation("raises", exception=args[0].id))
            if case is not None:
                yield case


def _raises_name(item: ast.withitem) -> str | None:
    ctx = item.context_expr
    if not isinstance(ctx, ast.Call) or not ctx.args:
        return None
    named = _called_name(ctx)
    if named is None or named[0] not in ("raises", "assertRaises"):
        return None
    exc = ctx.args[0]
    return exc.id if isinstance(exc, ast.Name) else None


def _parametrize_rows(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [{}]
    for deco in func.decorator_list:
        if not (isinstance(deco, ast.Call) and len(deco.args) >= 2):
            continue
        named = _called_name(deco)
        names = _literal(deco.args[0])
        values = _literal(deco.args[1])
        if named is None or named[0] != "parametrize" or names is _UNSET or values is _UNSET:
            continue
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        if not isinstance(names, list | tuple) or not isinstance(values, list | tuple):
            continue
        new_rows: list[dict[str, Any]] = []
        for value in values:
            row_values = [value] if len(names) == 1 else value
            if not isinstance(row_values, list | tuple) or len(row_values) != len(names):
                continue
            for row in rows:
                new_rows.append({**row, **dict(zip(names, row_values, strict=True))})
        rows = new_rows or rows
    return rows


class _Collector(ast.NodeVisitor):
    def __init__(self) -> None:
        self.cases: list[CallCase] = []
        self.env: dict[str, Any] = {}

    def _functions(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        saved = self.env
        for row in _parametrize_rows(node)[:50]:
            self.env = {**saved, **row}
            for stmt in node.body:
                self.visit(stmt)
        self.env = saved

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._functions(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._functions(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        self.cases.extend(_assert_cases(node.test, self.env))
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        exc = next((n for n in map(_raises_name, node.items) if n), None)
        if exc is not None:
            for stmt in node.body:
                target = stmt.value if isinstance(stmt, ast.Expr | ast.Assign) else None
                case = _call_case(target, self.env, Expectation("raises", exception=exc))
                if case is not None:
                    self.cases.append(case)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.cases.extend(_method_assert_cases(node, self.env))
        case = _call_case(node, self.env, None)
        if case is not None:
            self.cases.append(case)
        self.generic_visit(node)


def _trees(source: str) -> Iterator[ast.AST]:
    try:
        yield ast.parse(textwrap.dedent(source))
        return
    except (SyntaxError, ValueError):
        pass
    for line in source.split("\n"):
        try:
            yield ast.parse(line.strip())
        except (SyntaxError, ValueError):
            continue


def extract(test_patch: diffs.PatchSource) -> TestLiterals:
    """Call cases and constants found in the lines `test_patch` adds (empty when unparseable)."""
    try:
        patch = diffs.read(test_patch)
    except diffs.DiffError:
        return TestLiterals()
    found = TestLiterals()
    seen: set[str] = set()
    for f in patch.files:
        if not f.path.endswith(".py") or f.is_deleted:
            continue
        for block in diffs.added_blocks(f):
            for tree in _trees(block):
                collector = _Collector()
                collector.visit(tree)
                for case in collector.cases:
                    key = repr(case)
                    if key not in seen:
                        seen.add(key)
                        found.cases.append(case)
                for node in ast.walk(tree):
                    if isinstance(node, ast.Constant) and is_literal_value(node.value):
                        found.constants.append(node.value)
    # A call asserted with an expectation also shows up as a bare call; keep the informative one.
    expected = {(c.function, repr(c.inputs)) for c in found.cases if c.expect is not None}
    found.cases = [
        c
        for c in found.cases
        if c.expect is not None or (c.function, repr(c.inputs)) not in expected
    ]
    return found
