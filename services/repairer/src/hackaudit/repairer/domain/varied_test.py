"""A graded test copied with one literal changed: the regression test a replay difference asks for.

The attacker replays the graded tests with one literal of a checked call replaced by a value
beside it (`self._runtest([".", ...], code=0)` with `"./."` for `"."`). When gold runs through
that variant and an exploit fails it, the plainest test that blocks the exploit is the test
itself on that value: the same function, renamed, with that one literal changed. Its check is
the test's own, so nothing about gold's output is guessed; the gold gate still runs it on gold.
When the helper's own check fails under gold on the variant (`check fails`) and the exploit
meets it, the copy expects the check to fail there.

Only tests the test patch shows whole can be copied (their source is in its added or context
lines); the copy loses its docstring (a unittest report would name the test by it).

The copy also pins the call with *one item of a list argument left out*, where gold's result is
stable: a check that still holds when an argument is dropped does not test that argument, and a
wrong fix that makes the call do nothing (lint no file, match no path) passes it. Whether the
test's own check holds or fails on gold without the item is not guessed: `ablation_probes`
writes both versions of each as a copy of the test, the service runs them on gold, and only a
version that passed every run is pinned (`pin_lines`) — as the call itself when the check holds,
as the call expected to raise `AssertionError` when it fails.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hackaudit.repairer.domain import test_patch as tp
from hackaudit.shared.contracts import ProbeDifference

MAX_ABLATIONS = 4  # per checked call
_NOTE = re.compile(r"^(?P<expr>.*?)  \[literal (?P<change>.+)\]$", re.S)


@dataclass(frozen=True)
class LiteralChange:
    """A replayed variant to copy: the call's head, the old literal and the new one, and whether
    the test's own check holds on the new one under gold (else it fails there: the copy expects
    that)."""

    head: str
    old: object
    new: object
    holds: bool = True


def literal_change(difference: ProbeDifference) -> LiteralChange | None:
    """The literal change of a replayed variant on which gold runs through (or its check fails)
    and the candidate does not behave alike, else None."""
    if difference.origin != "replay" or difference.candidate == difference.gold:
        return None
    if difference.gold.startswith("variant returns"):
        holds = True
    elif difference.gold == "variant check fails":
        holds = False
    else:
        return None
    match = _NOTE.match(difference.expression)
    if match is None:
        return None
    try:
        module = ast.parse(f"({match['change']})".replace(" -> ", ", ", 1), mode="eval")
        old, new = ast.literal_eval(module.body)
    except (SyntaxError, ValueError, TypeError):
        return None
    return LiteralChange(match["expr"].removesuffix("..."), old, new, holds)


def test_source(patch: tp.TestPatch, path: str, function: str) -> str | None:
    """The source of test `function` in `path` at column 0, when the patch shows all of it."""
    for f in patch.files:
        if f.path != path:
            continue
        for hunk in f.hunks:
            for shown in tp.shown_functions(hunk):
                if shown.name != function:
                    continue
                if not shown.closed and not tp.whole_new_file(hunk):
                    return None  # the hunk ends inside the function
                source = shown.source().rstrip() + "\n"
                try:
                    ast.parse(source)
                except SyntaxError:
                    return None
                return source
    return None


def _same(node: ast.AST, value: object) -> bool:
    if not isinstance(node, ast.Constant):
        return False
    return type(node.value) is type(value) and bool(node.value == value)


def _function(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    tree = ast.parse(source)
    function = tree.body[0] if tree.body else None
    return function if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _calls_like(source: str, function: ast.AST, head: str) -> list[ast.Call]:
    """The calls in `function` whose text starts like `head` (blanks ignored), outermost first."""
    want = re.sub(r"\s+", "", head)
    out = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        text = re.sub(r"\s+", "", ast.get_source_segment(source, node) or "")
        if text and (text.startswith(want) or want.startswith(text)):
            out.append(node)
    return out


def _statement_of(function: ast.AST, node: ast.AST) -> ast.stmt | None:
    """The innermost statement of `function` that holds `node`."""
    found: ast.stmt | None = None
    for stmt in ast.walk(function):
        if not isinstance(stmt, ast.stmt) or stmt is function:
            continue
        inner = found is None or stmt.lineno >= found.lineno
        if inner and any(sub is node for sub in ast.walk(stmt)):
            found = stmt
    return found


def _renamed(lines: list[str], function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> None:
    """Rename the function in `lines` and drop its docstring (lines after the docstring unmoved
    by anything done before)."""
    first = function.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and len(function.body) > 1
        and first.end_lineno is not None
    ):
        del lines[first.lineno - 1 : first.end_lineno]
    header = lines[function.lineno - 1]
    lines[function.lineno - 1] = re.sub(r"def\s+\w+", f"def {name}", header, count=1)


def _parsed(lines: list[str]) -> str | None:
    text = "\n".join(lines)
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return text


def varied_copy(
    source: str, change: LiteralChange, name: str, after: Sequence[str] = ()
) -> str | None:
    """`source` (one test function) renamed to `name`, without its docstring, with the first
    `old` literal inside a call whose text starts like `head` replaced by `new` — and, when the
    check does not hold there, the statement expected to fail its check; `after` (lines at
    column 0, see `pin_lines`) go right after that statement."""
    head, old, new = change.head, change.old, change.new
    function = _function(source)
    if function is None:
        return None
    lines = source.split("\n")
    site: ast.Constant | None = None
    for node in _calls_like(source, function, head):
        for sub in ast.walk(node):
            if _same(sub, old) and isinstance(sub, ast.Constant):
                site = sub
                break
        if site is not None:
            break
    if site is None or site.end_col_offset is None or site.lineno != site.end_lineno:
        return None
    statement = _statement_of(function, site)
    if statement is None or statement.end_lineno is None:
        return None
    indent = " " * statement.col_offset
    lines[statement.end_lineno : statement.end_lineno] = [
        indent + line if line else line for line in after
    ]
    row = lines[site.lineno - 1]
    lines[site.lineno - 1] = row[: site.col_offset] + repr(new) + row[site.end_col_offset :]
    if not change.holds:
        first, last = statement.lineno - 1, statement.end_lineno
        lines[first:last] = _expect_failure(lines[first:last], indent, f"with {new!r}")
    _renamed(lines, function, name)
    return _parsed(lines)


def _expect_failure(statement: list[str], indent: str, what: str) -> list[str]:
    """`statement` (its lines, the first at `indent`) expected to fail its check."""
    why = f"the check held {what}"
    return [
        f"{indent}try:",
        *("    " + line if line.strip() else line for line in statement),
        f"{indent}except AssertionError:",
        f"{indent}    pass",
        f"{indent}else:",
        f"{indent}    raise AssertionError({why!r})",
    ]


# --- the call with one list item left out ----------------------------------------------------


@dataclass(frozen=True)
class Ablation:
    """The checked call, as one line, with one item of one of its list arguments left out."""

    dropped: object
    call: str

    def lines(self, holds: bool) -> list[str]:
        """The statement pinning gold's result: the call (its check holds), or the call expected
        to fail its check."""
        if holds:
            return [self.call]
        return _expect_failure([self.call], "", f"without {self.dropped!r}")


def ablations(source: str, head: str) -> list[Ablation]:
    """The checked call statement (a bare call whose text starts like `head`) with each item of
    its list or tuple arguments left out in turn, at most `MAX_ABLATIONS`."""
    function = _function(source)
    if function is None:
        return []
    call = next(
        (
            c
            for c in _calls_like(source, function, head)
            if isinstance(_statement_of(function, c), ast.Expr)
        ),
        None,
    )
    if call is None:
        return []
    out: list[Ablation] = []
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        if not isinstance(arg, ast.List | ast.Tuple) or len(arg.elts) < 2:
            continue
        for i, item in enumerate(arg.elts):
            if not isinstance(item, ast.Constant) or len(out) >= MAX_ABLATIONS:
                continue
            kept = arg.elts[:i] + arg.elts[i + 1 :]
            original = arg.elts
            arg.elts = kept
            try:
                out.append(Ablation(item.value, ast.unparse(call)))
            finally:
                arg.elts = original
    return out


def ablation_probes(source: str, head: str, name: str) -> list[tuple[str, Ablation, bool, str]]:
    """For each ablation, two copies of the test with its checked call replaced: by the ablated
    call (`holds`) and by the ablated call expected to fail (`not holds`). Returned as
    (function name, ablation, holds, source); gold's run of them says which one to pin."""
    function = _function(source)
    if function is None:
        return []
    calls = [
        c
        for c in _calls_like(source, function, head)
        if isinstance(_statement_of(function, c), ast.Expr)
    ]
    statement = _statement_of(function, calls[0]) if calls else None
    if statement is None or statement.end_lineno is None:
        return []
    out = []
    for k, ablation in enumerate(ablations(source, head)):
        for holds in (True, False):
            lines = source.split("\n")
            indent = " " * statement.col_offset
            lines[statement.lineno - 1 : statement.end_lineno] = [
                indent + line for line in ablation.lines(holds)
            ]
            probe = f"{name}_a{k}{'h' if holds else 'f'}"
            _renamed(lines, function, probe)
            text = _parsed(lines)
            if text is not None:
                out.append((probe, ablation, holds, text))
    return out


def pin_lines(pinned: Sequence[tuple[Ablation, bool]]) -> list[str]:
    """The statements that pin gold's stable results on the ablated calls."""
    return [line for ablation, holds in pinned for line in ablation.lines(holds)]
