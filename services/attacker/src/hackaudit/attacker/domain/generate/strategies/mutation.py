"""Patch-focused mutation: classic mutation operators applied only to the lines gold adds.

A mutant of an added line is a plausible wrong fix — the same change with `<` for `<=`, `or` for
`and`, one too few, a constant off — and the suite should reject it. Operators work on tokens, so
strings and comments are never touched, and a mutant is kept only if its line (and the hunk
around it, where the fragment can be judged) still parses.

Beside the classic operators, three shapes of wrong fix seen in real submissions: a narrowed
condition (`if a or b` kept as `if a`, an added `and` clause dropped), a condition forced
(`if c:` as `if True:` / `if False:` — the check always or never applied), and copying removed
(`dict(x)` → `x`, `x.copy()` → `x`, `list(x)` → `x`, `x[:]` → `x`: the "yields the same dict"
bug), a copy made into one reused object (a returned or yielded copy replaced by one container,
kept for the module, cleared and refilled on every call: each result looks right when it is
handed out and changes with the next), a range narrowed to its edge (`x < 0` as `x == -1`: the
fix applied to the one value a test is likely to try); a narrower stand-in (`narrowing`: a
leading `./` cut for `normpath`, one of an `isinstance` tuple's types, a keyword option
dropped); and an early return (a statement replaced by a bare `return`). Only lines that hold code
are mutated (never docstrings); a gold patch with few such lines gets more mutants per line, so
a small fix still fills the budget.
"""

from __future__ import annotations

import ast
import keyword
import re
import tokenize
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from hackaudit.attacker.domain.generate import behaviour
from hackaudit.attacker.domain.generate.strategies import narrowing
from hackaudit.attacker.domain.generate.strategies.base import (
    Category,
    OfflineStrategy,
    gold_id,
    make_candidate,
    parse_gold,
    unique,
)
from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.attacker.domain.reading.diffs import LineKind
from hackaudit.attacker.domain.reading.layout import is_test_path
from hackaudit.attacker.domain.reading.pysource import Tok
from hackaudit.shared.contracts import Candidate, Task

NAME = "mutation"

# In the order a task's mutants are interleaved: one of each operator before a second of any.
OPERATORS = (
    "narrow_condition",
    "narrower",
    "copy_removed",
    "reused_copy",
    "edge_only",
    "condition_forced",
    "boundary",
    "comparison",
    "argument_swap",
    "arithmetic",
    "early_return",
    "return_value",
    "boolean",
    "constant",
    "statement_deletion",
)

_COMPARISON = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_ARITHMETIC = {
    "+": "-",
    "-": "+",
    "*": "/",
    "/": "*",
    "//": "/",
    "%": "//",
    "**": "*",
    "+=": "-=",
    "-=": "+=",
    "*=": "/=",
    "/=": "*=",
}
_BINARY_BEFORE = {tokenize.NUMBER, tokenize.STRING}
_KEYWORDS = frozenset(keyword.kwlist) - {"True", "False", "None"}
_INT = re.compile(r"^\d+$")
_DELETABLE = (
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Raise,
    ast.Assert,
    ast.Delete,
    ast.Continue,
    ast.Break,
)


@dataclass(frozen=True)
class Mutant:
    operator: str
    text: str
    detail: str


def _splice(line: str, start: int, end: int, new: str) -> str:
    return line[:start] + new + line[end:]


def _is_binary(prev: Tok | None) -> bool:
    if prev is None:
        return False
    if prev.type in _BINARY_BEFORE:
        return True
    if prev.type == tokenize.NAME:
        return prev.string not in _KEYWORDS
    return prev.string in (")", "]", "}")


