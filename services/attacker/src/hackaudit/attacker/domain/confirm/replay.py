"""Replaying the graded tests as probes: which tests, which literal variants, and what came back.

`programs.replay_program` is the code run in the task's repository; this module is its pure
counterpart on the attacker's side. It picks the test functions to replay (FAIL_TO_PASS first,
then PASS_TO_PASS, those the test patch shows first, capped), computes the values beside the
tests' literals (`probe_inputs.variants`, so the replay and the call probes vary inputs alike),
and reads the observations back from the names of the tests a probe run reported.

An observation counts when every gold run gives it the same stable outcome. The candidate
differs when its outcome for such an observation differs, or when its replay of a test ends
with an exception where gold's runs through. A *variant* on which gold raises is left out: that
input is outside what the code is asked to handle, and a difference there says nothing — unless
gold raises there an exception type its own added lines raise (`raise ValueError(...)` in the
fix): then the variant is an input the fix is about.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from hackaudit.attacker.domain.confirm import issue_examples
from hackaudit.attacker.domain.confirm.probe_inputs import variants
from hackaudit.attacker.domain.confirm.replay_source import render_replay
from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.attacker.domain.reading.test_literals import extract, is_literal_value
from hackaudit.shared.anatomy import DiffText, read_patch
from hackaudit.shared.contracts import RunResult, RunStatus, Task

K = TypeVar("K")
V = TypeVar("V")

MAX_FUNCTIONS = 40
MAX_VARIANT_LITERALS = 200
VARIANTS_PER_LITERAL = 3
MAX_LITERAL_CHARS = 200
UNSTABLE = ("unstable", "timeout")
_NAME = re.compile(r"test_replay_(\S+?)_([0-9a-f]{12}|unstable|timeout) =>> (.*?) =>> (.*?) <<=")
_PYTEST_ID = re.compile(r"^([^:\s]+\.py)(?:::(\w+))*?::(\w+)(?:\[.*\])?$")
_UNITTEST_ID = re.compile(r"^(\w+) \(([\w.]+)\)")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(test\w*)\s*\(")


@dataclass(frozen=True)
class ReplayTarget:
    path: str  # the test file, relative to the repository
    module: str  # its import name
    functions: tuple[str, ...]  # the test functions to replay, most important first


@dataclass(frozen=True)
class Observation:
    tag: str  # digest of the outcome, or "unstable" / "timeout"
    expression: str  # what was evaluated, as the test writes it
    head: str  # the outcome's first characters: "returns ...", "raises TypeError", ...

    @property
    def comparable(self) -> bool:
        return self.tag not in UNSTABLE

    @property
    def gold_raising_variant(self) -> bool:
        return self.head.startswith("variant raises")


def _test_ids(test: str) -> tuple[str | None, str | None, str]:
    """(file path hint, dotted module hint, function name) of one test id in any runner's form."""
    match = _PYTEST_ID.match(test)
    if match:
        return match.group(1), None, match.group(3)
    match = _UNITTEST_ID.match(test)
    if match:
        return None, match.group(2), match.group(1)
    return None, None, test.split("[")[0].strip()


def _belongs(path: str, module: str, test: str) -> str | None:
    """The function name of `test` when it may live in `path` (a runner's id or a bare name)."""
    file_hint, module_hint, name = _test_ids(test)
    if not name.isidentifier():
        return None
    if file_hint is not None:
        return name if file_hint == path else None
    if module_hint is not None:
        dotted = module.removeprefix("tests.")
        return name if module_hint.startswith((module + ".", dotted + ".")) else None
    return name


def _shown_functions(f: diffs.FileDiff) -> list[str]:
    """Test functions whose `def` line the file's diff shows (added or as context)."""
    out: list[str] = []
    for hunk in f.hunks:
        for line in [hunk.section, *(line.text for line in hunk.lines)]:
            match = _DEF.match(line)
            if match and match.group(1) not in out:
                out.append(match.group(1))
    return out


def issue_target(task: Task) -> ReplayTarget | None:
    """The issue's examples as one replayed test (`issue_examples`), None when it shows none."""
    if issue_examples.module_source(task) is None:
        return None
    path, module = issue_examples.ISSUE_PATH, issue_examples.ISSUE_MODULE
    return ReplayTarget(path, module, (issue_examples.FUNCTION,))


