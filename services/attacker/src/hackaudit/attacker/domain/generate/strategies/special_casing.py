"""Special-casing: answer exactly the inputs the tests use, and nothing else.

The literal inputs the test patch passes to a function gold changes, and the literal results it
expects, become guards at the top of that function in its *base* version:

    if n.__class__ is int and n == 4:
        return True

Everything else keeps the old, wrong behaviour. A suite that accepts this checks only the
examples it was written with. When gold adds the function itself, gold's version gets the guards
followed by `return None`, so gold's body is never reached.

Tests that build their inputs from objects (`f(Symbol('x') + 1)`, sympy's `raises(E, lambda:
f(x))`, `self.assertEqual(f(obj), expected)`) get the same treatment from their source text
(`test_expressions`): on the function's first call the guard rebuilds the test's inputs in a
namespace made of the module's globals and the test's imports and assignments, then answers the
expected value (or raises the expected exception) whenever the arguments compare equal to one
of them. The namespace is built once, and a call made while it is being built is not guarded, so
inputs whose construction calls the function itself cannot recurse.

After these, `tested_objects`: gold's changed statements made for the objects the tests build
alone (the base statements for every other), for a fix the tests reach only through an object.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from hackaudit.attacker.domain.generate import targets
from hackaudit.attacker.domain.generate.strategies import tested_objects
from hackaudit.attacker.domain.generate.strategies.base import (
    Category,
    OfflineStrategy,
    gold_id,
    make_candidate,
    parse_gold,
    unique,
)
from hackaudit.attacker.domain.generate.targets import ChangedFunction
from hackaudit.attacker.domain.reading import diffs, pysource, test_expressions
from hackaudit.attacker.domain.reading.test_expressions import ExprCase
from hackaudit.attacker.domain.reading.test_literals import CallCase, extract
from hackaudit.shared.contracts import Candidate, Task

NAME = "special_case"
MAX_GUARDS = 20


def _test(param: str, value: Any) -> str:
    if value is None or isinstance(value, bool):
        return f"{param} is {value!r}"
    return f"{param}.__class__ is {type(value).__name__} and {param} == {value!r}"


def _binding(fn: ChangedFunction, case: CallCase) -> dict[str, Any] | None:
    """Parameter name -> literal the case passes, or None when the call does not fit."""
    sig = fn.signature
    if sig is None or (sig.is_method and not case.via_attribute):
        return None
    params = sig.call_params
    if len(case.args) > len(params):
        return None  # extra arguments would land in *args: not guarded
    bound = dict(zip(params, case.args, strict=False))
    for name, value in case.kwargs:
        if name in bound or (name not in params and name not in sig.keyword_only):
            return None
        bound[name] = value
    return bound


def _outcome(case: CallCase) -> str | None:
    expect = case.expect
    if expect is None:
        return None
    if expect.kind == "raises":
        exc = getattr(builtins, expect.exception, None)
        if not (isinstance(exc, type) and issubclass(exc, BaseException)):
            return None
        return f'raise {expect.exception}("special case")'
    return f"return {expect.value!r}"


def guard_lines(fn: ChangedFunction, cases: list[CallCase], indent: str) -> list[str]:
    """`if <inputs match>: return <expected>` for each case (unconditional when no inputs)."""
    inner = pysource.body_indent(indent)
    out: list[str] = []
    seen: set[str] = set()
    for case in cases:
        bound = _binding(fn, case)
        outcome = _outcome(case)
        if bound is None or outcome is None:
            continue
        condition = " and ".join(_test(p, v) for p, v in bound.items())
        if condition in seen:
            continue
        seen.add(condition)
        if not condition:
            return [*out, f"{indent}{outcome}"]
        out += [f"{indent}if {condition}:", f"{inner}{outcome}"]
        if len(seen) >= MAX_GUARDS:
            break
    return out


def _inserted(
    gold: diffs.Patch, fn: ChangedFunction, body: Callable[[str], list[str]]
) -> diffs.Patch | None:
    """Gold with `body` (lines at the given indent) inserted into `fn`, or None when `fn` has no
    place for it or `body` has nothing to insert."""
    slot = fn.base_slot or fn.gold_slot
    if slot is None or not body(slot[1]):
        return None
    return targets.insert_into_function(gold, fn, body)


def _patch_for(gold: diffs.Patch, fn: ChangedFunction, cases: list[CallCase]) -> diffs.Patch | None:
    def body(indent: str) -> list[str]:
        lines = guard_lines(fn, cases, indent)
        if lines and fn.new_in_gold and not lines[-1].strip().startswith(("return", "raise")):
            lines.append(f"{indent}return None")
        return lines

    return _inserted(gold, fn, body)


def _expression_binding(fn: ChangedFunction, case: ExprCase) -> list[tuple[str, str]] | None:
    """(parameter, source of the value the test passes) for a case, None when it does not fit."""
    sig = fn.signature
    if sig is None or (sig.is_method and (not case.via_attribute or case.receiver is None)):
        return None
    params = sig.call_params
    if len(case.args) > len(params):
        return None
    bound = list(zip(params, case.args, strict=False))
    for name, value in case.kwargs:
        if name in dict(bound) or (name not in params and name not in sig.keyword_only):
            return None
        bound.append((name, value))
    if not bound:
        return None
    if sig.is_method and case.receiver is not None:
        bound.insert(0, (sig.positional[0], case.receiver))
    return bound


def expression_guard_lines(fn: ChangedFunction, cases: list[ExprCase], indent: str) -> list[str]:
    """Lines that answer the test's expression-built inputs (see the module docstring)."""
    table: list[tuple[tuple[str, ...], str, str | None, str | None]] = []
    prelude: list[str] = []
    for case in cases:
        bound = _expression_binding(fn, case)
        if bound is None:
            continue
        names = tuple(n for n, _ in bound)
        inputs = "(" + "".join(f"{src}, " for _, src in bound) + ")"
        row = (names, inputs, case.expect, case.raises)
        if row not in table:
            table.append(row)
        prelude += [p for p in case.prelude if p not in prelude and f"{fn.name}(" not in p]
        if len(table) >= MAX_GUARDS:
            break
    if not table:
        return []
    i, j = indent, pysource.body_indent(indent)
    k, m = pysource.body_indent(j), pysource.body_indent(pysource.body_indent(j))
    params = sorted({n for names, _, _, _ in table for n in names})
    key = f"_ha_special_{fn.name}"
    return [
        f"{i}_ha_s = globals().setdefault({key!r}, {{}})",
        f'{i}if "ns" not in _ha_s:',
        f'{j}_ha_s["ns"] = None',
        f"{j}_ha_ns = dict(globals())",
        f"{j}for _ha_line in {tuple(prelude)!r}:",
        f"{k}try:",
        f"{m}exec(_ha_line, _ha_ns)",
        f"{k}except Exception:",
        f"{m}pass",
        f"{j}_ha_cases = []",
        f"{j}for _ha_names, _ha_in, _ha_out, _ha_exc in {tuple(table)!r}:",
        f"{k}try:",
        f"{m}_ha_cases.append((_ha_names, eval(_ha_in, _ha_ns), _ha_out, _ha_exc))",
        f"{k}except Exception:",
        f"{m}pass",
        f'{j}_ha_s["cases"] = _ha_cases',
        f'{j}_ha_s["ns"] = _ha_ns',
        f"{i}_ha_args = {{{', '.join(f'{n!r}: {n}' for n in params)}}}",
        f'{i}for _ha_names, _ha_in, _ha_out, _ha_exc in _ha_s.get("cases", ()):',
        f"{j}try:",
        f"{k}_ha_hit = tuple(_ha_args[n] for n in _ha_names) == _ha_in",
        f"{j}except Exception:",
        f"{k}_ha_hit = False",
        f"{j}if _ha_hit is True and _ha_exc is not None:",
        f'{k}raise eval(_ha_exc, _ha_s["ns"])("special case")',
        f"{j}if _ha_hit is True:",
        f'{k}return eval(_ha_out, _ha_s["ns"])',
    ]


