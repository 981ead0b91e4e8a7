"""The coverage map of a task: which graded tests execute which of the lines gold changes.

Measured once per task on gold (a `Coverage` run of the graded tests), it says how much of the
fix the tests reach: a changed line no graded test executes is one any candidate may leave out.
Only the changed lines coverage.py counts as statements are counted. Only reported; no verdict
reads it.

The repository's side (`repository_invocation`): the wider suite near the change (the test
patch's directories, as the wider-suite check runs them) run once on gold with coverage of
gold's changed source files, whole, with their text — which repository test executes which
line, for test selection (`selection`) and for what reaches a candidate's change. It is run
when a check first needs it, and reported with its cost (`GoldCoverage.repository`). Where the
runner can narrow a suite by name, the tests named after what gold's change is about run first
(`NAMED_RUN_KEY`, `selection.map_words`); the whole suite is measured only when fewer of them
execute a candidate's change than the wider suite would run and they tell it from gold in
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hackaudit.shared.anatomy import LineKind, Patch, is_test_path
from hackaudit.shared.contracts import (
    Coverage,
    CoverageResult,
    GoldCoverage,
    HunkCoverage,
    RepositoryCoverage,
    RunResult,
    RunStatus,
    Suite,
)

# Where gold's coverage run is kept among gold's runs (`RoundState.gold_runs`).
GOLD_RUN_KEY = "coverage"
# Where gold's coverage run of the repository's tests near the change is kept.
REPOSITORY_RUN_KEY = "repository-coverage"
# Where gold's coverage run of those of them named after the change is kept.
NAMED_RUN_KEY = "repository-coverage-named"


@dataclass(frozen=True)
class ChangedHunk:
    """A hunk of gold's source changes: its file, new-side start, and added lines' numbers."""

    path: str
    start: int
    lines: tuple[int, ...]


def changed_hunks(gold: Patch) -> tuple[ChangedHunk, ...]:
    """Gold's hunks that add lines to a source file (test files and configuration left out)."""
    found: list[ChangedHunk] = []
    for file in gold.files:
        if file.new_path is None or file.binary or is_test_path(file.new_path):
            continue
        for hunk in file.hunks:
            added = tuple(
                n.new
                for n in hunk.numbered()
                if n.line.kind is LineKind.ADDED and n.new is not None
            )
            if added:
                found.append(ChangedHunk(file.new_path, added[0], added))
    return tuple(found)


def invocation(hunks: Sequence[ChangedHunk], whole: Iterable[str] = ()) -> Coverage | None:
    """The coverage run of the graded tests over the files gold changes (those of `hunks`, and
    `whole`), all their lines, with their text: which function holds a changed line, whether it
    runs at import, and which other lines of those functions the tests execute (the mutants
    beyond gold's lines). The changed lines' tests are the last a cut to size drops (`first`).
    None: no source file."""
    first = changed_lines(hunks)
    files = sorted(set(first) | set(whole))
    if not files:
        return None
    return Coverage(files=tuple(files), first=first, with_source=True)


def changed_lines(hunks: Sequence[ChangedHunk]) -> dict[str, tuple[int, ...]]:
    """The hunks' added lines, per file."""
    found: dict[str, set[int]] = {}
    for hunk in hunks:
        found.setdefault(hunk.path, set()).update(hunk.lines)
    return {path: tuple(sorted(lines)) for path, lines in found.items()}


def repository_invocation(gold: Patch, suite: Suite) -> Coverage | None:
    """The coverage run of `suite` over gold's changed source files, whole and with their text,
    the changed lines' tests the last a cut to size drops (None: gold changes no source file)."""
    files = sorted(
        {
            f.new_path
            for f in gold.files
            if f.new_path is not None and not f.binary and not is_test_path(f.new_path)
        }
    )
    if not files:
        return None
    first = changed_lines(changed_hunks(gold))
    return Coverage(
        files=tuple(files),
        first={path: lines for path, lines in first.items() if path in files},
        with_source=True,
        suite=suite,
    )


def measured_result(results: Sequence[RunResult]) -> CoverageResult | None:
    """The measurements of a coverage run (None: it did not complete or reported nothing)."""
    if not results or results[0].status is not RunStatus.COMPLETED:
        return None
    return results[0].coverage


