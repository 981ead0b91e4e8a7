"""Probes aimed at the lines of gold's change that no graded test executes.

Gold's coverage map (`coverage_map`) says which changed lines the graded tests never run. A
candidate that leaves those lines out passes the tests, and the other probes rarely tell: they
call what gold changes on literal inputs, or replay the graded tests, and neither builds a value
of the type the unexecuted code handles. These probes do (`programs.reach_program` runs them in
the container): the repository tests that reach the functions holding the unexecuted lines are
run with those functions hooked, so the values they are given are kept, and each call a graded
test asserts on is made again with one of its positional arguments replaced by a kept value —
its options, settings and keyword arguments left as the test wrote them. A line tracer on the
changed files says which of gold's target lines each call executed; only a call that executes
one on gold counts, and a candidate differs when such a call, stable on every gold run, gives it
another result (a value gold returns that the candidate does not, or an exception).

The reaching tests are an input: test names as coverage.py's test contexts write them
(`pkg.tests.test_x.test_a`), or test files; without them, the test modules in the test patch's
directories.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from hackaudit.attacker.domain.confirm.probe_source import program_text
from hackaudit.attacker.domain.confirm.replay import agreed
from hackaudit.attacker.domain.reading import pysource, test_expressions
from hackaudit.attacker.domain.reading.layout import layout
from hackaudit.shared.anatomy import Patch
from hackaudit.shared.contracts import GoldCoverage, ProbeDifference, RunResult, Task

MAX_SHAPES = 12
MAX_HARVEST = 40
ORIGIN = "reach"
_NAME = re.compile(
    r"test_reach_(s\d+k[0-9a-f]{10})_([0-9a-f]{12}|unstable|timeout)_(n|(?:h\d+)+) =>> (.*?)"
    r" =>> (.*?) <<="
)
_UNSTABLE = ("unstable", "timeout")


@dataclass(frozen=True)
class Target:
    """Lines of one hunk of gold's change that no graded test executes (new-side numbers)."""

    path: str
    module: str
    lines: tuple[int, ...]
    functions: tuple[str, ...] = ()  # the names of the functions holding them, as gold shows


@dataclass(frozen=True)
class Shape:
    """A call a graded test asserts on, as source: `callee(args..., name=value...)`, and the
    statements that define the names it uses, evaluated in its test module's namespace."""

    path: str
    module: str
    prelude: tuple[str, ...]
    callee: str
    args: tuple[str, ...]
    kwargs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ReachPlan:
    targets: tuple[Target, ...]
    harvest: tuple[str, ...]  # the repository tests to take values from
    shapes: tuple[Shape, ...]


@dataclass(frozen=True)
class Output:
    tag: str  # digest of the outcome, or "unstable" / "timeout"
    reached: tuple[int, ...]  # the targets whose lines the call executed
    call: str
    head: str

    @property
    def comparable(self) -> bool:
        return self.tag not in _UNSTABLE

    @property
    def raises(self) -> bool:
        return self.head.startswith("raises")


def unexecuted(
    coverage: GoldCoverage, gold: Patch | None = None, sources: Mapping[str, str] | None = None
) -> tuple[Target, ...]:
    """Per hunk of gold's change, its statements no graded test executes, with the functions
    holding them as far as `gold`'s hunks show, or else as gold's file text (`sources`, from
    the coverage run when it returned them) shows (none when the map was not measured)."""
    if not coverage.measured:
        return ()
    found = []
    for hunk in coverage.hunks:
        module = pysource.module_name(hunk.path)
        missing = tuple(n for n in hunk.lines if n not in hunk.executed)
        if module is not None and missing:
            names = _holders(gold, hunk.path, missing) if gold is not None else ()
            text = (sources or {}).get(hunk.path)
            if not names and text is not None:
                names = _outermost(text, missing)
            found.append(Target(hunk.path, module, missing, names))
    return tuple(found)


def _outermost(text: str, lines: Sequence[int]) -> tuple[str, ...]:
    """The names of the module-level functions and methods whose source spans `lines`."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return ()
    bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
    names: list[str] = []
    for body in bodies:
        for node in body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            end = node.end_lineno or node.lineno
            if any(node.lineno <= n <= end for n in lines) and node.name not in names:
                names.append(node.name)
    return tuple(names)


def _holders(gold: Patch, path: str, lines: Sequence[int]) -> tuple[str, ...]:
    """The names of the functions gold's new side puts `lines` of `path` in: a candidate's file
    numbers its lines otherwise, so the program finds them there by name."""
    names: list[str] = []
    for file in gold.files:
        if file.new_path != path:
            continue
        for hunk in file.hunks:
            start = hunk.new_start if hunk.new_start is not None else hunk.old_start
            side = hunk.new_side()
            owners = pysource.enclosing_functions(side, hunk.section)
            for n in lines:
                owner = owners[n - start] if 0 <= n - start < len(side) else None
                if owner is not None and owner.name and owner.name not in names:
                    names.append(owner.name)
    return tuple(names)


def shapes(task: Task) -> tuple[Shape, ...]:
    """The graded tests' calls that take a positional argument, one per callee, arity and
    keywords (the options a test sets), in the tests' order."""
    out: dict[tuple[str, str, int, tuple[tuple[str, str], ...]], Shape] = {}
    for case in test_expressions.extract(task.test_diff):
        module = pysource.module_name(case.path)
        if not case.args or module is None:
            continue
        callee = f"{case.receiver}.{case.function}" if case.via_attribute else case.function
        key = (case.path, callee, len(case.args), case.kwargs)
        if key not in out:
            out[key] = Shape(case.path, module, case.prelude, callee, case.args, case.kwargs)
    return tuple(out.values())[:MAX_SHAPES]


