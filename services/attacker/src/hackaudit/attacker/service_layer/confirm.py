"""Running the confirmation checks of an accepted candidate through the sandbox.

The rules are in `domain.confirmation`; this module orders the sandbox runs they need. Gold's
side of every check runs once per task (repeated, to rule out flaky tests) and is kept in the
round state, so neither a second exploit nor a restart pays for it again. Checks stop at the
first evidence found, cheapest first: construction, held-back tests, probes, wider suite. A
whole suite runs on the candidate first: gold runs it only where the runner cannot run the files
of the tests the candidate fails, and otherwise runs just those files (`_candidate_first`).
Each run says what it runs as a typed invocation (`Probe`, `Suite`); how it is run — the
interpreter for probes whatever the task's runner, the task's runner and parser for the wider
suite — is the sandbox's business. The wider suite runs within a budget sized from gold's graded
run.

The wider suite near the change runs only the tests that execute a candidate's change on gold
(`selection`), by the repository coverage map: the same suite run once on gold with coverage
(`repository_coverage`), when a candidate first reaches the wider suite; its statuses are gold's
side of the comparison (gold's reruns of the tests a candidate breaks rule out flaky ones, as
before). When the map cannot say, the whole suite runs as before; when no test executes the
change, none runs. A change that gold's text puts at import (a constant, a class attribute: seen
in the graded tests' coverage run, which returns the changed files' text) is seen by every test
that uses its module: the map could select no less than the whole suite, so it is not measured
for it. A candidate that leaves every module it changes as gold's once imported (`import_state`:
what each binds, values and code) runs no suite; for another, where the runner can narrow a
suite by name (pytest, sympy's), the tests named after the change run first (on the candidate,
gold only on those it fails), and the whole suite only when they tell it from gold in nothing.
For any other change, where the runner can narrow a suite by name, the map is measured first
over the tests named after what gold's change is about (`selection.map_words`: its modules and
the names on its lines) and the candidate runs those of them that execute its change; the whole
suite's map is measured only when they tell it from gold in nothing and were fewer than the
wider suite runs (`suite_max_tests`), and then only the tests it adds run. A change on a line
most of the suite runs is mapped for a fraction of the suite's cost, at the price of never
selecting a test not named so when enough named ones execute it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from hackaudit.attacker.domain.confirm import (
    coverage_map,
    import_state,
    probes,
    reach,
    replay,
    selection,
)
from hackaudit.attacker.domain.confirm.confirmation import (
    MIN_RERUN_S,
    Check,
    CheckResult,
    ConfirmationConfig,
    SuiteScope,
    broken_tests,
    by_construction,
    compare_probes,
    compare_tests,
    differences,
    gold_suite_budget,
    gold_suite_problem,
    graded_tests,
    no_room,
    passing_in_all,
    rerun_timeout,
    suite_budget,
    suite_over_budget,
    unstable_on_gold,
    verdict,
    with_reach,
)
from hackaudit.attacker.domain.generate.strategies import beyond_gold
from hackaudit.attacker.domain.orchestration import GRADED_GOLD
from hackaudit.attacker.domain.ports import SandboxPort
from hackaudit.shared.contracts import (
    Candidate,
    CandidateReach,
    CandidateVerdict,
    CoverageResult,
    Invocation,
    ProbeDifference,
    Provenance,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Suite,
    Task,
    TestStatus,
)
from hackaudit.shared.runners import (
    file_header,
    files_of_tests,
    ids_of_tests,
    runner_of,
    takes_test_files,
)

REQUESTED_BY = "attacker"
# What a test that fails on a candidate reports (skipped and expected failures are not failures).
FAILING = frozenset({TestStatus.FAILED, TestStatus.ERROR})
# The candidate's probe runs twice: a difference from gold counts only when both runs show it, so
# a run disturbed by the machine (a case cut short, a cache left half-built) is no evidence.
CANDIDATE_PROBE_REPEATS = 2


def reproduced(checks: list[CheckResult]) -> CheckResult:
    """The first run's check when every run found evidence; otherwise the evidence is dropped and
    the note says it was not reproduced."""
    first = checks[0]
    if first.evidence is None or all(c.evidence is not None for c in checks):
        return first
    note = f"a difference from gold in one of {len(checks)} runs, not reproduced: no evidence"
    return CheckResult(check=first.check, note=note)


@dataclass(frozen=True)
class _Selected:
    """A selection of repository tests, the coverage run it was read from, the words that run
    kept tests by (none: the whole suite near the change was measured), and how many tests
    named after the change ran before it (`after`)."""

    selection: selection.Selection
    measured: RunResult
    words: tuple[str, ...] = ()
    after: int = 0

    def full(self, limit: int) -> bool:
        """Whether the selection holds as many tests as the wider suite runs."""
        return len(self.selection.run or ()) + self.selection.left_out >= limit

    def described(self) -> str:
        chosen = self.selection
        run = chosen.run or ()
        named = f" named after the change ({', '.join(self.words)})" if self.words else ""
        if self.after and not run:
            return (
                f"{len(chosen.tests)} tests execute its change on gold: the {self.after} named"
                " after it ran, no other"
            )
        if self.after:
            found = (
                f"{len(run)} more of the {len(chosen.tests)} tests that execute its change on"
                f" gold, after the {self.after} named after it"
            )
        elif not chosen.left_out and not named:
            return f"{len(chosen.tests)} tests that execute its change on gold"
        else:
            found = (
                f"{len(run)} of the {len(run) + chosen.left_out} tests{named} that execute its"
                " change on gold, the closest to it"
            )
        if chosen.left_out:
            found += f"; the {chosen.left_out} others not run"
        return found


def _noted(found: CheckResult, what: str) -> CheckResult:
    """`found` with the tests it ran said in its note."""
    return found.model_copy(update={"note": f"{found.note} ({what})"}) if found.note else found


class Confirmer:
    """Confirms accepted candidates of one task; `gold_runs` (the cache of gold's runs) and
    `suite_seconds` (the sandbox-seconds the wider suite has taken) are what to persist."""

    def __init__(
        self,
        sandbox: SandboxPort,
        config: ConfirmationConfig,
        task: Task,
        correlation_id: str,
        gold_runs: dict[str, tuple[RunResult, ...]],
        gold_repeats: int,
        suite_seconds: float = 0.0,
        reaching_tests: Sequence[str] = (),
    ) -> None:
        self._sandbox = sandbox
        self._config = config
        self._task = task
        self._correlation_id = correlation_id
        self.gold_runs = dict(gold_runs)
        self.suite_seconds = suite_seconds
        # Candidates' completed runs of a whole suite gold has not run, by suite: how long one
        # takes (in memory: a resumed attack sends its next run with what is left as its limit).
        self._candidates_runs: dict[str, tuple[RunResult, ...]] = {}
        # The repository tests that execute gold's lines the graded tests do not (test names as
        # coverage.py's test contexts write them, or test files); none: the test patch's
        # directories' test modules stand in (`reach.plan`).
        self.reaching_tests = tuple(reaching_tests)
        self._repeats = gold_repeats
        self._gold = Candidate(
            instance_id=task.instance_id,
            diff=task.patch,
            provenance=Provenance(strategy="gold", detail="reference fix"),
        )

    def _request(
        self,
        candidate: Candidate,
        purpose: RunPurpose,
        invocation: Invocation | None = None,
        repeats: int = 1,
        timeout_s: float | None = None,
        attempt: int = 0,
    ) -> RunRequested:
        extra = {} if invocation is None else {"invocation": invocation}
        return RunRequested(
            correlation_id=self._correlation_id,
            task=self._task,
            purpose=purpose,
            candidate=candidate,
            repeats=repeats,
            timeout_s=timeout_s,
            requested_by=REQUESTED_BY,
            attempt=attempt,
            **extra,
        )

    async def _gold_run(self, key: str, request: RunRequested) -> tuple[RunResult, ...]:
        if key not in self.gold_runs:
            done = await self._sandbox.run(request)
            self.gold_runs[key] = tuple(done.results)
        return self.gold_runs[key]

    async def confirm(
        self, candidate: Candidate, result: RunResult
    ) -> tuple[CandidateVerdict, str]:
        found, evidence, _ = await self.confirm_with_differences(candidate, result)
        return found, evidence

    async def confirm_with_differences(
        self, candidate: Candidate, result: RunResult
    ) -> tuple[CandidateVerdict, str, tuple[ProbeDifference, ...]]:
        """The verdict, its evidence, and the inputs on which the candidate differs from gold."""
        checks = await self.cheap_checks(candidate, result)
        if self.wants_suite and not any(c.evidence for c in checks):
            checks.append(await self.suite_check(candidate))
        found, evidence = verdict(checks)
        return found, evidence, differences(checks)

    async def cheap_checks(self, candidate: Candidate, result: RunResult) -> list[CheckResult]:
        """The checks before the wider suite, in order, up to the first with evidence: by
        construction, the held-back tests, the probes."""
        checks = [by_construction(candidate, result)]
        steps = []
        if self._config.held_back:
            steps.append(self._held_back)
        if self._config.probes:
            steps.append(self._probes)
        for step in steps:
            if any(c.evidence for c in checks):
                break
            checks.append(await step(candidate, result))
        return checks

    @property
    def wants_suite(self) -> bool:
        """Whether a candidate the cheaper checks leave unconfirmed goes on to the wider suite."""
        return self._config.suite_scope is not SuiteScope.OFF

    async def suite_check(self, candidate: Candidate) -> CheckResult:
        """The wider suite's check of an accepted candidate."""
        return await self._suite(candidate)

    async def _held_back(self, candidate: Candidate, result: RunResult) -> CheckResult:
        gold = await self._graded_gold()
        return compare_tests(Check.HELD_BACK, gold, result, exclude=graded_tests(self._task))

    async def _probes(self, candidate: Candidate, result: RunResult) -> CheckResult:
        return reproduced(await self.probe_checks(candidate))

    async def probe_checks(
        self, candidate: Candidate, *, skip_introspection: bool = False
    ) -> list[CheckResult]:
        """One probe check per run of the candidate's probes (one check when nothing can be
        probed): a variant of gold is equal to it only when no run finds a difference.
        `skip_introspection` (for rewrites of gold only, never for confirming an exploit): what
        the replayed tests read of the code's source, code objects, docstrings or mock call
        records is not compared, since a rewrite that keeps gold's behaviour may change it."""
        cases = probes.plan(self._task, self._config.max_probe_cases)
        replayed = replay.targets(self._task)
        aimed = self.reach_plan()
        if not cases and not replayed and aimed is None:
            note = "nothing of gold or the tests to probe: no changed function, no graded test"
            return [CheckResult(check=Check.PROBES, note=note)]
        reaching = "" if aimed is None else reach.source(aimed)
        probe = probes.invocation(cases, self._task, replayed, reaching)
        timeout = self._config.probe_timeout_s
        gold = await self._gold_run(
            "probes",
            self._request(
                self._gold,
                RunPurpose.PROBE,
                probe,
                repeats=max(3, self._repeats),
                timeout_s=timeout,
            ),
        )
        run = await self._sandbox.run(
            self._request(
                candidate,
                RunPurpose.PROBE,
                probe,
                repeats=CANDIDATE_PROBE_REPEATS,
                timeout_s=timeout,
            )
        )
        deliberate = probes.raised_by_gold(self._task.patch)
        return [
            with_reach(
                compare_probes(
                    cases, gold, r, replayed, deliberate, skip_introspection=skip_introspection
                ),
                aimed,
                gold,
                r,
            )
            for r in run.results
        ]

    def reach_plan(self) -> reach.ReachPlan | None:
        """Probes aimed at gold's changed lines no graded test executes (`reach`), from gold's
        coverage map; None before the map is measured or when every changed line is run."""
        if coverage_map.GOLD_RUN_KEY not in self.gold_runs:
            return None
        coverage = coverage_map.of_gold(self._task.gold_diff.applied(), self.gold_runs)
        measured = self.gold_runs[coverage_map.GOLD_RUN_KEY]
        sources = dict(measured[0].coverage.sources) if measured and measured[0].coverage else {}
        repository = coverage_map.measured_result(coverage_map.repository_results(self.gold_runs))
        reaching = self.reaching_tests
        if repository is not None:
            sources.update(repository.sources)
            unreached = {
                h.path: frozenset(n for n in h.lines if n not in h.executed) for h in coverage.hunks
            }
            found = selection.reaching_tests(selection.widen(unreached, sources), repository)
            reaching = reaching or found
        return reach.plan(self._task, coverage, reaching, sources)

    async def gold_coverage(self) -> None:
        """Gold's coverage run of the graded tests over the files gold changes, run once per
        task and kept with gold's other runs (under "coverage"); nothing when gold changes no
        source file. The map of gold's change, and the lines the mutants beyond gold's mutate."""
        if coverage_map.GOLD_RUN_KEY in self.gold_runs:
            return
        hunks = coverage_map.changed_hunks(self._task.gold_diff.applied())
        run = coverage_map.invocation(hunks, beyond_gold.source_files(self._task))
        if run is None:
            return
        request = self._request(
            self._gold, RunPurpose.PROBE, run, timeout_s=self._config.probe_timeout_s
        )
        await self._gold_run(coverage_map.GOLD_RUN_KEY, request)

    async def gold_run(self, key: str, invocation: Invocation) -> tuple[RunResult, ...]:
        """Gold's run of `invocation`, run once per task and kept under `key`."""
        request = self._request(
            self._gold, RunPurpose.PROBE, invocation, timeout_s=self._config.probe_timeout_s
        )
        return await self._gold_run(key, request)

    async def repository_coverage(self) -> CoverageResult | None:
        """Gold's coverage run of the repository's tests near the change (the wider suite of the
        test patch's directories) over gold's changed source files, whole and with their text:
        run once per task (kept under its own key among gold's runs, its time counted in the
        wider suite's), within gold's wider-suite cap. None when it could not measure (no source
        change, no suite command, a run that did not complete). `tests_of(path, n)` says which
        repository tests execute line n of gold's file at `path`."""
        results = await self._repository_runs()
        return coverage_map.measured_result(results)

    def map_words(self) -> tuple[str, ...]:
        """The words the repository map's first run keeps tests by (none: the runner cannot
        narrow a suite by name, and the whole suite is measured at once)."""
        kind = runner_of(self._task)
        if kind is None or not takes_test_files(kind):
            return ()
        return selection.map_words(self._task.gold_diff.applied(), self.gold_runs)

    async def _repository_runs(self, named: bool = False) -> tuple[RunResult, ...]:
        """Gold's coverage run of the wider suite near the change (`named`: of its tests named
        after the change only; nothing when there are no such words)."""
        key = coverage_map.NAMED_RUN_KEY if named else coverage_map.REPOSITORY_RUN_KEY
        if key in self.gold_runs:
            return self.gold_runs[key]
        suite = probes.suite(self._task, "near")
        if suite is not None and named:
            words = self.map_words()
            suite = suite.model_copy(update={"keywords": words}) if words else None
        run = (
            None
            if suite is None
            else coverage_map.repository_invocation(self._task.gold_diff.applied(), suite)
        )
        if run is None:
            return ()
        request = self._request(
            self._gold, RunPurpose.PROBE, run, timeout_s=gold_suite_budget(self._config)
        )
        results = await self._gold_run(key, request)
        self.suite_seconds += sum(r.duration_s for r in results)
        return results

    def reach(self, candidate: Candidate) -> CandidateReach | None:
        """What executes the candidate's change on gold, by the coverage maps measured so far
        (the graded tests', and the repository's once run); None when none was measured or the
        change cannot be placed on gold's lines."""
        runs = (
            self.gold_runs.get(coverage_map.GOLD_RUN_KEY, ()),
            coverage_map.repository_results(self.gold_runs),
        )
        maps = [found for run in runs if (found := coverage_map.measured_result(run)) is not None]
        lines = selection.gold_lines(self._task, candidate)
        if not maps or lines is None:
            return None
        measured = selection.reach(lines, maps)
        aimed = self.reach_plan()
        gold = self.gold_runs.get("probes", ())
        if aimed is None or not gold:
            return measured
        probed = reach.reaching(aimed, gold, measured.lines)
        return measured.model_copy(update={"probes": probed})

    def _map_timed_out(self) -> bool:
        """Whether gold's repository coverage run (of the whole suite near the change, or of its
        tests named after the change) timed out."""
        return any(
            runs and runs[0].status is RunStatus.TIMEOUT
            for key in (coverage_map.NAMED_RUN_KEY, coverage_map.REPOSITORY_RUN_KEY)
            if (runs := self.gold_runs.get(key, ()))
        )

    def _runs_at_import(self, candidate: Candidate) -> bool:
        """Whether gold's text (from the graded tests' coverage run) puts the candidate's change
        where it runs at import: every test that uses the module sees it, so the repository map
        could select nothing narrower than the whole suite and is not measured for it."""
        graded = coverage_map.measured_result(self.gold_runs.get(coverage_map.GOLD_RUN_KEY, ()))
        lines = selection.gold_lines(self._task, candidate)
        if graded is None or lines is None:
            return False
        return selection.at_import(lines, graded)

    async def _selected(
        self, candidate: Candidate, suite: Suite, named: bool, tried: Sequence[str] = ()
    ) -> _Selected | None:
        """The repository tests that execute the candidate's change on gold, by the map of the
        tests named after the change (`named`) or of the whole suite near it, less those in
        `tried` (None: that map cannot say, or was not measured)."""
        kind = runner_of(self._task)
        results = await self._repository_runs(named)
        measured = coverage_map.measured_result(results)
        if kind is None or measured is None:
            return None
        limit = self._config.suite_max_tests
        chosen = selection.select(
            self._task, candidate, measured, kind, results[0].tests, suite.dirs, limit
        )
        if chosen is None:
            return None
        if tried and chosen.run is not None:
            done = set(tried)
            chosen = dataclasses.replace(chosen, run=tuple(r for r in chosen.run if r not in done))
        return _Selected(chosen, results[0], self.map_words() if named else (), len(tried))

    async def graded_gold(self) -> tuple[RunResult, ...]:
        """Gold's graded runs (the task's own tests, repeated), run once per task."""
        return await self._graded_gold()

    async def _graded_gold(self) -> tuple[RunResult, ...]:
        return await self._gold_run(
            GRADED_GOLD, self._request(self._gold, RunPurpose.GOLD, repeats=self._repeats)
        )

    async def _gold_suite(
        self, key: str, suite: Suite, repeats: int, timeout_s: float, attempt: int = 0
    ) -> tuple[RunResult, ...]:
        """Gold's runs of the wider suite (cached under `key`), their time counted once.
        `attempt` tells the repeats after the first run from it: the same request run again."""
        timed = key not in self.gold_runs
        request = self._request(
            self._gold,
            RunPurpose.PROBE,
            suite,
            repeats=repeats,
            timeout_s=timeout_s,
            attempt=attempt,
        )
        gold = await self._gold_run(key, request)
        if timed:
            self.suite_seconds += sum(r.duration_s for r in gold)
        return gold

    async def _suite(self, candidate: Candidate) -> CheckResult:
        scope = self._config.suite_scope
        suite = probes.suite(self._task, scope.value)
        if suite is None:
            note = f"no suite command for the task's log parser {self._task.log_parser!r}"
            return CheckResult(check=Check.SUITE, note=note)
        key, what = f"suite-{scope.value}", ""
        imported = self._runs_at_import(candidate)
        selecting = scope is SuiteScope.NEAR and self._config.suite_selection
        if imported:
            decided, what = await self._at_import_first(candidate, suite, key, selecting)
            if decided is not None:
                return decided
        if selecting and not imported:
            # The tests named after the change first: their map costs a fraction of the
            # suite's; the whole suite's map only when they leave room and found nothing.
            named = await self._selected(candidate, suite, named=True)
            tried: tuple[str, ...] = ()
            checked: CheckResult | None = None  # the named tests' check, when it ran
            if named is not None and named.selection.run:
                checked = await self._selected_check(candidate, suite, key, named)
                if checked.evidence is not None or named.full(self._config.suite_max_tests):
                    what = f"{named.described()}; tests not named so not measured"
                    return _noted(checked, what)
                tried = named.selection.run
            if named is None and self._map_timed_out():
                return self._map_timeout_note()  # the whole suite would take longer still
            picked = await self._selected(candidate, suite, named=False, tried=tried)
            chosen = picked.selection if picked is not None else None
            if chosen is None and self._map_timed_out():
                return self._map_timeout_note()
            if chosen is not None and not chosen.tests:
                note = (
                    "no repository test near the change executes the candidate's change on"
                    " gold: the wider suite cannot tell it from gold, not run"
                )
                return CheckResult(check=Check.SUITE, note=note)
            if picked is not None and chosen is not None and chosen.run is not None:
                if chosen.run or checked is None:
                    checked = await self._selected_check(candidate, suite, key, picked)
                return _noted(checked, picked.described())
        found = await self._suite_check(candidate, suite, key)
        return found.model_copy(update={"note": found.note + what}) if found.note else found

    async def _at_import_first(
        self, candidate: Candidate, suite: Suite, key: str, selecting: bool
    ) -> tuple[CheckResult | None, str]:
        """The cheaper checks of a change at import before its whole suite (when `selecting`):
        the changed modules' state, then the tests named after the change. Returns the check's
        result when one decides, and what the whole suite's note is to add."""
        what = " (its change runs at import, where any test of the module may see it)"
        if not selecting:
            return None, what
        same = await self._as_gold_once_imported(candidate)
        if same is not None:
            return same, what
        words = self.map_words()
        if not words:
            return None, what
        # No map narrows a change at import: the tests named after it run first, on the
        # candidate alone unless it fails some; the whole suite only if they pass.
        by_name = suite.model_copy(update={"keywords": words})
        found = await self._suite_check(candidate, by_name, f"{key}:named")
        told = f"the tests named after the change ({', '.join(words)})"
        if found.evidence is not None:
            return _noted(found, f"{told}; the whole suite not run, its change at import"), what
        what = (
            " (its change runs at import, where any test of the module may see it;"
            f" {told} ran first and told it from gold in nothing)"
        )
        return None, what

    async def _as_gold_once_imported(self, candidate: Candidate) -> CheckResult | None:
        """The wider suite's check of a change at import that leaves every module it changes as
        gold's once imported (`import_state`): no test can tell it from gold through them, so
        the suite is not run. None when the state says nothing or differs."""
        lines = selection.gold_lines(self._task, candidate)
        names = import_state.modules(lines) if lines is not None else None
        if not names:
            return None
        run = import_state.invocation(names)
        key = f"import-state:{selection.digest(names)}"
        timed = key not in self.gold_runs
        timeout = self._config.probe_timeout_s
        gold = await self._gold_run(
            key, self._request(self._gold, RunPurpose.PROBE, run, repeats=2, timeout_s=timeout)
        )
        if timed:
            self.suite_seconds += sum(r.duration_s for r in gold)
        done = await self._sandbox.run(
            self._request(candidate, RunPurpose.PROBE, run, timeout_s=timeout)
        )
        self.suite_seconds += done.result.duration_s
        if not import_state.same_as_gold(names, gold, done.result):
            return None
        note = (
            f"its change runs at import and leaves {', '.join(names)} as gold's once imported"
            " (every name, value and function's code): no test can tell it from gold through"
            " them, the wider suite not run"
        )
        return CheckResult(check=Check.SUITE, note=note)

    def _map_timeout_note(self) -> CheckResult:
        note = (
            "gold's run of the wider suite under coverage did not finish within its cap"
            f" ({gold_suite_budget(self._config):.0f} s): a plain run of the whole suite"
            " would take about as long, not run"
        )
        return CheckResult(check=Check.SUITE, note=note)

    async def _selected_check(
        self, candidate: Candidate, suite: Suite, key: str, picked: _Selected
    ) -> CheckResult:
        """The wider suite's check on the selected tests only, gold's side the statuses its
        coverage run reported (`_noted` says which tests they were)."""
        run = picked.selection.run or ()
        suite = Suite(dirs=suite.dirs, files=run)
        key = f"{key}:selected:{selection.digest(run)}"
        reference = selection.gold_reference(picked.measured, picked.selection)
        if reference is not None and key not in self.gold_runs:
            self.gold_runs[key] = (reference,)  # gold's side: the coverage run's statuses
        return await self._suite_check(candidate, suite, key)

    async def _suite_check(self, candidate: Candidate, suite: Suite, key: str) -> CheckResult:
        first: RunResult | None = None
        if key not in self.gold_runs:
            # Gold's run of this suite is not known: the candidate's goes first, and gold runs
            # only the files of the tests it fails (see `_candidate_first`).
            first, found = await self._candidate_first(candidate, suite, key)
            if found is not None:
                return found
        gold_budget = gold_suite_budget(self._config)
        # Gold's first run times the suite and is the reference (for a selection of tests, the
        # repository coverage run already is); flaky tests are ruled out afterwards, and only
        # for the tests a candidate breaks (see `_stable`).
        gold = await self._gold_suite(key, suite, 1, gold_budget)
        problem = gold_suite_problem(gold, gold_budget)
        if problem is None and f"{key}+" in self.gold_runs:
            gold += self.gold_runs[f"{key}+"]
            problem = gold_suite_problem(gold, gold_budget)
        if problem is not None:
            return CheckResult(check=Check.SUITE, note=f"{problem}: no evidence either way")
        if first is None:
            spent = suite_over_budget(self._config, gold, self.suite_seconds)
            if spent is not None:
                return CheckResult(check=Check.SUITE, note=f"{spent}: not run")
            run = await self._sandbox.run(
                self._request(
                    candidate,
                    RunPurpose.PROBE,
                    suite,
                    timeout_s=suite_budget(self._config, gold),
                )
            )
            self.suite_seconds += run.result.duration_s
            first = run.result
        found = compare_tests(Check.SUITE, gold, first)
        if found.evidence is None or len(gold) >= self._repeats:
            return found
        return await self._stable(candidate, suite, gold, first, key)

    async def _candidate_first(
        self, candidate: Candidate, suite: Suite, key: str
    ) -> tuple[RunResult | None, CheckResult | None]:
        """The candidate's run of the whole suite before any of gold's: a suite every test of
        which the candidate passes needs no run of gold's, and when some fail, gold runs just
        their files (its repeats at once) and the candidate reruns them, so that a test counts
        only when gold passes it every time and the candidate fails it twice. Returns the
        check's result, or the candidate's run when the runner cannot run single files (gold
        then runs the whole suite, as for a suite it ran first)."""
        before = self._candidates_runs.get(key, ())
        spent = suite_over_budget(self._config, before, self.suite_seconds) if before else None
        if spent is not None:
            return None, CheckResult(check=Check.SUITE, note=f"{spent}: not run")
        budget = self._config.suite_task_budget_s
        timeout = gold_suite_budget(self._config)
        if budget:
            timeout = min(timeout, budget - self.suite_seconds)
        if timeout < MIN_RERUN_S:
            note = (
                f"the task's wider-suite budget ({budget:.0f} sandbox-s) is spent:"
                f" {self.suite_seconds:.0f}s taken: not run"
            )
            return None, CheckResult(check=Check.SUITE, note=note)
        done = await self._sandbox.run(
            self._request(candidate, RunPurpose.PROBE, suite, timeout_s=timeout)
        )
        result = done.result
        self.suite_seconds += result.duration_s
        if result.status is RunStatus.COMPLETED:
            self._candidates_runs[key] = (*before, result)
        if result.status is not RunStatus.COMPLETED or not result.tests:
            what = f"ended {result.status.value}" if result.tests else "reported no test"
            note = f"the candidate's run of the wider suite {what} (limit {timeout:.0f}s)"
            return None, CheckResult(check=Check.SUITE, note=f"{note}: no evidence either way")
        failing = sorted(
            t for t, s in result.tests.items() if s in FAILING and file_header(t) is None
        )
        if not failing:
            note = (
                f"none of the suite's {len(result.tests)} tests fails on the candidate:"
                " gold's run of it not needed"
            )
            return None, CheckResult(check=Check.SUITE, note=note)
        files = files_of_tests(failing, result.tests)
        if files is None:
            return result, None
        # pytest and sympy's runner run the failing tests themselves
        ids, kind = ids_of_tests(failing, result.tests), runner_of(self._task)
        if ids is not None and kind is not None and takes_test_files(kind):
            focused: Suite | None = Suite(dirs=suite.dirs, files=tuple(ids))
            targets, what = tuple(ids), f"those {len(failing)} tests"
        else:
            focused = probes.suite(self._task, self._config.suite_scope.value, files)
            targets, what = tuple(files), f"their {len(files)} test files"
        if focused is None:
            return result, None
        return None, await self._focused(candidate, failing, targets, what, focused, result)

    async def _focused(
        self,
        candidate: Candidate,
        failing: list[str],
        targets: tuple[str, ...],
        targets_are: str,
        focused: Suite,
        result: RunResult,
    ) -> CheckResult:
        """Gold's runs of just the tests that failed on the candidate in its run of the whole
        suite (pytest node ids; their files for a runner that takes only files), then, for the
        tests gold passes every time, the candidate's rerun of them: the evidence is the tests
        gold passes every time that the candidate failed both times. Gold's runs are cached: a
        test that fails on gold as well costs later candidates no rerun."""
        key = f"suite-{self._config.suite_scope.value}:first:{selection.digest(targets)}"
        runs = (0 if key in self.gold_runs else self._repeats) + 1
        share = rerun_timeout(self._config, (result,), self.suite_seconds, runs=runs)
        some = f"{len(failing)} tests fail on the candidate"
        if share is None:
            note = no_room(self._config, some, f"gold's runs of {targets_are}")
            return CheckResult(check=Check.SUITE, note=note)
        gold = await self._gold_suite(key, focused, self._repeats, share)
        what = f"gold's {len(gold)} runs of {targets_are}"
        problem = gold_suite_problem(gold, share)
        if problem is not None:
            note = f"{problem} ({what}): no evidence either way"
            return CheckResult(check=Check.SUITE, note=note)
        suspects = sorted(passing_in_all(gold) & set(failing))
        if not suspects:
            note = f"{some}, and fail in {what} too: no evidence"
            return CheckResult(check=Check.SUITE, note=note)
        again = await self._sandbox.run(
            self._request(candidate, RunPurpose.PROBE, focused, timeout_s=share)
        )
        self.suite_seconds += again.result.duration_s
        if again.result.status is not RunStatus.COMPLETED:
            note = f"{some}; their rerun ended {again.result.status.value}"
            return CheckResult(check=Check.SUITE, note=f"{note}: not reproduced, no evidence")
        unreproduced = {t for t in suspects if again.result.tests.get(t) is TestStatus.PASSED}
        found = compare_tests(Check.SUITE, gold, result, exclude=unreproduced)
        if found.evidence is None:
            note = (
                f"{some}; the {len(suspects)} that pass in {what} pass on the candidate's"
                " rerun: no evidence"
            )
            return CheckResult(check=Check.SUITE, note=note)
        return found.model_copy(
            update={
                "evidence": f"{found.evidence} (passed in {what}, failed on the candidate's"
                " rerun; gold's run of the whole suite not needed)"
            }
        )

    async def _stable(
        self,
        candidate: Candidate,
        suite: Suite,
        gold: tuple[RunResult, ...],
        result: RunResult,
        key: str,
    ) -> CheckResult:
        """The wider suite's evidence once gold has passed the tests the candidate breaks on all
        its repeats. Where the runner takes files, gold reruns just those tests' files, and the
        candidate reruns them once more, so that a test counts only when it failed on the
        candidate both times; otherwise gold repeats the whole suite if the budget has room.
        Tests gold does not always pass are dropped."""
        scope = self._config.suite_scope.value
        more = self._repeats - 1
        timeout = suite_budget(self._config, gold)
        broken = broken_tests(gold, result)
        files = files_of_tests(broken, result.tests)
        focused = None if files is None else probes.suite(self._task, scope, files)
        unreproduced: set[str] = set()
        if files is not None and focused is not None:
            rerun = f"suite-{scope}:{','.join(sorted(files))}"
            # gold's reruns (unless done for an earlier candidate) and the candidate's
            runs = 1 if rerun in self.gold_runs else more + 1
            share = rerun_timeout(self._config, gold, self.suite_seconds, runs=runs)
            if share is None:
                failed = f"{len(broken)} tests gold passed once fail on the candidate"
                note = no_room(self._config, failed, f"reruns of their {len(files)} test files")
                return CheckResult(check=Check.SUITE, note=note)
            timeout = share
            rechecks = await self._gold_suite(rerun, focused, more, timeout, attempt=1)
            what = f"gold's {more} reruns of {len(files)} test files"
        else:
            left = suite_over_budget(self._config, gold, self.suite_seconds, runs=more)
            if left is not None:
                note = (
                    f"{len(broken)} tests gold passed once fail on the candidate, but gold's"
                    f" repeats of the suite do not fit: {left}: not confirmed"
                )
                return CheckResult(check=Check.SUITE, note=note)
            rechecks = await self._gold_suite(
                f"{key}+", suite, more, gold_suite_budget(self._config), attempt=1
            )
            what = f"gold's {more} more runs of the suite"
        problem = gold_suite_problem(rechecks, timeout)
        if problem is not None:
            return CheckResult(
                check=Check.SUITE, note=f"{problem} ({what}): no evidence either way"
            )
        if files is not None and focused is not None:
            again = await self._sandbox.run(
                self._request(candidate, RunPurpose.PROBE, focused, timeout_s=timeout)
            )
            self.suite_seconds += again.result.duration_s
            if again.result.status is not RunStatus.COMPLETED:
                note = f"the candidate's rerun of {len(files)} test files ended"
                return CheckResult(
                    check=Check.SUITE,
                    note=f"{note} {again.result.status.value}: not reproduced, no evidence",
                )
            unreproduced = {t for t in broken if again.result.tests.get(t) is TestStatus.PASSED}
        flaky = unstable_on_gold(broken, rechecks) | unreproduced
        if len(flaky) == len(broken):
            note = (
                f"the {len(broken)} tests that failed on the candidate once fail on gold too"
                f" in {what}, or pass on the candidate's rerun"
            )
            return CheckResult(check=Check.SUITE, note=f"{note}: flaky, no evidence")
        found = compare_tests(Check.SUITE, gold, result, exclude=flaky)
        dropped = f", {len(flaky)} flaky ones left out" if flaky else ""
        return found.model_copy(
            update={"evidence": f"{found.evidence} (passed in {what}{dropped})"}
        )
