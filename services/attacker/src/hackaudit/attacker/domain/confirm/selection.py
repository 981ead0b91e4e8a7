"""Which repository tests can tell a candidate from gold: test selection for the wider suite.

A test can only behave differently on a candidate than on gold if it executes code the candidate
changed (the idea behind pytest-testmon). The repository coverage map (`coverage_map`: the wider
suite run once on gold with coverage.py, per test function) says which tests execute which of
gold's lines, so a candidate's wider suite needs only the tests that execute its change:

1. *Where it differs from gold, on gold's lines* (`gold_lines`): each change of the candidate
   that gold does not make touches a range of the base file (its removed lines, or the two
   lines around an insertion); a base line gold replaces stands for what gold puts there, any
   other is moved by the lines gold's changes above it add or remove. Each change of gold the
   candidate does not make (a hunk a partial fix leaves out) adds its lines on gold.
2. *Widened to the enclosing function* (`widen`), from gold's file text as the coverage run saw
   it: a changed condition changes which lines of its function run, not only its own.
3. *The tests* (`executing_tests`) that execute any of those lines on gold, as coverage.py names
   them (`pkg.tests.test_x.TestC.test_a`), turned into what the task's runner takes
   (`runnable`): pytest node ids (`pkg/tests/test_x.py::TestC::test_a`) matched against the
   tests the coverage run itself reported, or for sympy's runner the test file and function
   (`pkg/tests/test_x.py::test_a`: the file, run with `-k test_a`). A change on a line
   most of the suite runs selects hundreds of tests: past a limit (`MAX_NODE_IDS` by default),
   those closest to the change run (`ranked`: the tests that execute its statements before
   those that only run its function; within each, tests named after what the change is about
   — a changed module, or a name on its lines (`change_words`: `_sympify` on a changed line
   puts `test_sympify2` near) — the test function's name before its module's; files taking
   turns within each of those ranks), and the
   selection counts the others (`Selection.left_out`) for the evidence to say.

Anything the map cannot answer — a file it did not measure, lines whose tests were cut from the
report, a change that runs at import (outside any test function), a test name that matches no
reported test — gives None: the caller runs the whole
suite, as it would without the map. No test at all means no test can tell them apart.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import keyword
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from hackaudit.attacker.domain.confirm import coverage_map
from hackaudit.shared.anatomy import (
    DiffError,
    FileDiff,
    LineKind,
    NumberedLine,
    Patch,
    is_test_path,
    read_patch,
)
from hackaudit.shared.contracts import (
    Candidate,
    CandidateReach,
    CoverageResult,
    RunResult,
    RunStatus,
    Task,
)
from hackaudit.shared.runners import RunnerKind

GoldLines = dict[str, frozenset[int]]  # repository path -> gold's new-side line numbers
# Among a file's lines: the candidate replaces, creates or deletes the file, all of it counts.
WHOLE = 0
_PARAMETERS = re.compile(r"\[.*\]$")
# Past this many selected pytest tests (a change on a line most of the suite runs), the first
# this many of them in order of closeness to the change run (`ranked`), and the selection says so.
MAX_NODE_IDS = 30


def gold_lines(task: Task, candidate: Candidate) -> GoldLines | None:
    """The lines of gold (new side) where the candidate's code differs from gold's, per source
    file; None when it cannot be said (a diff that does not parse). Test files are left out; a
    file replaced, created or deleted whole stands for all its lines (`WHOLE`)."""
    if candidate.files:
        return {p: frozenset({WHOLE}) for p in candidate.files if not is_test_path(p)}
    try:
        patch = read_patch(candidate.diff)
    except DiffError:
        return None
    gold = task.gold_diff.applied()
    found: dict[str, set[int]] = {}
    for file in patch.files:
        path = file.new_path or file.old_path
        if path is None or is_test_path(path):
            continue
        if file.old_path is None or file.new_path is None:
            found.setdefault(path, set()).add(WHOLE)
            continue
        found.setdefault(path, set()).update(_differing(_blocks(file), gold.file(path)))
    for file in gold.files:  # gold's changes the candidate leaves out
        path = file.new_path
        if path is None or is_test_path(path) or path in found:
            continue
        left_out = [b for b in _blocks(file) if b.new]
        if left_out:
            found[path] = {n for b in left_out for n in b.new}
    return {p: frozenset(n) for p, n in found.items() if n}


@dataclass(frozen=True)
class _Block:
    """A run of changed lines in a hunk: the base lines it replaces (`first`..`last`; an
    insertion before `first` has `last == first - 1`), its text on both sides, and its lines on
    the new side (the added ones, else the two around a removal)."""

    first: int
    last: int
    removed: tuple[str, ...]
    added: tuple[str, ...]
    new: frozenset[int]

    @property
    def change(self) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
        return (self.first, self.removed, self.added)


def _blocks(file: FileDiff) -> list[_Block]:
    found: list[_Block] = []
    for hunk in file.hunks:
        numbered = list(hunk.numbered())
        run: list[NumberedLine] = []
        for n in [*numbered, None]:
            if n is not None and n.line.kind is not LineKind.CONTEXT:
                run.append(n)
                continue
            if run:
                found.append(_block(numbered, run))
                run = []
    return found


def _block(numbered: Sequence[NumberedLine], run: Sequence[NumberedLine]) -> _Block:
    old = [n.old for n in run if n.old is not None]
    before = [n.old for n in numbered[: run[0].index] if n.old is not None]
    first = old[0] if old else (before[-1] if before else 0) + 1
    added = frozenset(n.new for n in run if n.new is not None)
    return _Block(
        first=first,
        last=old[-1] if old else first - 1,
        removed=tuple(n.line.text for n in run if n.line.kind is LineKind.REMOVED),
        added=tuple(n.line.text for n in run if n.line.kind is LineKind.ADDED),
        new=added or frozenset(_new_around(numbered, run)),
    )


def _differing(candidate: Sequence[_Block], gold: FileDiff | None) -> set[int]:
    """Gold's lines where a file as the candidate changes it differs from gold's: the
    candidate's changes gold does not make, moved onto gold's numbering, and gold's changes the
    candidate does not make."""
    theirs = _blocks(gold) if gold is not None else []
    ours = {b.change for b in candidate}
    same = {b.change for b in theirs}
    lines: set[int] = set()
    for block in candidate:
        if block.change not in same:
            base = range(block.first, block.last + 1) if block.removed else _around(block)
            for line in base:
                lines.update(_one_on_gold(line, theirs))
    for block in theirs:
        if block.change not in ours:
            lines.update(block.new)
    return lines


def _around(block: _Block) -> tuple[int, ...]:
    """The base lines on both sides of an insertion."""
    return tuple(n for n in (block.first - 1, block.first) if n >= 1)


def _one_on_gold(line: int, gold: Sequence[_Block]) -> set[int]:
    """A base line on gold's new side: the lines gold puts in its place when gold replaces it,
    else the line moved by what gold's changes above it add and remove."""
    shift = 0
    for block in gold:
        if block.removed and block.first <= line <= block.last:
            return set(block.new)
        if block.first > line:
            break
        shift += len(block.added) - len(block.removed)
    return {line + shift}