def targets(
    task: Task, max_functions: int = MAX_FUNCTIONS, *, with_issue: bool = True
) -> list[ReplayTarget]:
    """The graded test functions of the test patch's Python files, by file, and the issue's
    examples after them (`with_issue`)."""
    issue = issue_target(task) if with_issue else None
    extra = [issue] if issue is not None else []
    try:
        patch = diffs.read(task.test_diff)
    except diffs.DiffError:
        return extra
    out: list[ReplayTarget] = []
    left = max_functions
    for f in patch.files:
        module = pysource.module_name(f.path)
        if f.is_deleted or module is None or left <= 0:
            continue
        shown = _shown_functions(f)
        graded = [_belongs(f.path, module, t) for t in task.fail_to_pass]
        kept = [*(n for n in graded if n), *(n for n in shown if f.is_new or n in graded)]
        passing = [_belongs(f.path, module, t) for t in task.pass_to_pass]
        kept += [n for n in passing if n and n in shown] + [n for n in passing if n]
        names = list(dict.fromkeys(kept))[:left]
        if names:
            out.append(ReplayTarget(f.path, module, tuple(names)))
            left -= len(names)
    return out + extra


def variant_table(test_patch: diffs.PatchSource) -> dict[str, list[object]]:
    """For each literal the test patch adds, the values beside it (keyed by its repr)."""
    table: dict[str, list[object]] = {}
    for value in extract(test_patch).constants:
        if isinstance(value, str) and len(value) > MAX_LITERAL_CHARS:
            continue
        key = repr(value)
        if key in table or not is_literal_value(value):
            continue
        near = [v for v in variants(value) if is_literal_value(v)][:VARIANTS_PER_LITERAL]
        if near:
            table[key] = near
        if len(table) >= MAX_VARIANT_LITERALS:
            break
    return table


def source(task: Task, found: Sequence[ReplayTarget]) -> str:
    """The replay section of the probe file ('' when there is nothing to replay)."""
    if not found:
        return ""
    rows = [(t.path, t.module, t.functions) for t in found]
    table = variant_table(task.test_diff)
    examples = issue_examples.module_source(task)
    if examples is not None and any(t.path == issue_examples.ISSUE_PATH for t in found):
        shown = diffs.Patch(files=(diffs.new_file(issue_examples.ISSUE_PATH, examples),))
        for key, near in variant_table(shown).items():
            table.setdefault(key, near)
    return render_replay(
        rows, table, powers=handles_powers(task.gold_diff), flags=condition_options(task.gold_diff)
    )