def _comparison(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.type == tokenize.OP and t.string in _COMPARISON:
            new = _COMPARISON[t.string]
            yield Mutant("comparison", _splice(line, t.start, t.end, new), f"{t.string} -> {new}")
        elif t.string == "is" and t.type == tokenize.NAME:
            if nxt is not None and nxt.string == "not":
                yield Mutant("comparison", _splice(line, t.start, nxt.end, "is"), "is not -> is")
            else:
                yield Mutant("comparison", _splice(line, t.start, t.end, "is not"), "is -> is not")
        elif t.string == "in" and t.type == tokenize.NAME:
            if prev is not None and prev.string == "not":
                yield Mutant("comparison", _splice(line, prev.start, t.end, "in"), "not in -> in")
            elif not any(x.string in ("for", "async") for x in toks[:i]):
                yield Mutant("comparison", _splice(line, t.start, t.end, "not in"), "in -> not in")


def _boolean(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    swaps = {"and": "or", "or": "and", "True": "False", "False": "True"}
    for i, t in enumerate(toks):
        if t.type != tokenize.NAME:
            continue
        if t.string in swaps:
            new = swaps[t.string]
            yield Mutant("boolean", _splice(line, t.start, t.end, new), f"{t.string} -> {new}")
        elif t.string == "not" and i + 1 < len(toks):
            prev = toks[i - 1] if i else None
            nxt = toks[i + 1]
            if nxt.string != "in" and (prev is None or prev.string != "is"):
                yield Mutant("boolean", _splice(line, t.start, nxt.start, ""), "not removed")


def _arithmetic(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    for i, t in enumerate(toks):
        if t.type != tokenize.OP or t.string not in _ARITHMETIC:
            continue
        augmented = t.string.endswith("=")
        if not augmented and not _is_binary(toks[i - 1] if i else None):
            continue
        new = _ARITHMETIC[t.string]
        yield Mutant("arithmetic", _splice(line, t.start, t.end, new), f"{t.string} -> {new}")


def _boundary(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    compares = any(t.string in _COMPARISON or t.string in ("[", ":") for t in toks)
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if (
            t.string in ("+", "-")
            and _is_binary(prev)
            and nxt is not None
            and nxt.string == "1"
            and prev is not None
        ):
            yield Mutant("boundary", _splice(line, prev.end, nxt.end, ""), f"{t.string} 1 removed")
        elif t.type == tokenize.NUMBER and _INT.match(t.string) and compares:
            n = int(t.string)
            for new in (n + 1, n - 1):
                if new >= 0:
                    yield Mutant(
                        "boundary", _splice(line, t.start, t.end, str(new)), f"{n} -> {new}"
                    )


def _constant(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    if len(toks) == 1 and toks[0].type == tokenize.STRING:
        return  # a docstring or bare string expression
    compares = any(t.string in _COMPARISON or t.string in ("[", ":") for t in toks)
    for t in toks:
        if t.type == tokenize.NUMBER and _INT.match(t.string) and not compares:
            n = int(t.string)
            for new in sorted({n + 1, 0 if n else 1}):
                yield Mutant("constant", _splice(line, t.start, t.end, str(new)), f"{n} -> {new}")
        elif t.type == tokenize.STRING and re.match(r"^[rR]?(['\"])(?!\1\1)", t.string):
            quote = t.string.lstrip("rR")[0]
            empty = t.string.lstrip("rR") == quote * 2
            text = f"{quote}x{quote}" if empty else quote * 2
            yield Mutant(
                "constant", _splice(line, t.start, t.end, text), f"{t.string[:20]} -> {text}"
            )


def _return_value(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """The value a `return` (or a `yield`) gives replaced by None or an opposite constant."""
    if len(toks) < 2 or toks[0].string not in ("return", "yield") or toks[1].string == "from":
        return
    if not pysource.line_parses(line):
        return
    keyword = toks[0].string
    indent = pysource.indent_of(line)
    expr = line[toks[1].start :].strip()
    alternatives: list[str] = []
    if expr != "None":
        alternatives.append("None")
    if expr in ("True", "False"):
        alternatives.append("False" if expr == "True" else "True")
    elif len(toks) == 2 and toks[1].type == tokenize.NUMBER:
        alternatives.append("1" if expr in ("0", "0.0") else "0")
    elif len(toks) == 2 and toks[1].type == tokenize.STRING:
        alternatives.append('""')
    elif expr.startswith(("[", "(", "{")) and len(toks) > 3:
        alternatives.append({"[": "[]", "(": "()", "{": "{}"}[expr[0]])
    for new in alternatives:
        yield Mutant("return_value", f"{indent}{keyword} {new}", f"{keyword} {expr[:30]} -> {new}")


def _early_return(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """A statement inside a function replaced by a bare `return`: the work stops there."""
    if not toks or toks[0].string in ("return", "raise", "pass") or not pysource.indent_of(line):
        return
    if line.rstrip().endswith(":") or toks[0].string in ("else", "elif", "except", "finally"):
        return
    if not pysource.line_parses(line):
        return
    yield Mutant(
        "early_return", f"{pysource.indent_of(line)}return", f"{line.strip()[:40]} -> return"
    )


def _argument_swap(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """`f(a, b)` -> `f(b, a)`: the arguments of a two-argument call in the wrong order."""
    text = line.strip()
    if not toks or not text.isascii():
        return
    try:
        tree = ast.parse(text + ("\n    pass" if text.endswith(":") else ""))
    except SyntaxError:
        return
    offset = len(line) - len(line.lstrip())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) != 2 or node.keywords:
            continue
        a, b = node.args
        if isinstance(a, ast.Starred) or isinstance(b, ast.Starred):
            continue
        if a.lineno != 1 or b.end_lineno != 1 or a.end_col_offset is None:
            continue
        first = text[a.col_offset : a.end_col_offset]
        second = text[b.col_offset : b.end_col_offset]
        if first == second:
            continue
        new = (
            text[: a.col_offset]
            + second
            + text[a.end_col_offset : b.col_offset]
            + first
            + text[b.end_col_offset :]
        )
        detail = f"({first[:20]}, {second[:20]}) -> ({second[:20]}, {first[:20]})"
        yield Mutant("argument_swap", line[:offset] + new, detail)


def _statement_deletion(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    if not toks or not pysource.line_parses(line) or line.rstrip().endswith(":"):
        return
    try:
        body = ast.parse(line.strip()).body
    except SyntaxError:
        return
    is_call = (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Call | ast.Yield | ast.YieldFrom | ast.Await)
    )
    if len(body) == 1 and (isinstance(body[0], _DELETABLE) or is_call):
        yield Mutant(
            "statement_deletion",
            f"{pysource.indent_of(line)}pass",
            f"{line.strip()[:40]} -> pass",
        )


def _line_tree(line: str) -> tuple[str, str, ast.Module] | None:
    """The statement of a line, what precedes it (indentation, the `el` of `elif`) and its
    syntax tree (None: not one ASCII statement). A block header gets a `pass` body to parse."""
    text = line.strip()
    if not text or not text.isascii():
        return None
    lead = line[: len(line) - len(line.lstrip())]
    if text.startswith("elif "):
        text, lead = text[2:], lead + "el"
    try:
        tree = ast.parse(text + ("\n    pass" if text.endswith(":") else ""))
    except SyntaxError:
        return None
    return text, lead, tree


def _line_nodes(line: str) -> Iterator[tuple[str, str, ast.AST]]:
    """(statement, what precedes it, node) for every node of the line's syntax tree (none when
    the line is not one ASCII statement): see `_line_tree`."""
    parsed = _line_tree(line)
    if parsed is None:
        return
    text, lead, tree = parsed
    for node in ast.walk(tree):
        yield text, lead, node


def _span(text: str, node: ast.expr) -> tuple[int, int] | None:
    if node.lineno != 1 or node.end_lineno != 1 or node.end_col_offset is None:
        return None
    return node.col_offset, node.end_col_offset


_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.Compare)


def _as_operand(text: str, node: ast.expr) -> str | None:
    span = _span(text, node)
    if span is None:
        return None
    inner = text[span[0] : span[1]]
    return inner if isinstance(node, (*_ATOMIC, ast.UnaryOp, ast.BoolOp)) else f"({inner})"


def _narrow_condition(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """`a or b` -> `a` / `b`; `a and b and c` -> each with one clause dropped."""
    for text, lead, node in _line_nodes(line):
        if not isinstance(node, ast.BoolOp) or (span := _span(text, node)) is None:
            continue
        op = "or" if isinstance(node.op, ast.Or) else "and"
        for i, dropped in enumerate(node.values):
            kept = [v for j, v in enumerate(node.values) if j != i]
            parts = [_as_operand(text, v) for v in kept]
            if any(p is None for p in parts):
                continue
            new = f" {op} ".join(p for p in parts if p is not None)
            mutated = text[: span[0]] + new + text[span[1] :]
            shown = ast.get_source_segment(text, dropped) or "?"
            yield Mutant("narrow_condition", lead + mutated, f"{op} {shown[:30]} dropped")


def _condition_forced(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """`if c:` -> `if True:` / `if False:`: a check applied always, or never."""
    parsed = _line_tree(line)
    if parsed is None or not parsed[0].endswith(":"):
        return
    text, lead, tree = parsed
    stmt = tree.body[0] if tree.body else None
    if not isinstance(stmt, (ast.If, ast.While)) or (span := _span(text, stmt.test)) is None:
        return
    if isinstance(stmt.test, ast.Constant):
        return
    choices = ("True", "False") if isinstance(stmt, ast.If) else ("False",)
    for value in choices:
        mutated = text[: span[0]] + value + text[span[1] :]
        yield Mutant("condition_forced", lead + mutated, f"condition -> {value}")


_COPIERS = frozenset({"dict", "list", "set", "tuple", "copy", "deepcopy", "frozenset"})


def _copy_removed(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """`dict(x)`, `list(x)`, `copy(x)`, `x.copy()`, `x[:]` -> `x`: the copy not made."""
    for text, lead, node in _line_nodes(line):
        inner: ast.expr | None = None
        if isinstance(node, ast.Call) and not node.keywords:
            func = node.func
            name = func.id if isinstance(func, ast.Name) else None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                name = func.attr if func.value.id == "copy" else None
            if name in _COPIERS and len(node.args) == 1:
                inner = node.args[0]
            elif isinstance(func, ast.Attribute) and func.attr == "copy" and not node.args:
                inner = func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            sl = node.slice
            if sl.lower is None and sl.upper is None and sl.step is None:
                inner = node.value
        if inner is None or isinstance(inner, ast.Starred):
            continue
        span = _span(text, node)  # type: ignore[arg-type]
        replacement = _as_operand(text, inner)
        if span is None or replacement is None:
            continue
        mutated = text[: span[0]] + replacement + text[span[1] :]
        shown = text[span[0] : span[1]]
        yield Mutant("copy_removed", lead + mutated, f"{shown[:30]} -> {replacement[:30]}")


# A copy made into one module-level container, cleared and refilled: an expression, so the line
# stays one line; `{name}` is the container's global name, `{value}` the copied expression.
_REUSED = (
    "(lambda v: (lambda b: b.clear() or (b.update(v) if hasattr(b, 'update') else b.extend(v))"
    " or b)(globals().setdefault({name!r}, {empty})))({value})"
)
_REUSABLE = {"dict": "{}", "list": "[]", "set": "set()", "copy": "type(v)()"}


def _copied(node: ast.AST) -> tuple[ast.expr, str] | None:
    """(the copied expression, the empty container to refill) of a mutable copy, else None."""
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _REUSABLE and len(node.args) == 1:
            return node.args[0], _REUSABLE[func.id]
        if isinstance(func, ast.Attribute) and func.attr == "copy" and not node.args:
            if isinstance(func.value, ast.Name) and func.value.id == "copy":
                return None
            return func.value, "type(v)()"
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and (func.value.id, func.attr) == ("copy", "copy")
            and len(node.args) == 1
        ):
            return node.args[0], "type(v)()"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        sl = node.slice
        if sl.lower is None and sl.upper is None and sl.step is None:
            return node.value, "[]"
    return None


def _reused_copy(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """A returned / yielded `dict(x)`, `list(x)`, `set(x)`, `x.copy()`, `x[:]` made into one
    container kept for the module and refilled on every call (not a fresh copy)."""
    if not toks or toks[0].string not in ("return", "yield"):
        return
    for text, lead, node in _line_nodes(line):
        found = _copied(node)
        if found is None or isinstance(found[0], ast.Starred):
            continue
        span = _span(text, node)  # type: ignore[arg-type]
        inner = _span(text, found[0])
        if span is None or inner is None:
            continue
        shown = text[span[0] : span[1]]
        name = f"_reused_{zlib.crc32(text.encode()) % 1_000_000}"
        value = text[inner[0] : inner[1]]
        replacement = _REUSED.format(name=name, empty=found[1], value=value)
        mutated = text[: span[0]] + replacement + text[span[1] :]
        yield Mutant("reused_copy", lead + mutated, f"{shown[:30]} -> one refilled container")


_EDGE = {"<": -1, "<=": 0, ">": 1, ">=": 0}


def _edge_only(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """`x < n` -> `x == n - 1`, `x <= n` -> `x == n` (and `>`, `>=` alike): a range check
    narrowed to its edge value, the one a test tends to try."""
    for i, t in enumerate(toks):
        if t.type != tokenize.OP or t.string not in _EDGE or i + 1 >= len(toks):
            continue
        j, sign = i + 1, 1
        if toks[j].string in ("-", "+") and j + 1 < len(toks):
            j, sign = j + 1, (-1 if toks[j].string == "-" else 1)
        number = toks[j]
        after = toks[j + 1] if j + 1 < len(toks) else None
        if number.type != tokenize.NUMBER or not _INT.match(number.string):
            continue
        if after is not None and after.string in ("(", "[", ".", "**", "*", "/", "//", "%"):
            continue
        edge = sign * int(number.string) + _EDGE[t.string]
        yield Mutant(
            "edge_only",
            _splice(line, t.start, number.end, f"== {edge}"),
            f"{t.string} {sign * int(number.string)} -> == {edge}",
        )


def _narrower(line: str, toks: list[Tok]) -> Iterator[Mutant]:
    """A call or a choice replaced by a narrower stand-in (`narrowing`)."""
    for text, detail in narrowing.narrower(line, _line_tree):
        yield Mutant("narrower", text, detail)


_OPERATOR_FNS = {
    "narrower": _narrower,
    "early_return": _early_return,
    "narrow_condition": _narrow_condition,
    "copy_removed": _copy_removed,
    "reused_copy": _reused_copy,
    "edge_only": _edge_only,
    "condition_forced": _condition_forced,
    "comparison": _comparison,
    "boundary": _boundary,
    "boolean": _boolean,
    "return_value": _return_value,
    "arithmetic": _arithmetic,
    "argument_swap": _argument_swap,
    "constant": _constant,
    "statement_deletion": _statement_deletion,
}


def line_mutants(lines: list[str], index: int, operator: str) -> list[Mutant]:
    """Mutants of `lines[index]` by one operator that keep the fragment parseable."""
    line = lines[index]
    toks = [t for t in pysource.tokens(lines) if t.line == index and t.type != tokenize.COMMENT]
    out: list[Mutant] = []
    original_parses = pysource.line_parses(line)
    for mutant in _OPERATOR_FNS[operator](line, toks):
        if mutant.text == line or (original_parses and not pysource.line_parses(mutant.text)):
            continue
        mutated = [*lines[:index], mutant.text, *lines[index + 1 :]]
        if pysource.still_parses(lines, mutated):
            out.append(mutant)
    return out


@dataclass(frozen=True)
class _Site:
    file: int
    hunk: int
    line: int  # index in the hunk
    new_side_index: int
    reverts_to: str | None  # the base line this added line replaces, when it is a changed line


def _sites(gold: diffs.Patch) -> list[_Site]:
    pairs = {
        (s.ref.file, s.ref.hunk, s.added_index): s.removed
        for s in diffs.slots(gold)
        if s.added_index is not None
    }
    sites: list[_Site] = []
    for fi, f in enumerate(gold.files):
        if not f.path.endswith(".py") or is_test_path(f.path):
            continue
        for hi, hunk in enumerate(f.hunks):
            is_code = behaviour.code_mask(hunk.new_side())
            new_index = 0
            for li, line in enumerate(hunk.lines):
                if line.kind is LineKind.REMOVED:
                    continue
                if line.kind is LineKind.ADDED and is_code[new_index]:
                    sites.append(_Site(fi, hi, li, new_index, pairs.get((fi, hi, li))))
                new_index += 1
    return sites


# A gold patch with at most this many code lines gets `SMALL_GOLD_PER_LINE` mutants per line and
# operator instead of `per_line`: its budget is spent on more mutants of the few lines it has.
SMALL_GOLD_LINES = 4
SMALL_GOLD_PER_LINE = 12


def interleave(lists: list[list[Candidate]]) -> list[Candidate]:
    """One of each list before a second of any, order kept within each."""
    depth = max((len(x) for x in lists), default=0)
    return [x[rank] for rank in range(depth) for x in lists if rank < len(x)]


def mutants(task: Task, limit: int = 80, per_line: int = 3) -> list[Candidate]:
    """Mutants of gold's added code lines: one mutant of every line before a second of any, and
    within a line one of each operator before a second — so a budget smaller than the pool
    still reaches every line gold adds (an untested branch is as likely as a wrong operator)."""
    gold = parse_gold(task)
    if gold is None:
        return []
    parent = gold_id(task)
    sites = _sites(gold)
    if len(sites) <= SMALL_GOLD_LINES:
        per_line = max(per_line, SMALL_GOLD_PER_LINE)
    per_site: list[list[Candidate]] = []
    for site in sites:
        f = gold.files[site.file]
        lines = f.hunks[site.hunk].new_side()
        where = f"{f.path} @@ -{f.hunks[site.hunk].old_start} line {site.line + 1}"
        by_operator: list[list[Candidate]] = []
        for operator in OPERATORS:
            found: list[Candidate] = []
            for m in line_mutants(lines, site.new_side_index, operator):
                if len(found) >= per_line:
                    break
                if site.reverts_to is not None and m.text.strip() == site.reverts_to.strip():
                    continue  # that is a partial fix, not a mutant
                patch = diffs.replace_line(gold, site.file, site.hunk, site.line, m.text)
                detail = f"{operator}: {m.detail} in {where}"
                found.append(make_candidate(task, patch, NAME, detail, parent))
            by_operator.append(found)
        per_site.append(interleave(by_operator))
    return unique(interleave(per_site), limit)


STRATEGY = OfflineStrategy(NAME, Category.MUTATION, mutants)
