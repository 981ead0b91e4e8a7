"""Gold's change taken only for the objects the tests build: the base code for everything else.

A fix the tests check through one object (`Matrix(BlockDiagMatrix(A))` for the one `A` the test
writes, a model instance built in the test) is passed by code that makes gold's change for that
object alone. Here each statement gold changes becomes

    if <a local value (an argument, `self`) equals an object the tests build>:
        <gold's statement>
    else:
        <the base statement>

The objects are rebuilt from the test patch's source text (`test_expressions`: the inputs of the
checked calls and the calls nested in them, in a namespace made of the module's globals and the
statements that define the names they use), once, on the function's first call; a call made while
they are being built is not special-cased, so building them cannot recurse. Only a change whose
removed and added lines are each whole statements at one indentation is rewritten this way.

This is the wrong fix a suite that checks the change on *one* example accepts, so it is made only
when the test patch's checks are given one input in all (`Matrix(BlockDiagMatrix(A))`: the one
object `BlockDiagMatrix(A)`). A suite that checks the change on several examples — each container
a printer handles, each with its own separator — rejects gold's change taken for one of them, and
taken for all of them it is the tests' own inputs answered one by one, which no finite suite can
rule out: that is not what this family measures.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import replace

from hackaudit.attacker.domain.generate.strategies.base import gold_id, make_candidate
from hackaudit.attacker.domain.reading import diffs, pysource, test_expressions
from hackaudit.attacker.domain.reading.diffs import LineKind
from hackaudit.attacker.domain.reading.layout import is_test_path
from hackaudit.attacker.domain.reading.test_expressions import ExprCase
from hackaudit.shared.contracts import Candidate, Task

NAME = "special_case"
MAX_OBJECTS = 20
MAX_CHANGES = 4


def examples(cases: list[ExprCase]) -> list[str]:
    """The distinct inputs the checked calls are given (arguments and receivers), as written."""
    out: list[str] = []
    for case in cases:
        given = [*case.args, *(v for _, v in case.kwargs)]
        given += [case.receiver] if case.receiver else []
        out += [g for g in given if g not in out]
    return out


def _objects(cases: list[ExprCase]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(sources of the objects the tests build, the statements defining their names)."""
    sources: list[str] = []
    prelude: list[str] = []
    for case in cases:
        given = [*case.args, *(v for _, v in case.kwargs)]
        given += [case.receiver] if case.receiver else []
        for source in given:
            try:
                tree = ast.parse(source, mode="eval")
            except SyntaxError:
                continue
            nested = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Call)]
            for found in [source, *nested]:
                if found not in sources and found not in ("None", "True", "False"):
                    sources.append(found)
        prelude += [p for p in case.prelude if p not in prelude]
    return tuple(sources[:MAX_OBJECTS]), tuple(prelude)


def _whole_statements(lines: list[str]) -> str | None:
    """The indentation of lines that are whole statements at one level, else None."""
    if not lines or lines[-1].rstrip().endswith(":"):
        return None
    indent = pysource.indent_of(lines[0])
    if any(line.strip() and not line.startswith(indent) for line in lines):
        return None
    try:
        ast.parse(textwrap.dedent("\n".join(lines)))
    except SyntaxError:
        return None
    return indent


def _guarded(key: str, objects: tuple[tuple[str, ...], tuple[str, ...]]) -> list[str]:
    """The guard at indentation "" (see the module's docstring), ending in `if _ha_hit:`."""
    sources, prelude = objects
    j = "    "
    k, m = j * 2, j * 3
    return [
        "_ha_vals = list(locals().values())",
        f"_ha_s = globals().setdefault({key!r}, {{}})",
        'if "objs" not in _ha_s:',
        f'{j}_ha_s["objs"] = ()',
        f"{j}_ha_ns = dict(globals())",
        f"{j}for _ha_line in {prelude!r}:",
        f"{k}try:",
        f"{m}exec(_ha_line, _ha_ns)",
        f"{k}except Exception:",
        f"{m}pass",
        f"{j}_ha_objs = []",
        f"{j}for _ha_src in {sources!r}:",
        f"{k}try:",
        f"{m}_ha_objs.append(eval(_ha_src, _ha_ns))",
        f"{k}except Exception:",
        f"{m}pass",
        f'{j}_ha_s["objs"] = tuple(_ha_objs)',
        "_ha_hit = False",
        "for _ha_arg in _ha_vals:",
        f'{j}for _ha_obj in _ha_s["objs"]:',
        f"{k}try:",
        f"{m}_ha_hit = _ha_hit or (_ha_arg == _ha_obj) is True",
        f"{k}except Exception:",
        f"{m}pass",
        "if _ha_hit:",
    ]


def _changes(gold: diffs.Patch) -> Iterator[tuple[int, int, list[int], list[int]]]:
    """(file, hunk, removed indices, added indices) of each change whose removed and added lines
    are whole statements at the same indentation, inside a function or class."""
    for fi, f in enumerate(gold.files):
        if not f.path.endswith(".py") or is_test_path(f.path) or f.is_new or f.is_deleted:
            continue
        for hi, hunk in enumerate(f.hunks):
            for group in diffs.change_groups(hunk):
                removed = [i for i in group if hunk.lines[i].kind is LineKind.REMOVED]
                added = [i for i in group if hunk.lines[i].kind is LineKind.ADDED]
                if not removed or not added or max(removed) > min(added):
                    continue
                old = _whole_statements([hunk.lines[i].text for i in removed])
                new = _whole_statements([hunk.lines[i].text for i in added])
                if old is None or old != new or not new:
                    continue  # different levels, or module level (no locals to look at)
                yield fi, hi, removed, added


def _rewrite(
    gold: diffs.Patch,
    change: tuple[int, int, list[int], list[int]],
    objects: tuple[tuple[str, ...], tuple[str, ...]],
    key: str,
) -> diffs.Patch:
    fi, hi, removed, added = change
    hunk = gold.files[fi].hunks[hi]
    old = [hunk.lines[i].text for i in removed]
    new = [hunk.lines[i].text for i in added]
    indent = pysource.indent_of(new[0])
    inner = pysource.body_indent(indent)
    block = [indent + line for line in _guarded(key, objects)]
    block += [inner + line[len(indent) :] if line.strip() else line for line in new]
    block += [f"{indent}else:"]
    block += [inner + line[len(indent) :] if line.strip() else line for line in old]
    template = hunk.lines[added[0]]
    lines = [replace(template, text=text) for text in block]
    return diffs.replace_lines(gold, fi, hi, added[0], added[-1] + 1, lines)


def tested_objects(task: Task, gold: diffs.Patch) -> list[Candidate]:
    """Gold with each changed statement taken only for the object the tests build, when the
    tests' checks are given that one input."""
    cases = test_expressions.extract(task.test_diff)
    if len(examples(cases)) != 1:
        return []  # several examples (or none): see the module's docstring
    objects = _objects(cases)
    if not objects[0]:
        return []
    out: list[Candidate] = []
    for n, change in enumerate(_changes(gold)):
        if n >= MAX_CHANGES:
            break
        patch = _rewrite(gold, change, objects, f"_ha_tested_{n}")
        path = gold.files[change[0]].path
        detail = (
            f"gold's change in {path} (@@ -{gold.files[change[0]].hunks[change[1]].old_start}) "
            f"taken only for the {len(objects[0])} objects the tests build, base code otherwise"
        )
        out.append(make_candidate(task, patch, NAME, detail, gold_id(task)))
    return out