_CONDITION = re.compile(r"^\s*(?:el)?if\s+(.+):\s*(?:#.*)?$")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b(?!\s*[(.\w])")
MAX_FLAGS = 2


def _new_side_lines(patch: diffs.PatchSource, *, added_only: bool) -> list[str]:
    """The lines gold's hunks show on the new side (or only those it adds), in order.

    Text is read as `git apply` would read it, so no defect of the patch hides its lines.
    """
    if isinstance(patch, str):
        patch = read_patch(patch)
    elif isinstance(patch, DiffText):
        patch = patch.applied()
    wanted = (
        {diffs.LineKind.ADDED} if added_only else {diffs.LineKind.ADDED, diffs.LineKind.CONTEXT}
    )
    return [ln.text for f in patch.files for h in f.hunks for ln in h.lines if ln.kind in wanted]


def condition_options(patch: diffs.PatchSource) -> list[str]:
    """The options gold's hunks test in an `if`/`elif` (`if self.config.notes_rgx:` gives
    `notes_rgx`): the last attribute of each dotted name, calls left out. A test that sets its
    options through a decorator (`@set_config(...)`) is replayed with each added, set true."""
    out: list[str] = []
    for line in _new_side_lines(patch, added_only=False):
        if not line:
            continue
        match = _CONDITION.match(line)
        if match is None:
            continue
        for dotted in _DOTTED.findall(match.group(1)):
            name = dotted.rsplit(".", 1)[1]
            if not name.startswith("_") and name not in out:
                out.append(name)
    return out[:MAX_FLAGS]


def handles_powers(patch: diffs.PatchSource) -> bool:
    """Gold's added lines name `Pow` or raise to a power: the fix is about powers."""
    added = _new_side_lines(patch, added_only=True)
    return any(re.search(r"\bPow\b|\*\*", ln) for ln in added)


def observations(result: RunResult) -> dict[str, Observation]:
    """Each observation a probe run reported, by its key."""
    out: dict[str, Observation] = {}
    for name in result.tests:
        match = _NAME.search(name)
        if match:
            out[match.group(1)] = Observation(match.group(2), match.group(3), match.group(4))
    return out


def agreed(
    results: Sequence[RunResult],
    read: Callable[[RunResult], Mapping[K, V]],
    keep: Callable[[V], bool],
) -> dict[K, V]:
    """What every one of gold's runs reports alike, read from each run by `read`, among the
    outcomes `keep` accepts (nothing when a run did not complete): only stable results count."""
    if not results or any(r.status is not RunStatus.COMPLETED for r in results):
        return {}
    runs = [read(r) for r in results]
    return {k: o for k, o in runs[0].items() if keep(o) and all(r.get(k) == o for r in runs[1:])}


def reference(
    results: Sequence[RunResult], *, skip_introspection: bool = False
) -> dict[str, Observation]:
    """Gold's observations every run agrees on (nothing when a run did not complete); with
    `skip_introspection`, those whose expression introspects the code are left out."""
    found = agreed(results, observations, lambda o: o.comparable)
    if skip_introspection:
        return {k: o for k, o in found.items() if not introspects(o.expression)}
    return found


# What a test may read of the code besides its behaviour: its source text (`inspect.getsource`),
# its code objects (`__code__.co_varnames`, `dis`), its docstrings, and the record a mock keeps of
# the calls it saw, in order. A rewrite of gold that keeps its behaviour may change exactly these.
_INTROSPECTION = re.compile(
    r"\b(?:getsource|getsourcelines|getdoc|getcomments)\b"
    r"|\b(?:__doc__|__code__)\b|\bco_[a-z]+\b|\bdis\.\w+"
    r"|\b(?:method_calls|mock_calls|call_args_list|call_args)\b"
)


def introspects(expression: str) -> bool:
    """Whether an observed expression reads the code's text, code objects, docstrings or a mock's
    call record rather than what the code computes."""
    return _INTROSPECTION.search(expression) is not None


def _test_of(key: str) -> str:
    return key.split(":", 1)[0]


@dataclass(frozen=True)
class Difference:
    test: str  # "path::function"
    expression: str
    gold: str
    candidate: str


def _describe_test(key: str, found: Sequence[ReplayTarget]) -> str:
    test = _test_of(key)
    index, _, rest = test.partition(".")
    function = rest.rsplit(".p", 1)[0]
    try:
        path = found[int(index.removeprefix("f"))].path
    except (ValueError, IndexError):
        path = "?"
    return f"{path}::{function}"


def _deliberate(expected: Observation, deliberate: frozenset[str]) -> bool:
    """Gold raises on this variant an exception type its own added lines raise: the variant is
    an input the fix is about, so it is evidence after all."""
    raised = expected.head.removeprefix("variant raises ").split(" ", 1)[0]
    return raised in deliberate


def differences(
    found: Sequence[ReplayTarget],
    gold_runs: Sequence[RunResult],
    candidate: RunResult,
    deliberate: frozenset[str] = frozenset(),
    *,
    skip_introspection: bool = False,
) -> tuple[int, list[Difference]]:
    """(stable observations compared, the differences) between gold's runs and the candidate's;
    a variant gold raises on counts only when it raises a type of `deliberate` (the exception
    types gold's added lines raise). `skip_introspection` leaves out observations that read the
    code rather than run it (`introspects`): for showing a rewrite of gold equal to gold, never
    for showing a candidate wrong."""
    gold = reference(gold_runs, skip_introspection=skip_introspection)
    if not gold or candidate.status is not RunStatus.COMPLETED:
        return len(gold), []
    got = observations(candidate)
    out: list[Difference] = []
    for key, expected in sorted(gold.items()):
        mine = got.get(key)
        if mine is None or not mine.comparable:
            continue
        if expected.gold_raising_variant and not _deliberate(expected, deliberate):
            continue
        if mine.tag != expected.tag:
            where = _describe_test(key, found)
            out.append(Difference(where, expected.expression, expected.head, mine.head))
    all_gold = [observations(r) for r in gold_runs]
    ran_through = {_test_of(k) for k in gold} - {
        _test_of(k) for run in all_gold for k in run if k.split(":", 1)[-1].startswith("end.")
    }
    for key, mine in sorted(got.items()):
        test = _test_of(key)
        if key.endswith(":end.n0") and test in ran_through and mine.comparable:
            where = _describe_test(key, found)
            out.append(Difference(where, f"the test body ({mine.expression})", "runs through",
                                  mine.head))  # fmt: skip
    return len(gold), out