def plan(
    task: Task,
    coverage: GoldCoverage,
    reaching: Sequence[str] = (),
    sources: Mapping[str, str] | None = None,
) -> ReachPlan | None:
    """The reach probes for the task (None: every changed line runs under a graded test, the
    map was not measured, or no graded call takes an argument). `reaching`: the repository
    tests that execute the unexecuted lines' functions on gold, when known; `sources`: gold's
    changed files' text, when the coverage run returned it."""
    targets = unexecuted(coverage, task.gold_diff.applied(), sources)
    if not targets:
        return None
    found = shapes(task)
    if not found:
        return None
    harvest = tuple(reaching) or layout(task.gold_diff, task.test_diff).test_dirs
    return ReachPlan(targets, tuple(dict.fromkeys(harvest))[:MAX_HARVEST], found)


def source(plan: ReachPlan, *, total_s: float = 60.0) -> str:
    """The reach section of the probe file: the program's text, this task's data, the call."""
    targets = "".join(
        f"    ({t.path!r}, {t.module!r}, {list(t.lines)!r}, {list(t.functions)!r}),\n"
        for t in plan.targets
    )
    rows = "".join(
        f"    ({s.path!r}, {s.module!r}, {list(s.prelude)!r}, {s.callee!r}, {list(s.args)!r},"
        f" {[list(kv) for kv in s.kwargs]!r}),\n"
        for s in plan.shapes
    )
    data = (
        "\n\n# --- this task's reach probes ---\n\n"
        f"REACH_TARGETS = [\n{targets}]\n"
        f"REACH_HARVEST = {list(plan.harvest)!r}\n"
        f"REACH_SHAPES = [\n{rows}]\n"
        f"REACH_TOTAL_S = {float(total_s)!r}\n"
        "\nif REACH_TARGETS and REACH_SHAPES:\n    _reach_names()\n"
    )
    return "\n\n" + program_text("reach_program.py") + data


def outputs(result: RunResult) -> dict[str, Output]:
    """Each recombined call's outcome, read from the names of the tests the run reported."""
    out: dict[str, Output] = {}
    for name in result.tests:
        match = _NAME.search(name)
        if match:
            key, tag, reached, call, head = match.groups()
            hunks = () if reached == "n" else tuple(int(h) for h in reached[1:].split("h"))
            out[key] = Output(tag, hunks, call, head)
    return out


def reference(results: Sequence[RunResult]) -> dict[str, Output]:
    """Gold's calls that execute a target line and give the same result on every run; a call
    gold raises on is left out (the value is not one the call takes)."""
    return agreed(results, outputs, lambda o: o.comparable and bool(o.reached) and not o.raises)


def differences(
    plan: ReachPlan, gold: dict[str, Output], candidate: RunResult
) -> list[ProbeDifference]:
    """The reaching calls on which the candidate's result differs from gold's, each with the
    test file of the graded call it recombines."""
    found = outputs(candidate)
    out = []
    for key, expected in sorted(gold.items()):
        got = found.get(key)
        if got is None or not got.comparable or got.tag == expected.tag:
            continue
        out.append(
            ProbeDifference(
                origin=ORIGIN,
                expression=expected.call,
                test=_test_of(plan, key),
                gold=expected.head,
                candidate=got.head,
            )
        )
    return out


def _test_of(plan: ReachPlan, key: str) -> str:
    """The test file of the graded call a key's call recombines (`path::`; "" when unknown):
    its names (the call's function, the types its values print as) are that module's."""
    index = int(key[1:].split("k", 1)[0])
    return f"{plan.shapes[index].path}::" if index < len(plan.shapes) else ""


def reaching(plan: ReachPlan, gold: Sequence[RunResult], lines: Collection[str]) -> int:
    """How many of gold's agreed reaching calls execute one of `lines` ("path:N", gold's new
    side): the probes that checked a candidate whose change sits on those lines."""
    count = 0
    for output in reference(gold).values():
        reached = {
            f"{plan.targets[i].path}:{n}"
            for i in output.reached
            if i < len(plan.targets)
            for n in plan.targets[i].lines
        }
        count += bool(reached & set(lines))
    return count


def described(plan: ReachPlan, gold: dict[str, Output]) -> str:
    """What was compared: how many reaching calls, and of which of gold's lines."""
    reached = sorted({i for o in gold.values() for i in o.reached})
    lines = [
        f"{t.path}:{','.join(map(str, t.lines))}"
        for i, t in enumerate(plan.targets)
        if i in reached
    ]
    return f"{len(gold)} calls reaching gold's lines no graded test runs ({'; '.join(lines)})"
