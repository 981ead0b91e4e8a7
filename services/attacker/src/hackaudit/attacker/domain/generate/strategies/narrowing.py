"""Narrower stand-ins: a call or a choice in gold's line replaced by one that covers less.

Real wrong fixes often do what gold does for the case in front of them and no more: a path
"normalised" by cutting a leading `./` instead of `os.path.normpath`, a `strip()` that only
trims the right end, a regular expression matched at the start instead of in full, one of the
types an `isinstance` check names, one of the values an `in` test lists, one of the names a list
argument gives (`subset=["x", "y"]` as `subset=["x"]`), a keyword option dropped so the call runs
with its default. Each passes a test written for the issue's one example and is wrong beside it.
These mutants are made for every line gold adds, so a one-line gold patch still gets several
candidates with different behaviour.

Every stand-in here keeps the line a single expression of the same shape, and an argument is
repeated only when it is a plain name or attribute (evaluating it twice changes nothing). A line
that is part of a statement spread over several lines (`.apply(data.dropna(subset=[...]), f)`
inside `return (...)`, an argument line ending in a comma) is read as the fragment it is: with
the name or the brackets it continues supplied for parsing, and only what lies on the line itself
is ever replaced.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

OPERATOR = "narrower"


def _dotted(node: ast.expr) -> str | None:
    """`os.path.normpath` for an attribute chain of names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def _source(text: str, node: ast.AST) -> str | None:
    segment = ast.get_source_segment(text, node)
    return segment if segment and "\n" not in segment else None


def _repeatable(node: ast.expr) -> bool:
    return isinstance(node, ast.Name | ast.Attribute) and _dotted(node) is not None


# A library function -> stand-ins that take its one argument `{a}` (a name or attribute).
_FUNCTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "os.path.normpath": (
        ("({a}[2:] if {a}.startswith('./') else {a})", "only a leading ./ removed"),
        ("{a}.replace('//', '/')", "only doubled separators collapsed"),
    ),
    "os.path.realpath": (("os.path.abspath({a})", "symbolic links not resolved"),),
    "os.path.abspath": (("os.path.normpath({a})", "not made absolute"),),
    "os.path.expanduser": (("{a}", "the home directory not expanded"),),
    "os.path.normcase": (("{a}", "case not normalised"),),
}

# A method -> (replacement method and arguments, what the stand-in leaves out).
_METHODS: dict[str, tuple[tuple[str, str], ...]] = {
    # Whitespace narrowed to spaces only (`strip(' ')`) is left out: it differs from gold only
    # on tabs and newlines, inputs a helper that takes one line or one cell is never given.
    "strip": (("rstrip()", "only the right end stripped"),),
    "splitlines": (("split('\\n')", "split on \\n only"),),
    "casefold": (("lower()", "lower() for casefold()"),),
    "fullmatch": (("match", "matched at the start, not in full"),),
    "search": (("match", "matched at the start only"),),
}

_TWO_ARGUMENTS: dict[str, tuple[str, str]] = {
    "math.isclose": ("{a} == {b}", "exact equality for closeness"),
    "re.fullmatch": ("re.match({a}, {b})", "matched at the start, not in full"),
    "re.search": ("re.match({a}, {b})", "matched at the start only"),
}


def _call_stand_ins(text: str, node: ast.Call) -> Iterator[tuple[str, str]]:
    name = _dotted(node.func)
    if name in _FUNCTIONS and len(node.args) == 1 and not node.keywords:
        arg = node.args[0]
        a = _source(text, arg)
        if a is not None and _repeatable(arg):
            for template, detail in _FUNCTIONS[name]:
                yield template.format(a=a), f"{name}: {detail}"
    if name in _TWO_ARGUMENTS and len(node.args) == 2 and not node.keywords:
        a, b = (_source(text, x) for x in node.args)
        if a is not None and b is not None:
            template, detail = _TWO_ARGUMENTS[name]
            yield template.format(a=a, b=b), f"{name}: {detail}"
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _METHODS and name not in _TWO_ARGUMENTS:
        owner = _source(text, func.value)
        if owner is None:
            return
        args = [_source(text, x) for x in node.args]
        for replacement, detail in _METHODS[func.attr]:
            if "(" in replacement:
                if node.args or node.keywords:
                    continue  # the stand-in fixes its own arguments
                yield f"{owner}.{replacement}", f".{func.attr}(): {detail}"
            elif all(x is not None for x in args) and not node.keywords:
                yield f"{owner}.{replacement}({', '.join(args)})", f".{func.attr}(): {detail}"  # type: ignore[arg-type]
    if node.keywords and not any(k.arg is None for k in node.keywords):
        # One keyword option dropped: the call runs with that option's default.
        for dropped in node.keywords:
            parts = [_source(text, x) for x in node.args]
            parts += [_source(text, k) for k in node.keywords if k is not dropped]
            callee = _source(text, node.func)
            if callee is None or any(p is None for p in parts):
                continue
            yield f"{callee}({', '.join(p for p in parts if p)})", f"{dropped.arg}= dropped"


