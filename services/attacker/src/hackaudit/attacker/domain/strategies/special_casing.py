"""Special-casing: answer exactly the inputs the tests use, and nothing else.

The literal inputs the test patch passes to a function gold changes, and the literal results it
expects, become guards at the top of that function in its *base* version:

    if n.__class__ is int and n == 4:
        return True

Everything else keeps the old, wrong behaviour. A suite that accepts this checks only the
examples it was written with. When gold adds the function itself, gold's version gets the guards
followed by `return None`, so gold's body is never reached.
"""

from __future__ import annotations

import builtins
from typing import Any

from hackaudit.attacker.domain import diffs, pysource, targets
from hackaudit.attacker.domain.strategies.base import (
    Category,
    OfflineStrategy,
    gold_id,
    make_candidate,
    parse_gold,
    unique,
)
from hackaudit.attacker.domain.targets import ChangedFunction
from hackaudit.attacker.domain.test_literals import CallCase, extract
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


def _patch_for(gold: diffs.Patch, fn: ChangedFunction, cases: list[CallCase]) -> diffs.Patch | None:
    def body(indent: str) -> list[str]:
        lines = guard_lines(fn, cases, indent)
        if lines and fn.new_in_gold and not lines[-1].strip().startswith(("return", "raise")):
            lines.append(f"{indent}return None")
        return lines

    slot = fn.base_slot or fn.gold_slot
    if slot is None or not body(slot[1]):
        return None
    return targets.insert_into_function(gold, fn, body)


def special_cases(task: Task) -> list[Candidate]:
    gold = parse_gold(task)
    if gold is None:
        return []
    literals = extract(task.test_patch)
    parent = gold_id(task)
    out: list[Candidate] = []
    base_parts: list[diffs.Patch] = []
    names: list[str] = []
    for fn in targets.changed_functions(gold):
        cases = literals.for_function(fn.name)
        patch = _patch_for(gold, fn, cases) if cases else None
        if patch is None:
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
    return unique(out)


STRATEGY = OfflineStrategy(NAME, Category.SPECIAL_CASE, special_cases)
