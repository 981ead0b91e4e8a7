"""A graded test copied with one literal changed: the regression test a replay difference asks for.

The attacker replays the graded tests with one literal of a checked call replaced by a value
beside it (`self._runtest([".", ...], code=0)` with `"./."` for `"."`). When gold runs through
that variant and an exploit fails it, the plainest test that blocks the exploit is the test
itself on that value: the same function, renamed, with that one literal changed. Its check is
the test's own, so nothing about gold's output is guessed; the gold gate still runs it on gold.

Only tests the test patch shows whole can be copied (their source is in its added or context
lines); the copy loses its docstring (a unittest report would name the test by it).
"""

from __future__ import annotations

import ast
import re
import textwrap

from hackaudit.repairer.domain import test_patch as tp
from hackaudit.shared.contracts import ProbeDifference

_NOTE = re.compile(r"^(?P<expr>.*?)  \[literal (?P<change>.+)\]$", re.S)
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")


def literal_change(difference: ProbeDifference) -> tuple[str, object, object] | None:
    """(the expression's head, the old literal, the new one) of a replayed variant on which gold
    runs through and the candidate does not behave alike, else None."""
    if difference.origin != "replay" or not difference.gold.startswith("variant returns"):
        return None
    if difference.candidate == difference.gold:
        return None
    match = _NOTE.match(difference.expression)
    if match is None:
        return None
    try:
        module = ast.parse(f"({match['change']})".replace(" -> ", ", ", 1), mode="eval")
        old, new = ast.literal_eval(module.body)
    except (SyntaxError, ValueError, TypeError):
        return None
    return match["expr"].removesuffix("..."), old, new


def test_source(patch: tp.TestPatch, path: str, function: str) -> str | None:
    """The source of test `function` in `path` at column 0, when the patch shows all of it."""
    for f in patch.files:
        if f.path != path:
            continue
        for hunk in f.hunks:
            side = [ln[1:] for ln in hunk.lines if ln[:1] in (" ", "+")]
            for pos, text in enumerate(side):
                match = _DEF.match(text)
                if not match or match.group(2) != function:
                    continue
                level = len(match.group(1))
                body = [text]
                for line in side[pos + 1 :]:
                    if line.strip() and len(line) - len(line.lstrip()) <= level:
                        break
                    body.append(line)
                else:
                    if not hunk.whole_new_file:
                        return None  # the hunk ends inside the function
                source = textwrap.dedent("\n".join(body)).rstrip() + "\n"
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


def varied_copy(source: str, head: str, old: object, new: object, name: str) -> str | None:
    """`source` (one test function) renamed to `name`, without its docstring, with the first
    `old` literal inside a call whose text starts like `head` replaced by `new`."""
    tree = ast.parse(source)
    function = tree.body[0] if tree.body else None
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    lines = source.split("\n")
    want = re.sub(r"\s+", "", head)
    site: ast.Constant | None = None
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        text = re.sub(r"\s+", "", ast.get_source_segment(source, node) or "")
        if not text or not (text.startswith(want) or want.startswith(text)):
            continue
        for sub in ast.walk(node):
            if _same(sub, old) and isinstance(sub, ast.Constant):
                site = sub
                break
        if site is not None:
            break
    if site is None or site.end_col_offset is None or site.lineno != site.end_lineno:
        return None
    row = lines[site.lineno - 1]
    lines[site.lineno - 1] = row[: site.col_offset] + repr(new) + row[site.end_col_offset :]
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
    copied = "\n".join(lines)
    try:
        ast.parse(copied)
    except SyntaxError:
        return None
    return copied
