"""Mutants beyond gold's own lines: the lines of the functions gold changes that its tests run.

A small gold patch gives few mutants of its own lines, and a budget spent on nothing says nothing
of the tests. Mutation testing's rule is to mutate what the tests execute: each line of a
function gold changes that the FAIL_TO_PASS tests execute on gold (gold's own lines apart) is
mutated with `mutation`'s operators, and the mutant applied on top of gold is a wrong patch the
tests may accept — the fix is there, and the code around it is broken.

The diff carries only hunk context, so this works from gold's coverage run of the graded tests
(`coverage_map.invocation`: the files gold changes, whole, with their text): gold's changed
functions are found in that text (AST), the lines its tests executed come from the same run,
and the base file is that text with gold's hunks reversed. Each candidate is a diff from the
base: gold's changes plus the mutation. Lines nearest gold's change come first (the code the fix
feeds or is fed by), one mutant of every line before a second of any.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from hackaudit.attacker.domain.generate.strategies import mutation
from hackaudit.attacker.domain.generate.strategies.base import gold_id, make_candidate, unique
from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.shared.anatomy import FileDiff, LineKind, Patch, is_test_path
from hackaudit.shared.contracts import (
    Candidate,
    CoverageResult,
    RunResult,
    RunStatus,
    Task,
)

NAME = "mutation_beyond_gold"
PER_LINE = 2  # mutants per line and operator
LIMIT = 60
MAX_LINES = 40  # the executed lines nearest gold's that are mutated

_PARAMS = re.compile(r"\[.*\]$")


@dataclass(frozen=True)
class Function:
    """A function of a file: its qualified name and its lines (1-based, decorators included)."""

    name: str
    first: int
    last: int

    def holds(self, line: int) -> bool:
        return self.first <= line <= self.last


def _functions(tree: ast.AST, prefix: str = "") -> Iterable[Function]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                yield Function(name, first, node.end_lineno or node.lineno)
            yield from _functions(node, f"{name}.")
        else:
            yield from _functions(node, prefix)


def changed_functions(source: str, changed: Iterable[int]) -> tuple[Function, ...]:
    """The innermost function holding each changed line, in file order (none: unparsable)."""
    try:
        every = list(_functions(ast.parse(source)))
    except (SyntaxError, ValueError):
        return ()
    found: dict[Function, None] = {}
    for line in sorted(set(changed)):
        holding = [f for f in every if f.holds(line)]
        if holding:
            found.setdefault(min(holding, key=lambda f: f.last - f.first), None)
    return tuple(sorted(found, key=lambda f: f.first))


def gold_lines(file: FileDiff) -> tuple[int, ...]:
    """The new-side numbers of the lines gold adds to a file."""
    return tuple(
        n.new
        for hunk in file.hunks
        for n in hunk.numbered()
        if n.line.kind is LineKind.ADDED and n.new is not None
    )


def base_text(source: str, file: FileDiff) -> str | None:
    """The file before gold: its text after gold (`source`) with gold's hunks reversed; None
    when a hunk's new side is not where its header puts it."""
    lines = source.split("\n")
    for hunk in reversed(file.hunks):
        new = hunk.new_side()
        start = (hunk.new_start if hunk.new_start is not None else hunk.old_start) - 1
        if not new:
            start += 1  # an empty new side is numbered by the line before it
        if start < 0 or lines[start : start + len(new)] != new:
            return None
        lines[start : start + len(new)] = hunk.old_side()
    return "\n".join(lines)


def _test_name(test: str) -> str:
    """A test's function name, as the last part of an id or of a coverage context."""
    name = _PARAMS.sub("", test.split(" (")[0])
    return re.split(r"::|\.", name)[-1]


def executed_lines(measured: CoverageResult, path: str, fail_to_pass: Sequence[str]) -> set[int]:
    """The lines of `path` the FAIL_TO_PASS tests executed. When the run names test functions,
    only lines under those of FAIL_TO_PASS count (under any test, when no name matches one)."""
    found = measured.files.get(path)
    if found is None:
        return set()
    if not measured.per_test:
        return set(found.executed)
    wanted = {_test_name(t) for t in fail_to_pass}
    graded = {i for i, t in enumerate(measured.tests) if t and _test_name(t) in wanted}
    if not graded:
        graded = {i for i, t in enumerate(measured.tests) if t}
    return {n for n, tests in found.executed.items() if graded & set(tests)}


def _distance(line: int, gold: Sequence[int]) -> int:
    return min((abs(line - g) for g in gold), default=0)


def target_lines(
    functions: Sequence[Function], gold: Sequence[int], executed: Iterable[int]
) -> list[int]:
    """The executed lines of the functions other than gold's own, nearest gold's first."""
    own = set(gold)
    lines = {n for n in executed if n not in own and any(f.holds(n) for f in functions)}
    return sorted(lines, key=lambda n: (_distance(n, gold), n))