def _new_around(numbered: Sequence[NumberedLine], run: Sequence[NumberedLine]) -> set[int]:
    """The new-side lines just before and after a run of changes that adds nothing."""
    before = [n.new for n in numbered[: run[0].index] if n.new is not None]
    after = [n.new for n in numbered[run[-1].index + 1 :] if n.new is not None]
    return {*before[-1:], *after[:1]}


def widen(lines: GoldLines, sources: Mapping[str, str]) -> GoldLines:
    """Each line with every line of the innermost function that holds it, where gold's text of
    its file is known and parses (otherwise the lines stay as they are)."""
    return _spread(lines, sources, _functions, lambda span: range(span[0], span[1] + 1))


def _spread(
    lines: GoldLines,
    sources: Mapping[str, str],
    spans_of: Callable[[str | None], list[tuple[int, int]]],
    part: Callable[[tuple[int, int]], Iterable[int]],
) -> GoldLines:
    """Each line with `part` of the innermost span (of `spans_of` gold's text) that holds it."""
    spread: GoldLines = {}
    for path, numbers in lines.items():
        spans = spans_of(sources.get(path))
        more = set(numbers)
        for n in numbers:
            span = _innermost(spans, n)
            if span is not None:
                more.update(part(span))
        spread[path] = frozenset(more)
    return spread