def _one_of_several(text: str, node: ast.AST) -> Iterator[tuple[ast.AST, str, str]]:
    """`isinstance(x, (A, B))` -> `isinstance(x, A)`; `s.startswith(('a', 'b'))` -> one
    prefix; `x in (a, b, c)` -> the collection without one of them."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[-1], ast.Tuple):
        name = _dotted(node.func) or ""
        if name in ("isinstance", "issubclass") or name.endswith((".startswith", ".endswith")):
            for element in node.args[-1].elts:
                shown = _source(text, element)
                if shown is not None:
                    yield node.args[-1], shown, f"only {shown[:30]} of the tuple handled"
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        collection = node.comparators[0]
        if isinstance(node.ops[0], ast.In | ast.NotIn) and isinstance(
            collection, ast.Tuple | ast.List | ast.Set
        ):
            elts = collection.elts
            if len(elts) >= 2:
                for i, dropped in enumerate(elts):
                    kept = [_source(text, e) for j, e in enumerate(elts) if j != i]
                    if any(k is None for k in kept):
                        continue
                    body = ", ".join(k for k in kept if k)
                    new = {ast.Tuple: f"({body},)", ast.List: f"[{body}]", ast.Set: f"{{{body}}}"}
                    shown = _source(text, dropped) or "?"
                    yield collection, new[type(collection)], f"{shown[:30]} left out of the `in`"


def _list_item_dropped(text: str, node: ast.AST) -> Iterator[tuple[ast.AST, str, str]]:
    """`f(x, subset=["a", "b"])` -> `subset=["a"]` / `["b"]`: an argument that lists several
    constants (names of columns, fields, options) given with one of them left out."""
    if not isinstance(node, ast.Call):
        return
    values = [*node.args, *(k.value for k in node.keywords)]
    for value in values:
        if not isinstance(value, ast.List | ast.Tuple) or len(value.elts) < 2:
            continue
        if not all(isinstance(e, ast.Constant) for e in value.elts):
            continue
        for i, dropped in enumerate(value.elts):
            kept = [_source(text, e) for j, e in enumerate(value.elts) if j != i]
            if any(k is None for k in kept):
                continue
            body = ", ".join(k for k in kept if k)
            new = f"[{body}]" if isinstance(value, ast.List) else f"({body},)"
            shown = _source(text, dropped) or "?"
            yield value, new, f"{shown[:30]} left out of the argument's list"


# How a line that does not parse alone is completed for parsing: (prefix, suffix), first fit
# wins. An argument or item line (`f(y), key=[...],`), a method chain's next link
# (`.apply(...)`), a line that ends in a comment.
_FRAGMENT_WRAPS = (("_(", ")"), ("_", ""), ("_(", "\n)"))


def _fragment(line: str) -> tuple[str, str, str, ast.Module] | None:
    """(completed text, prefix, suffix, tree) for a line that is one piece of a longer statement
    and parses once completed; None when it parses alone or not at all."""
    text = line.strip()
    if not text or not text.isascii():
        return None
    for prefix, suffix in _FRAGMENT_WRAPS:
        completed = prefix + text + suffix
        try:
            return completed, prefix, suffix, ast.parse(completed)
        except SyntaxError:
            continue
    return None


def _within(node: ast.AST, start: int, end: int) -> bool:
    lo, hi = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    line, last = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0)
    return lo is not None and hi is not None and line == last == 1 and start <= lo <= hi <= end


def _fragment_stand_ins(line: str) -> Iterator[tuple[str, str]]:
    """Stand-ins for a line that continues a statement (see the module's docstring)."""
    found = _fragment(line)
    if found is None:
        return
    completed, prefix, suffix, tree = found
    lead = line[: len(line) - len(line.lstrip())]
    end = len(completed) - len(suffix)
    for target, new, detail in _stand_ins(completed, tree):
        if not _within(target, len(prefix), end):
            continue
        mutated = _replace(completed, target, new)
        if mutated is not None:
            yield lead + mutated[len(prefix) : len(mutated) - len(suffix)], detail


def _stand_ins(text: str, tree: ast.Module) -> Iterator[tuple[ast.AST, str, str]]:
    """(node replaced, its replacement, detail) for every narrower stand-in in `tree`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for new, detail in _call_stand_ins(text, node):
                yield node, new, detail
        yield from _one_of_several(text, node)
        yield from _list_item_dropped(text, node)


def _replace(text: str, node: ast.AST, new: str) -> str | None:
    start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if start is None or end is None or node.lineno != 1 or node.end_lineno != 1:  # type: ignore[attr-defined]
        return None
    return text[:start] + new + text[end:]


def narrower(
    line: str, parse: Callable[[str], tuple[str, str, ast.Module] | None]
) -> Iterator[tuple[str, str]]:
    """(mutated line, detail) for each narrower stand-in in `line`; `parse` gives the statement,
    what precedes it and its tree (the mutation module's single-line parser)."""
    parsed = parse(line)
    if parsed is None:
        yield from _fragment_stand_ins(line)
        return
    text, lead, tree = parsed
    for target, new, detail in _stand_ins(text, tree):
        mutated = _replace(text, target, new)
        if mutated is not None:
            yield lead + mutated, detail