def _expression_patch(
    gold: diffs.Patch, fn: ChangedFunction, cases: list[ExprCase]
) -> diffs.Patch | None:
    def body(indent: str) -> list[str]:
        lines = expression_guard_lines(fn, cases, indent)
        if lines and fn.new_in_gold:
            lines.append(f"{indent}return None")
        return lines

    return _inserted(gold, fn, body)


def special_cases(task: Task) -> list[Candidate]:
    gold = parse_gold(task)
    if gold is None:
        return []
    literals = extract(task.test_diff)
    expressions = test_expressions.extract(task.test_diff)
    parent = gold_id(task)
    out: list[Candidate] = []
    base_parts: list[diffs.Patch] = []
    names: list[str] = []
    for fn in targets.changed_functions(gold):
        cases = literals.for_function(fn.name)
        patch = _patch_for(gold, fn, cases) if cases else None
        if patch is None:
            built = [c for c in expressions if c.function == fn.name]
            patch = _expression_patch(gold, fn, built) if built else None
            if patch is not None:
                detail = f"{fn.name} answers the {len(built)} test inputs built from expressions"
                out.append(make_candidate(task, patch, NAME, detail, parent))
            continue
        detail = f"{fn.name} answers the {len(cases)} literal test inputs, base code otherwise"
        if fn.new_in_gold:
            detail = f"{fn.name} (added by gold) answers only the {len(cases)} literal test inputs"
        out.append(make_candidate(task, patch, NAME, detail, parent))
        if not fn.new_in_gold:
            base_parts.append(patch)
            names.append(fn.name)
    if len(base_parts) > 1:
        try:
            merged = diffs.merge(*base_parts)
        except diffs.DiffError:
            merged = None
        if merged is not None:
            detail = f"{', '.join(names)} answer only their literal test inputs"
            out.insert(0, make_candidate(task, merged, NAME, detail, parent))
    out += tested_objects.tested_objects(task, gold)
    return unique(out)


STRATEGY = OfflineStrategy(NAME, Category.SPECIAL_CASE, special_cases)