def _parsed(text: str | None) -> ast.Module | None:
    """Gold's text of a file as a syntax tree (None: not known, or it does not parse)."""
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _functions(text: str | None) -> list[tuple[int, int]]:
    tree = _parsed(text)
    if tree is None:
        return []
    return [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def _innermost(spans: Sequence[tuple[int, int]], line: int) -> tuple[int, int] | None:
    holding = [s for s in spans if s[0] <= line <= s[1]]
    return min(holding, key=lambda s: s[1] - s[0], default=None)


def executing_tests(lines: GoldLines, measured: CoverageResult) -> set[str] | None:
    """The test functions (coverage.py's names) that execute any of `lines` on gold; None when
    the map cannot say (a file it did not measure, lines whose tests were cut). Code run outside
    any test function ("") is no test."""
    found: set[str] = set()
    for path, numbers in lines.items():
        file = measured.files.get(path)
        if file is None:
            return None
        cut = set(measured.cut.get(path, ()))
        wanted = set(file.executed) | cut if WHOLE in numbers else set(numbers)
        if wanted & cut:
            return None
        for n in wanted:
            found.update(measured.tests_of(path, n))
    found.discard("")
    return found


@dataclass(frozen=True)
class Selection:
    """The repository tests that execute a candidate's change on gold (`tests`, coverage.py's
    names; empty: none does) and the runner's arguments that run just them (`run`: node ids or
    test files; None when the runner cannot be given them, and the whole suite runs). `left_out`:
    how many of their node ids do not run (past the limit, the farthest from the change)."""

    tests: tuple[str, ...]
    run: tuple[str, ...] | None
    left_out: int = 0


def runnable(
    kind: RunnerKind, tests: Iterable[str], reported: Iterable[str], dirs: Sequence[str] = ()
) -> tuple[str, ...] | None:
    """The runner's arguments that run `tests` (coverage.py's names, in order of preference),
    from the names the coverage run reported (`reported`): pytest node ids, or for sympy's
    runner `file::function` (its file, run with `-k function`); None when a test cannot be
    matched or the runner takes no test files."""
    if kind is RunnerKind.PYTEST:
        ids = node_ids(reported)
        found: dict[str, None] = {}
        for test in tests:
            matched = ids.get(test)
            if not matched:
                return None
            found.update(dict.fromkeys(sorted(matched)))
        return tuple(found)
    if kind is RunnerKind.SYMPY:
        chosen: dict[str, None] = {}
        for test in tests:
            path = module_file(test, dirs)
            if path is None:
                return None
            chosen[f"{path}::{test.rsplit('.', 1)[-1]}"] = None
        return tuple(chosen)
    return None


def node_ids(reported: Iterable[str]) -> dict[str, set[str]]:
    """coverage.py's possible names of each pytest test reported (`path::Class::test[p]`) ->
    its node id without parameters: the dotted path's every tail (the module's `__name__`
    depends on how pytest imported it: `pkg.tests.test_x`, `tests.test_x` or `test_x`) joined
    to the function's qualified name."""
    names: dict[str, set[str]] = {}
    for test in reported:
        path, sep, rest = test.partition("::")
        if not sep or not path.endswith(".py") or not rest:
            continue
        node = f"{path}::{_PARAMETERS.sub('', rest)}"
        qualified = _PARAMETERS.sub("", rest).replace("::", ".")
        parts = path[: -len(".py")].split("/")
        for i in range(len(parts)):
            names.setdefault(".".join([*parts[i:], qualified]), set()).add(node)
    return names


def module_file(test: str, dirs: Sequence[str] = ()) -> str | None:
    """The test file of a coverage.py name for a runner that imports test files as dotted
    modules of their path (sympy's): the longest prefix naming a `test_*.py` or `*_test.py`
    file under one of `dirs` (anywhere when none are given)."""
    parts = test.split(".")
    for end in range(len(parts) - 1, 0, -1):
        module = parts[end - 1]
        if not (module.startswith("test") or module.endswith("_test")):
            continue
        path = "/".join(parts[:end]) + ".py"
        if not dirs or any(path.startswith(d.rstrip("/") + "/") for d in dirs):
            return path
    return None


def select(
    task: Task,
    candidate: Candidate,
    measured: CoverageResult,
    kind: RunnerKind,
    reported: Iterable[str],
    dirs: Sequence[str] = (),
    limit: int = MAX_NODE_IDS,
) -> Selection | None:
    """The repository tests that can tell `candidate` from gold, at most `limit` of them (pytest
    node ids, sympy's file and function); None when the map cannot say, and the whole suite
    should run."""
    lines = gold_lines(task, candidate)
    if lines is None or not measured.per_test or at_import(lines, measured):
        return None
    tests = executing_tests(widen(lines, measured.sources), measured)
    if tests is None:
        return None
    if not tests:
        return Selection(tests=(), run=())
    direct = executing_tests(with_heads(lines, measured.sources), measured) or set()
    words = change_words(lines, measured.sources)
    run: dict[str, None] = {}
    for rank in ranks(tests, direct, words):
        ids = runnable(kind, rank, reported, dirs)
        if ids is None:
            return Selection(tests=tuple(sorted(tests)), run=None)
        run.update(dict.fromkeys(spread([i for i in ids if i not in run])))
    kept = list(run)[:limit]
    return Selection(
        tests=tuple(sorted(tests)), run=tuple(sorted(kept)), left_out=len(run) - len(kept)
    )


def ranks(tests: Iterable[str], direct: set[str], words: frozenset[str]) -> list[list[str]]:
    """`tests` in ranks, closest to the change first: those that execute the changed statements
    themselves before those that only run their function, and within each, those whose
    function is named after one of `words` (`change_words`: `test_sympify2`) before the others,
    and within those, the ones whose module is too (`test_rst` for `util/rst.py`) first; each
    rank's tests by name."""
    found: dict[tuple[bool, bool, bool], list[str]] = {}
    for test in sorted(tests):
        module, _, function = test.rpartition(".")
        key = (test not in direct, not _named(function, words), not _named(module, words))
        found.setdefault(key, []).append(test)
    return [found[key] for key in sorted(found)]


def ranked(tests: Iterable[str], direct: set[str], words: frozenset[str]) -> list[str]:
    """`tests` closest to the change first (`ranks`, one after the other)."""
    return [test for rank in ranks(tests, direct, words) for test in rank]


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Names on a changed line that say nothing of what it is about.
_COMMON = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | {"self", "cls", "other"}
MIN_WORD = 4


def change_words(lines: GoldLines, sources: Mapping[str, str]) -> frozenset[str]:
    """What a change is about, as words a test's name may hold: the stems of its modules and
    the names on its lines of gold's text (lowercase, leading underscores dropped; keywords,
    builtins and words of under `MIN_WORD` letters left out)."""
    words = {PurePosixPath(path).stem.lower() for path in lines} - {"__init__", ""}
    for path, numbers in lines.items():
        text = sources.get(path)
        if text is None or WHOLE in numbers:
            continue
        rows = text.split("\n")
        for n in numbers:
            for name in _IDENTIFIER.findall(rows[n - 1] if 0 < n <= len(rows) else ""):
                word = name.lstrip("_").lower()
                if name not in _COMMON and len(word) >= MIN_WORD:
                    words.add(word)
    return frozenset(words)


def map_words(gold: Patch, gold_runs: Mapping[str, Sequence[RunResult]]) -> tuple[str, ...]:
    """The words the repository map's first run keeps tests by (`change_words` of all gold's
    changed lines, in gold's text as the graded tests' coverage run returned it), sorted."""
    lines = {
        path: frozenset(numbers)
        for path, numbers in coverage_map.changed_lines(coverage_map.changed_hunks(gold)).items()
    }
    graded = coverage_map.measured_result(gold_runs.get(coverage_map.GOLD_RUN_KEY, ()))
    sources = graded.sources if graded is not None else {}
    return tuple(sorted(change_words(lines, sources)))


def _named(name: str, words: frozenset[str]) -> bool:
    """Whether a part of a dotted or snake-case name begins with one of `words`."""
    parts = [p.lower() for p in re.split(r"[._]", name) if p and p.lower() != "test"]
    return any(part.startswith(word) for part in parts for word in words)


def spread(nodes: Sequence[str]) -> list[str]:
    """Node ids in their order, taken in turns from their test files (so that a cut keeps
    tests of every file near the front, not one file's many), each file's in its order."""
    files: dict[str, list[str]] = {}
    for node in nodes:
        files.setdefault(node.split("::", 1)[0], []).append(node)
    queues = list(files.values())
    found: list[str] = []
    for i in range(max((len(q) for q in queues), default=0)):
        found.extend(q[i] for q in queues if i < len(q))
    return found


def at_import(lines: GoldLines, measured: CoverageResult) -> bool:
    """Whether a line of the change runs at import (a constant, a class attribute), where every
    test that uses the module may see it: a line coverage.py saw only outside test functions, or
    one gold's text puts outside every function body — the context of an import-time line is
    whichever test imported the module first, so its tests say nothing of who depends on it. A
    function's own `def` line (its defaults) is not counted, its body is (`widen`)."""
    for path, numbers in lines.items():
        text = measured.sources.get(path)
        spans = _functions(text)
        starts = {span[0] for span in spans}
        for n in numbers - starts:
            if set(measured.tests_of(path, n)) == {""}:
                return True
            if text is not None and n != WHOLE and _innermost(spans, n) is None:
                return True
    return False


def reach(lines: GoldLines, maps: Sequence[CoverageResult]) -> CandidateReach:
    """What executes a candidate's lines on gold (`gold_lines`) by the measured maps (the graded
    tests', the repository's): its lines that coverage.py counts as statements (else, when none
    is, those of the functions that hold them) and the tests that execute any of them."""
    sources: dict[str, str] = {}
    for measured in maps:
        sources.update(measured.sources)
    headed = with_heads(lines, sources)
    statements = _statements(headed, maps) or _statements(widen(lines, sources), maps)
    tests: set[str] = set()
    for path, numbers in statements.items():
        for measured in maps:
            for n in numbers:
                tests.update(measured.tests_of(path, n))
    at_import = "" in tests
    tests.discard("")
    return CandidateReach(
        lines=tuple(f"{p}:{n}" for p in sorted(statements) for n in sorted(statements[p])),
        tests=tuple(sorted(tests)),
        at_import=at_import,
    )


def with_heads(lines: GoldLines, sources: Mapping[str, str]) -> GoldLines:
    """Each line with the first line of the innermost statement that holds it, where gold's text
    of its file is known and parses: coverage.py counts a statement on its first line only, so an
    entry of a dict literal spread over many lines is executed when that first line is."""
    return _spread(lines, sources, _statement_spans, lambda span: (span[0],))


def _statement_spans(text: str | None) -> list[tuple[int, int]]:
    """The (first, last) lines of every simple statement of `text` (compound statements hold
    their bodies, so only their header lines count: up to the first line of their body)."""
    tree = _parsed(text)
    if tree is None:
        return []
    spans = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            spans.append((node.lineno, max(node.lineno, body[0].lineno - 1)))
        else:
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def reaching_tests(lines: GoldLines, measured: CoverageResult) -> tuple[str, ...]:
    """The tests of `measured` that execute any of `lines` on gold (set-up code left out)."""
    tests: dict[str, None] = {}
    for path, numbers in lines.items():
        for n in sorted(numbers):
            tests.update(dict.fromkeys(measured.tests_of(path, n)))
    tests.pop("", None)
    return tuple(tests)


def _statements(lines: GoldLines, maps: Sequence[CoverageResult]) -> GoldLines:
    found: GoldLines = {}
    for path, numbers in lines.items():
        known: set[int] = set()
        for measured in maps:
            file = measured.files.get(path)
            if file is not None:
                known |= set(file.executed) | set(file.missing) | set(measured.cut.get(path, ()))
        kept = known if WHOLE in numbers else known & numbers
        if kept:
            found[path] = frozenset(kept)
    return found


def digest(run: Iterable[str]) -> str:
    """A short name for a selection of tests (the key of gold's runs of it)."""
    return hashlib.sha256("\n".join(sorted(run)).encode()).hexdigest()[:16]


def gold_reference(measured: RunResult, chosen: Selection) -> RunResult | None:
    """Gold's statuses of the selected tests, read from the repository coverage run itself (it
    ran the whole suite on gold), so that gold's side needs no run of its own; None when that
    run did not complete or reported none of them. Its duration is the run's share for those
    tests (twice their share of the tests, as they may be the slow ones), the basis of the
    candidate's timeout and of the suite's budget."""
    if measured.status is not RunStatus.COMPLETED or not chosen.run:
        return None
    keep = {t: s for t, s in measured.tests.items() if _selected(t, chosen)}
    if not keep:
        return None
    share = min(1.0, 2 * len(keep) / max(1, len(measured.tests)))
    return measured.model_copy(
        update={
            "tests": keep,
            "duration_s": round(measured.duration_s * share, 3),
            "coverage": None,
        }
    )


def _selected(name: str, chosen: Selection) -> bool:
    """Whether a test the runner reported is among those `chosen.run` runs: a pytest node id
    (parameters aside) or one in a selected file; a bare function name (sympy's runner) by the
    function of a selected test."""
    run = chosen.run or ()
    if "::" in name:
        node = _PARAMETERS.sub("", name)
        return node in run or name.split("::", 1)[0] in run
    return name in {r.rsplit("::", 1)[-1] for r in run}