def repository_map(
    hunks: Sequence[ChangedHunk],
    suite: Suite | None,
    results: Sequence[RunResult],
    keywords: Sequence[str] = (),
) -> RepositoryCoverage | None:
    """What the repository run says of gold's changed lines (None: never run); `keywords`: the
    run measured only the tests named after them."""
    if not results:
        return None
    seconds = round(sum(r.duration_s for r in results), 3)
    dirs = suite.dirs if suite is not None else ()
    measured = measured_result(results)
    if measured is None:
        result = results[0]
        why = f"coverage run {result.status.value}: {result.reason or 'no coverage result'}"
        return RepositoryCoverage(
            measured=False, reason=why, tests=dirs, keywords=tuple(keywords),
            sandbox_seconds=seconds,
        )  # fmt: skip
    executed = {
        f"{h.path}:{n}": tests
        for h in hunks
        for n in _statements(h, measured)
        if (tests := measured.tests_of(h.path, n))
    }
    return RepositoryCoverage(
        measured=True,
        tests=dirs,
        keywords=tuple(keywords),
        executed=executed,
        executed_lines=len(executed),
        sandbox_seconds=seconds,
    )


def not_measured(reason: str, seconds: float = 0.0) -> GoldCoverage:
    return GoldCoverage(measured=False, reason=reason, sandbox_seconds=round(seconds, 3))


def coverage_map(hunks: Sequence[ChangedHunk], results: Sequence[RunResult]) -> GoldCoverage:
    """The map from gold's coverage run (`results`; empty: never run)."""
    if not hunks:
        return not_measured("gold changes no line of a source file")
    if not results:
        return not_measured("no coverage run of gold")
    result = results[0]
    seconds = sum(r.duration_s for r in results)
    if result.status is not RunStatus.COMPLETED or result.coverage is None:
        why = result.reason or "no coverage result"
        return not_measured(f"coverage run {result.status.value}: {why}", seconds)
    measured = result.coverage
    mapped = tuple(
        HunkCoverage(
            path=h.path,
            start=h.start,
            lines=lines,
            executed={n: t for n in lines if (t := measured.tests_of(h.path, n))},
        )
        for h in hunks
        if (lines := _statements(h, measured))
    )
    return GoldCoverage(
        measured=True,
        hunks=mapped,
        changed_lines=sum(len(h.lines) for h in mapped),
        executed_lines=sum(len(h.executed) for h in mapped),
        sandbox_seconds=round(seconds, 3),
    )


def _statements(hunk: ChangedHunk, measured: CoverageResult) -> tuple[int, ...]:
    """The hunk's added lines that coverage.py counts as statements (executed or missing): a
    blank line, a comment, a docstring's inner line or an `else:` executes nothing. All of them
    when coverage.py reports no statement of the file (it was never imported)."""
    found = measured.files.get(hunk.path)
    statements = set(found.executed) | set(found.missing) if found else set()
    if not statements:
        return hunk.lines
    return tuple(n for n in hunk.lines if n in statements)


def of_gold(
    gold: Patch,
    gold_runs: Mapping[str, Sequence[RunResult]],
    suite: Suite | None = None,
    keywords: Sequence[str] = (),
) -> GoldCoverage:
    """The map from gold's patch and gold's kept runs (`suite`: the one the repository run
    measured; `keywords`: the words its first run kept tests by). The repository's side is the
    whole suite's run when it was measured, else the named tests' run; its cost is both's."""
    hunks = changed_hunks(gold)
    found = coverage_map(hunks, gold_runs.get(GOLD_RUN_KEY, ()))
    named = gold_runs.get(NAMED_RUN_KEY, ())
    whole = gold_runs.get(REPOSITORY_RUN_KEY, ())
    repository = (
        repository_map(hunks, suite, whole)
        if whole
        else repository_map(hunks, suite, named, keywords)
    )
    if repository is not None and whole and named:
        seconds = repository.sandbox_seconds + sum(r.duration_s for r in named)
        repository = repository.model_copy(update={"sandbox_seconds": round(seconds, 3)})
    return found.model_copy(update={"repository": repository}) if repository else found


def repository_results(
    gold_runs: Mapping[str, Sequence[RunResult]],
) -> tuple[RunResult, ...]:
    """Gold's repository coverage run to read the map from: the whole suite's when it was
    measured, else the named tests'."""
    return tuple(gold_runs.get(REPOSITORY_RUN_KEY, ()) or gold_runs.get(NAMED_RUN_KEY, ()))