def _innermost(functions: Sequence[Function], line: int) -> Function:
    return min((f for f in functions if f.holds(line)), key=lambda f: f.last - f.first)


@dataclass(frozen=True)
class _File:
    """One source file gold changes, as gold leaves it and as the base has it."""

    index: int  # in gold's patch
    diff: FileDiff
    after: list[str]  # gold's text, by line
    before: str


def _modifies_source(f: FileDiff) -> bool:
    """Whether gold modifies an existing Python source file (no creation, rename or deletion)."""
    path = f.new_path
    return (
        path is not None and f.old_path == path and path.endswith(".py") and not is_test_path(path)
    )


def _files(gold: Patch, measured: CoverageResult) -> list[_File]:
    out: list[_File] = []
    for index, f in enumerate(gold.files):
        if not _modifies_source(f):
            continue
        source = measured.sources.get(f.path)
        before = None if source is None else base_text(source, f)
        if source is not None and before is not None:
            out.append(_File(index, f, source.split("\n"), before))
    return out


def _mutants_of_line(
    task: Task, gold: Patch, file: _File, fn: Function, line: int
) -> list[Candidate]:
    """Mutants of one line (1-based) of `fn`: one of each operator before a second of any."""
    body = file.after[fn.first - 1 : fn.last]
    index = line - fn.first
    parent = gold_id(task)
    path = file.diff.path
    by_operator: list[list[Candidate]] = []
    for operator in mutation.OPERATORS:
        found: list[Candidate] = []
        for m in mutation.line_mutants(body, index, operator)[:PER_LINE]:
            after = [*file.after[: line - 1], m.text, *file.after[line:]]
            text = "\n".join(after)
            if not pysource.parses(text):
                continue
            files = list(gold.files)
            files[file.index] = replace(
                diffs.between(path, file.before, text), extended=file.diff.extended
            )
            detail = f"{operator}: {m.detail} in {path} line {line} ({fn.name})"
            patch = Patch(files=tuple(files))
            found.append(make_candidate(task, patch, NAME, detail, parent))
        by_operator.append(found)
    return mutation.interleave(by_operator)


def mutants(task: Task, measured: CoverageResult, limit: int = LIMIT) -> list[Candidate]:
    """Mutants of the lines the FAIL_TO_PASS tests execute in the functions gold changes, gold's
    own lines apart, each on top of gold (a diff from the base); none without the files' text."""
    try:
        gold = diffs.read(task.gold_diff)
    except diffs.DiffError:
        return []
    targets: list[tuple[int, int, _File, Function, int]] = []
    for file in _files(gold, measured):
        own = gold_lines(file.diff)
        functions = changed_functions("\n".join(file.after), own)
        executed = executed_lines(measured, file.diff.path, task.fail_to_pass)
        for line in target_lines(functions, own, executed):
            fn = _innermost(functions, line)
            targets.append((_distance(line, own), file.index, file, fn, line))
    targets.sort(key=lambda t: (t[0], t[1], t[4]))
    per_line = [
        _mutants_of_line(task, gold, f, fn, line) for _, _, f, fn, line in targets[:MAX_LINES]
    ]
    gold_hash = Candidate(instance_id=task.instance_id, diff=task.patch).content_hash
    found = [c for c in mutation.interleave(per_line) if c.content_hash != gold_hash]
    return unique(found, limit)


# --- the coverage run they come from -----------------------------------------------------------


def source_files(task: Task) -> tuple[str, ...]:
    """The Python source files gold modifies (not creates, renames or deletes), tests apart."""
    try:
        gold = diffs.read(task.gold_diff)
    except diffs.DiffError:
        return ()
    return tuple(f.path for f in gold.files if _modifies_source(f))


def measured(runs: Sequence[RunResult]) -> CoverageResult | None:
    """What gold's run measured, when it returned the files' text."""
    result = runs[0] if runs else None
    if result is None or result.status is not RunStatus.COMPLETED or result.coverage is None:
        return None
    return result.coverage if result.coverage.sources else None


def from_runs(task: Task, runs: Sequence[RunResult]) -> list[Candidate]:
    """The mutants from gold's kept coverage run (none when it returned no text)."""
    found = measured(runs)
    return [] if found is None else mutants(task, found)


def why_none(runs: Sequence[RunResult]) -> str:
    """Why gold's coverage run gave no mutant beyond gold's lines."""
    result = runs[0] if runs else None
    if result is None:
        return "no coverage run of gold"
    if result.status is not RunStatus.COMPLETED or result.coverage is None:
        return f"gold's coverage run {result.status.value}: {result.reason or 'no result'}"
    if not result.coverage.sources:
        return "gold's coverage run returned no file text"
    return "no line of the functions gold changes, beyond its own, runs under FAIL_TO_PASS"
