"""Confirmed incorrectness: construction, held-back tests, differential probes, wider suite."""

from __future__ import annotations

import dataclasses

import pytest

from hackaudit.attacker.domain.confirm import coverage_map, import_state, probes, selection
from hackaudit.attacker.domain.confirm.confirmation import (
    Check,
    CheckResult,
    ConfirmationConfig,
    SuiteScope,
    by_construction,
    compare_probes,
    compare_tests,
    verdict,
)
from hackaudit.attacker.service_layer.confirm import Confirmer
from hackaudit.sandbox.domain.run_spec import graded_task, run_test_patch
from hackaudit.sandbox.domain.runners import command_for
from hackaudit.shared.anatomy import emit_patch, read_patch
from hackaudit.shared.contracts import (
    Candidate,
    CandidateVerdict,
    Coverage,
    CoverageResult,
    FileCoverage,
    PatchFlags,
    Probe,
    Provenance,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Suite,
    TestStatus,
)
from tests.scripted_sandbox import ScriptedSandbox, failed, passed

P, F = TestStatus.PASSED, TestStatus.FAILED

# The probe module's always-passing test, as the sandbox grades a probe run on it.
LOADED_TEST = (
    "test_hackaudit_probe_loaded (test_hackaudit_probe.HackauditProbe.test_hackaudit_probe_loaded)"
)


def _candidate(
    strategy: str = "partial_fix", diff: str = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
) -> Candidate:
    return Candidate(instance_id="tiny__pkg-1", diff=diff, provenance=Provenance(strategy=strategy))


@pytest.mark.parametrize(
    ("strategy", "flags", "found"),
    [
        ("harness", PatchFlags(), "produced by the harness strategy"),
        (
            "llm",
            PatchFlags(touched_test_files=("tests/test_a.py",)),
            "touches test files: tests/test_a.py",
        ),
        (
            "mutation",
            PatchFlags(touched_test_config=("setup.cfg",)),
            "touches test configuration: setup.cfg",
        ),
        ("partial_fix", PatchFlags(), None),
    ],
)
def test_by_construction(strategy: str, flags: PatchFlags, found: str | None) -> None:
    result = by_construction(
        _candidate(strategy), RunResult(status=RunStatus.COMPLETED, flags=flags)
    )
    if found is None:
        assert result.evidence is None
    else:
        assert result.evidence is not None and found in result.evidence


def _run(tests: dict[str, TestStatus], status: RunStatus = RunStatus.COMPLETED) -> RunResult:
    return RunResult(status=status, tests=tests)


@pytest.mark.parametrize(
    ("gold", "candidate", "exclude", "evidence"),
    [
        ([{"a": P, "b": P}] * 3, {"a": P, "b": F}, (), "b (FAILED)"),
        ([{"a": P, "b": P}], {"a": P}, (), "b (not reported)"),
        ([{"a": P, "b": P}, {"a": P, "b": F}], {"a": P, "b": F}, (), None),  # b is flaky on gold
        ([{"a": P, "b": P}], {"a": P, "b": F}, ("b",), None),  # b is graded, not held back
        ([{"a": F}], {"a": F}, (), None),  # gold fails it: no evidence either way
        ([{"a": P}], {"a": P}, (), None),
    ],
)
def test_compare_tests(gold, candidate, exclude, evidence) -> None:
    result = compare_tests(Check.SUITE, [_run(g) for g in gold], _run(candidate), exclude=exclude)
    if evidence is None:
        assert result.evidence is None and result.note
    else:
        assert result.evidence is not None and evidence in result.evidence


def test_compare_tests_needs_completed_runs() -> None:
    gold = [_run({"a": P})]
    assert (
        compare_tests(Check.SUITE, gold, _run({}, RunStatus.TIMEOUT)).note
        == "candidate run ended timeout"
    )
    assert (
        compare_tests(Check.SUITE, [_run({"a": P}, RunStatus.INFRA_ERROR)], _run({"a": F})).evidence
        is None
    )


def test_verdict_is_exploit_only_with_evidence() -> None:
    agree = [CheckResult(check=Check.SUITE, note="10 tests agree with gold")]
    v, text = verdict(agree)
    assert v is CandidateVerdict.UNCONFIRMED and "10 tests agree with gold" in text
    v, text = verdict([*agree, CheckResult(check=Check.PROBES, evidence="case3 differs")])
    assert v is CandidateVerdict.EXPLOIT and text == "differential probes: case3 differs"


# --- the confirmer against a scripted sandbox ---------------------------------------------------


def _is_gold(request: RunRequested, task) -> bool:
    return request.candidate is not None and request.candidate.diff == task.patch


def scripted(
    task, *, held_back_broken: bool = False, probe_differs: bool = False, suite_broken: bool = False
):
    graded = [*task.fail_to_pass, *task.pass_to_pass]
    held = "tests/test_core.py::test_mean_empty"
    cases = probes.plan(task)

    def rule(request: RunRequested):
        gold = _is_gold(request, task)
        if request.purpose is RunPurpose.GOLD:
            return passed([*graded, held])
        if request.purpose is not RunPurpose.PROBE:
            return None
        if isinstance(request.invocation, Probe):
            differs = probe_differs and not gold
            names = [
                f"{probes.PROBE_PATH}::HackauditProbe::test_case{i}_"
                + ("b" if differs and i == 1 else "a") * 12
                + f"_returns_{i + 1 if differs and i == 1 else i}"
                for i in range(len(cases))
            ]
            return passed([LOADED_TEST, *names])
        suite = ["tests/test_core.py::test_clamp", "tests/test_other.py::test_x"]
        if gold or not suite_broken:
            return passed(suite)
        return failed({suite[0]: P, suite[1]: F})

    return rule


def _confirmer(task, sandbox, **config) -> Confirmer:
    return Confirmer(sandbox, ConfirmationConfig(**config), task, "audit-1", {}, gold_repeats=3)


def _accepted(task, extra: tuple[str, ...] = ("tests/test_core.py::test_mean_empty",)) -> RunResult:
    return passed([*task.fail_to_pass, *task.pass_to_pass, *extra])


async def test_held_back_test_failure_confirms_and_gold_runs_once(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task)])
    confirmer = _confirmer(tiny.task, sandbox)
    for _ in range(2):
        v, evidence = await confirmer.confirm(_candidate(), _accepted(tiny.task, extra=()))
        assert v is CandidateVerdict.EXPLOIT
        assert "held-back tests" in evidence and "test_mean_empty (not reported)" in evidence
    assert sandbox.count(RunPurpose.GOLD) == 1
    assert sandbox.requests[0].repeats == 3
    assert set(confirmer.gold_runs) == {"gold"}


async def test_probe_difference_confirms_with_the_input(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task, probe_differs=True)])
    confirmer = _confirmer(tiny.task, sandbox)
    v, evidence = await confirmer.confirm(_candidate(), _accepted(tiny.task))
    assert v is CandidateVerdict.EXPLOIT
    case = probes.plan(tiny.task)[1].describe()
    assert f"differential probes: 1 of {len(probes.plan(tiny.task))} probe cases differ" in evidence
    assert f"{case}: gold returns_1, candidate returns_2" in evidence
    gold, candidate = [r for r in sandbox.requests if r.purpose is RunPurpose.PROBE]
    assert (
        gold.repeats == 3 and gold.candidate is not None and gold.candidate.diff == tiny.task.patch
    )
    probe = gold.invocation
    assert isinstance(probe, Probe) and probe.test == probes.PROBE_PATH
    assert gold.task == tiny.task and gold.test_patch is None  # beside the task's test patch
    assert graded_task(gold.task, probe).fail_to_pass == (LOADED_TEST,)
    run = command_for(gold.task, probe, run_test_patch(gold.task, probe, None), None)
    assert run.command.startswith("PYTHONHASHSEED=0 ")
    assert run.command.endswith(" -m unittest -v test_hackaudit_probe")
    assert run.parser == "unittest"
    assert candidate.invocation == probe and "HackauditProbe" in probe.files[probe.test]
    assert (
        candidate.candidate is not None and candidate.candidate.provenance.strategy == "partial_fix"
    )
    await confirmer.confirm(
        _candidate(diff="--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+c\n"), _accepted(tiny.task)
    )
    assert (
        sum(
            r.candidate.diff == tiny.task.patch
            for r in sandbox.requests
            if r.candidate and r.purpose is RunPurpose.PROBE
        )
        == 1
    )


def test_compare_probes_notes() -> None:
    cases = [probes.ProbeCase(("m",), "f", (1,))]
    ok = RunResult(status=RunStatus.COMPLETED, tests={})
    assert compare_probes(cases, [ok], _run({}, RunStatus.TIMEOUT)).note == (
        "candidate run ended timeout"
    )
    assert compare_probes(cases, [ok], ok).note == (
        "the probe module did not load under gold (log ends: )"
    )
    loaded = RunResult(
        status=RunStatus.COMPLETED,
        tests={"test_hackaudit_probe_loaded (test_hackaudit_probe.HackauditProbe)": P},
    )
    assert compare_probes(cases, [loaded], loaded).note == "gold's probe outcomes unstable"


def test_held_back_note_says_when_every_test_is_graded() -> None:
    result = compare_tests(Check.HELD_BACK, [_run({"a": P})], _run({"a": P}), exclude=("a",))
    assert (
        result.evidence is None
        and result.note == "none held back: all 1 tests gold passes are graded"
    )


async def test_wider_suite_failure_confirms(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task, suite_broken=True)])
    v, evidence = await _confirmer(tiny.task, sandbox, probes=False).confirm(
        _candidate(), _accepted(tiny.task)
    )
    assert v is CandidateVerdict.EXPLOIT
    assert "wider test suite" in evidence and "tests/test_other.py::test_x (FAILED)" in evidence
    assert "passed in gold's 3 runs of those 1 tests" in evidence
    assert "gold's run of the whole suite not needed" in evidence
    suites = [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    # the candidate first, then gold (its repeats) and the candidate again on only the test the
    # candidate breaks (a pytest node id): gold never runs the whole suite
    assert [(r.candidate.provenance.strategy, r.repeats) for r in suites] == [
        ("partial_fix", 1),
        ("gold", 3),
        ("partial_fix", 1),
    ]
    suite = Suite(dirs=("tests",))
    focused = Suite(dirs=("tests",), files=("tests/test_other.py::test_x",))
    assert [r.invocation for r in suites] == [suite, focused, focused]
    assert all(r.task == tiny.task and r.test_patch is None for r in suites)
    commands = {
        command_for(tiny.task, r.invocation, tiny.task.test_patch, None).command for r in suites
    }
    files = " tests/test_core.py tests/test_new.py"
    assert commands == {
        f"python -m pytest -rA -p no:cacheprovider tests{files}",
        # a rerun of given tests runs exactly those
        "python -m pytest -rA -p no:cacheprovider tests/test_other.py::test_x",
    }


def _suite_where_test_x_fails(task, fails):
    """A wider suite whose `tests/test_other.py::test_x` fails where `fails(gold, n)` says (`n`:
    that side's run of the suite, from 1, a request's repeats counted one by one)."""
    runs = {True: 0, False: 0}

    def rule(request: RunRequested) -> list[RunResult] | None:
        if not isinstance(request.invocation, Suite):
            return None
        suite = ["tests/test_core.py::test_clamp", "tests/test_other.py::test_x"]
        gold = _is_gold(request, task)
        results = []
        for _ in range(request.repeats):
            runs[gold] += 1
            broken = fails(gold, runs[gold])
            results.append(failed({suite[0]: P, suite[1]: F}) if broken else passed(suite))
        return results

    return rule


def _flaky_on_gold(task):
    """test_x passes on gold's first run only, and always fails on the candidate."""
    return _suite_where_test_x_fails(task, lambda gold, n: not gold or n > 1)


def _flaky_on_the_candidate(task):
    """test_x fails on the candidate's first run of the wider suite only."""
    return _suite_where_test_x_fails(task, lambda gold, n: not gold and n == 1)


@pytest.mark.parametrize(
    ("flaky", "said"),
    [
        # gold does not always pass the test the candidate fails
        (
            _flaky_on_gold,
            ("fail in gold's 3 runs of those 1 tests too", ": no evidence"),
        ),
        # the candidate's rerun does not reproduce its failure
        (_flaky_on_the_candidate, ("pass on the candidate's rerun: no evidence",)),
    ],
)
async def test_a_suite_failure_that_is_not_stable_is_no_evidence(tiny, flaky, said) -> None:
    sandbox = ScriptedSandbox([flaky(tiny.task), scripted(tiny.task)])
    v, evidence = await _confirmer(tiny.task, sandbox, probes=False).confirm(
        _candidate(), _accepted(tiny.task)
    )
    assert v is CandidateVerdict.UNCONFIRMED
    for text in said:
        assert text in evidence


async def test_a_test_gold_fails_too_costs_no_rerun_and_gold_runs_it_once(tiny) -> None:
    """test_x fails on gold as on every candidate (a failure the repository already has): gold's
    runs of it are made once, and no candidate reruns it."""
    sandbox = ScriptedSandbox([_suite_where_test_x_fails(tiny.task, lambda gold, n: True)])
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    for _ in range(3):
        v, evidence = await confirmer.confirm(_candidate(), _accepted(tiny.task))
        assert v is CandidateVerdict.UNCONFIRMED
        assert "1 tests fail on the candidate, and fail in gold's 3 runs" in evidence
    suites = [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    gold = [r for r in suites if _is_gold(r, tiny.task)]
    only_x = ("tests/test_other.py::test_x",)
    assert [(r.repeats, r.invocation.files) for r in gold] == [(3, only_x)]
    assert len(suites) - len(gold) == 3  # each candidate's one run of the whole suite


async def test_indistinguishable_candidate_is_unconfirmed(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task)])
    v, evidence = await _confirmer(tiny.task, sandbox).confirm(_candidate(), _accepted(tiny.task))
    assert v is CandidateVerdict.UNCONFIRMED
    for check in ("held-back tests", "differential probes", "wider test suite"):
        assert check in evidence


async def test_harness_candidate_needs_no_runs(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task)])
    v, _ = await _confirmer(tiny.task, sandbox).confirm(_candidate("harness"), _accepted(tiny.task))
    assert v is CandidateVerdict.EXPLOIT and sandbox.requests == []


async def test_checks_can_be_switched_off(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task, suite_broken=True)])
    confirmer = _confirmer(
        tiny.task, sandbox, held_back=False, probes=False, suite_scope=SuiteScope.OFF
    )
    v, _ = await confirmer.confirm(_candidate(), _accepted(tiny.task))
    assert v is CandidateVerdict.UNCONFIRMED and sandbox.requests == []


def test_a_probe_difference_counts_only_when_every_candidate_run_shows_it() -> None:
    from hackaudit.attacker.domain.confirm.confirmation import Check, CheckResult
    from hackaudit.attacker.service_layer.confirm import reproduced

    seen = CheckResult(check=Check.PROBES, evidence="f(1): gold returns 1, candidate returns 2")
    nothing = CheckResult(check=Check.PROBES, note="37 probe cases agree with gold")
    assert reproduced([seen, seen]) == seen
    assert reproduced([nothing, nothing]) == nothing
    once = reproduced([seen, nothing])
    assert once.evidence is None and "not reproduced" in once.note


def _suite_of_100_s(request: RunRequested) -> RunResult | None:
    """Every run of the wider suite passes in 100 s."""
    if isinstance(request.invocation, Suite):
        names = ["tests/test_core.py::test_clamp", "tests/test_other.py::test_x"]
        return passed(names).model_copy(update={"duration_s": 100.0})
    return None


async def test_wider_suite_stops_when_the_tasks_budget_for_it_is_spent(tiny) -> None:
    # The suite takes 100 s a run and no candidate breaks a test: gold never runs it, three
    # candidates' runs take 300 of the 350 s budget, and a fourth (100 s more) would pass it.
    sandbox = ScriptedSandbox([_suite_of_100_s, scripted(tiny.task)])
    confirmer = _confirmer(tiny.task, sandbox, probes=False, suite_task_budget_s=350.0)
    suites = []
    for _ in range(4):
        _, evidence = await confirmer.confirm(_candidate(), _accepted(tiny.task))
        suites.append(evidence)
    runs = [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    assert [(r.candidate.provenance.strategy, r.repeats) for r in runs] == [("partial_fix", 1)] * 3
    assert [r.timeout_s for r in runs] == [350.0, 250.0, 150.0]  # never past the budget
    assert confirmer.suite_seconds == 300.0
    assert "gold's run of it not needed" in suites[0]
    assert "wider-suite budget (350 sandbox-s) is spent: 300s taken" in suites[3]
    assert "budget" not in suites[0] and "budget" not in suites[2]

    def resumed(spent: float) -> Confirmer:
        """The confirmer of a restarted attacker, with what the suite had taken."""
        config = ConfirmationConfig(probes=False, suite_task_budget_s=350.0)
        return Confirmer(
            sandbox, config, tiny.task, "audit-1", confirmer.gold_runs, 3, suite_seconds=spent
        )

    # Resumed (a restart) with what was spent: the next run gets what is left as its limit.
    await resumed(confirmer.suite_seconds).confirm(_candidate(), _accepted(tiny.task))
    runs = [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    assert runs[-1].timeout_s == 50.0
    # With the budget taken in full, nothing more runs.
    before = len(sandbox.requests)
    _, evidence = await resumed(350.0).confirm(_candidate(), _accepted(tiny.task))
    assert "is spent" in evidence and len(sandbox.requests) == before


async def test_a_suite_too_slow_for_two_candidates_runs_once_and_never_on_gold(tiny) -> None:
    sandbox = ScriptedSandbox([_suite_of_100_s, scripted(tiny.task)])
    confirmer = _confirmer(tiny.task, sandbox, probes=False, suite_task_budget_s=150.0)
    _, evidence = await confirmer.confirm(_candidate(), _accepted(tiny.task))
    assert "none of the suite's 2 tests fails on the candidate" in evidence
    for _ in range(2):
        _, evidence = await confirmer.confirm(_candidate(), _accepted(tiny.task))
        assert "wider-suite budget (150 sandbox-s) is spent: 100s taken, one more run" in evidence
    runs = [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    assert [(r.candidate.provenance.strategy, r.repeats) for r in runs] == [("partial_fix", 1)]


def _slow_suite_broken_by_the_candidate(task):
    """A 100 s wider suite, one test of which the candidate breaks; its name carries no file (a
    unittest name), so only gold's repeats of the whole suite can rule out a flaky test."""

    def rule(request: RunRequested) -> RunResult | None:
        if not isinstance(request.invocation, Suite):
            return None
        suite = ["test_clamp (tests.test_core.T)", "test_x (tests.test_other.T)"]
        result = passed(suite) if _is_gold(request, task) else failed({suite[0]: P, suite[1]: F})
        return result.model_copy(update={"duration_s": 100.0})

    return rule


async def test_without_test_files_gold_repeats_the_whole_suite_when_the_budget_has_room(
    tiny,
) -> None:
    rule = _slow_suite_broken_by_the_candidate(tiny.task)
    roomy = _confirmer(tiny.task, ScriptedSandbox([rule]), probes=False, suite_task_budget_s=400.0)
    v, evidence = await roomy.confirm(_candidate(), _accepted(tiny.task))
    assert v is CandidateVerdict.EXPLOIT and "passed in gold's 2 more runs of the suite" in evidence
    assert roomy.suite_seconds == 400.0

    tight = _confirmer(tiny.task, ScriptedSandbox([rule]), probes=False, suite_task_budget_s=350.0)
    v, evidence = await tight.confirm(_candidate(), _accepted(tiny.task))
    assert v is CandidateVerdict.UNCONFIRMED
    assert "1 tests gold passed once fail on the candidate, but gold's repeats" in evidence


def _slow_pytest_suite_broken_by_the_candidate(task):
    """A wider suite whose whole runs take 100 s, `tests/test_other.py::test_x` of which the
    candidate breaks; a run of just that test takes 5 s."""

    def rule(request: RunRequested) -> RunResult | None:
        if not isinstance(request.invocation, Suite):
            return None
        suite = ["tests/test_core.py::test_clamp", "tests/test_other.py::test_x"]
        focused = request.invocation.files == ("tests/test_other.py::test_x",)
        if focused:
            suite = suite[1:]
        result = (
            passed(suite)
            if _is_gold(request, task)
            else failed({**dict.fromkeys(suite, P), suite[-1]: F})
        )
        return result.model_copy(update={"duration_s": 5.0 if focused else 100.0})

    return rule


@pytest.mark.parametrize(
    ("budget", "timeout", "found"),
    [
        (2000.0, 300.0, True),  # room: the reruns get a candidate's suite time (3 x 100 s)
        (180.0, 20.0, True),  # 80 s left: an even quarter each for gold's 3 runs and the rerun
        (103.0, None, False),  # under a second each left: no rerun
    ],
)
async def test_reruns_of_the_broken_files_are_held_to_the_tasks_budget(
    tiny, budget, timeout, found
) -> None:
    rule = _slow_pytest_suite_broken_by_the_candidate(tiny.task)
    sandbox = ScriptedSandbox([rule])
    confirmer = _confirmer(tiny.task, sandbox, probes=False, suite_task_budget_s=budget)
    v, evidence = await confirmer.confirm(_candidate(), _accepted(tiny.task))
    reruns = [
        r
        for r in sandbox.requests
        if isinstance(r.invocation, Suite)
        and r.invocation.files == ("tests/test_other.py::test_x",)
    ]
    if found:
        assert v is CandidateVerdict.EXPLOIT and "gold's 3 runs of those 1 tests" in evidence
        assert [(r.repeats, r.timeout_s) for r in reruns] == [(3, timeout), (1, timeout)]
        assert confirmer.suite_seconds == 120.0 <= budget
    else:
        assert v is CandidateVerdict.UNCONFIRMED and reruns == []
        assert "has no room for gold's runs of those 1 tests: not confirmed" in evidence


# --- test selection by the repository coverage map ------------------------------------------


def _without_last_hunk(task) -> Candidate:
    """A partial fix: gold with its last hunk left out."""
    gold = read_patch(task.patch)
    (file,) = gold.files
    kept = dataclasses.replace(file, hunks=file.hunks[:-1])
    diff = emit_patch(dataclasses.replace(gold, files=(kept,)))
    return Candidate(
        instance_id=task.instance_id, diff=diff, provenance=Provenance(strategy="partial_fix")
    )


def _repository_map(task, runs_last_hunk: str | None):
    """The repository coverage run on gold: every changed line run by tests/test_core.py's
    `test_clamp`, the last hunk's by `runs_last_hunk` (None: by no test)."""
    hunks = coverage_map.changed_hunks(task.gold_diff.applied())
    names = ("tests.test_core.test_clamp", "tests.test_other.test_x")
    executed: dict[int, tuple[int, ...]] = {}
    missing: list[int] = []
    for hunk in hunks:
        for n in hunk.lines:
            if hunk is not hunks[-1]:
                executed[n] = (0,)
            elif runs_last_hunk is None:
                missing.append(n)
            else:
                executed[n] = (names.index(runs_last_hunk),)
    measured = CoverageResult(
        tests=names,
        files={"pkg/core.py": FileCoverage(executed=executed, missing=tuple(missing))},
        per_test=True,
    )

    def rule(request: RunRequested) -> RunResult | None:
        if not isinstance(request.invocation, Coverage) or request.invocation.suite is None:
            return None
        reported = ["tests/test_core.py::test_clamp", "tests/test_other.py::test_x"]
        return passed(reported).model_copy(update={"coverage": measured, "duration_s": 9.0})

    return rule


async def test_the_wider_suite_runs_only_the_tests_that_execute_the_change_on_gold(tiny) -> None:
    sandbox = ScriptedSandbox(
        [_repository_map(tiny.task, "tests.test_other.test_x"), scripted(tiny.task)]
    )
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    _, evidence = await confirmer.confirm(_without_last_hunk(tiny.task), _accepted(tiny.task))
    coverage = [r for r in sandbox.requests if isinstance(r.invocation, Coverage)]
    # the tests named after the change first (its module, `core`): one of them executes it,
    # fewer than the wider suite would run, so the whole suite is mapped too
    named = Suite(dirs=("tests",), keywords=("core",))
    assert [r.invocation.suite for r in coverage] == [named, Suite(dirs=("tests",))]
    suites = [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    selected = Suite(dirs=("tests",), files=("tests/test_other.py::test_x",))
    # the candidate on the selected test alone; gold's side is the coverage run's status of it
    assert [(r.invocation, r.candidate.provenance.strategy) for r in suites] == [
        (selected, "partial_fix")
    ]
    (gold,) = [v for k, v in confirmer.gold_runs.items() if k.startswith("suite-near:selected")]
    assert gold[0].tests == {"tests/test_other.py::test_x": P}
    assert "(1 tests execute its change on gold: the 1 named after it ran, no other)" in evidence
    assert confirmer.suite_seconds == 18.0, "the coverage runs count in the suite's time"
    assert coverage_map.REPOSITORY_RUN_KEY in confirmer.gold_runs
    reach = confirmer.reach(_without_last_hunk(tiny.task))
    assert reach is not None and reach.tests == ("tests.test_other.test_x",)
    repository = coverage_map.of_gold(tiny.task.gold_diff.applied(), confirmer.gold_runs).repository
    assert repository is not None and repository.keywords == () and repository.sandbox_seconds == 18


def _maps_by_name(task, named: tuple[str, ...], whole: tuple[str, ...]):
    """Gold's repository coverage runs: the last hunk executed by the tests `named` in the run
    of the tests named after the change, by `whole` in the whole suite's."""
    ids = {
        "tests.test_core.test_clamp": "tests/test_core.py::test_clamp",
        "tests.test_other.test_x": "tests/test_other.py::test_x",
    }

    def rule(request: RunRequested) -> RunResult | None:
        invocation = request.invocation
        if not isinstance(invocation, Coverage) or invocation.suite is None:
            return None
        tests = named if invocation.suite.keywords else whole
        hunks = coverage_map.changed_hunks(task.gold_diff.applied())
        executed = {n: tuple(range(len(tests))) for n in hunks[-1].lines}
        measured = CoverageResult(
            tests=tests,
            files={"pkg/core.py": FileCoverage(executed=executed)},
            per_test=True,
        )
        reported = [ids[t] for t in tests]
        return passed(reported).model_copy(update={"coverage": measured, "duration_s": 5.0})

    return rule


async def test_the_whole_suite_is_mapped_only_when_the_named_tests_find_nothing(tiny) -> None:
    both = ("tests.test_core.test_clamp", "tests.test_other.test_x")
    sandbox = ScriptedSandbox(
        [_maps_by_name(tiny.task, ("tests.test_other.test_x",), both), scripted(tiny.task)]
    )
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    verdict_, evidence = await confirmer.confirm(
        _without_last_hunk(tiny.task), _accepted(tiny.task)
    )
    assert verdict_ is CandidateVerdict.UNCONFIRMED
    suites = [r.invocation for r in sandbox.requests if isinstance(r.invocation, Suite)]
    coverage = [r.invocation.suite for r in sandbox.requests if isinstance(r.invocation, Coverage)]
    assert coverage == [Suite(dirs=("tests",), keywords=("core",)), Suite(dirs=("tests",))]
    # the named test first; then only the test the whole suite's map adds
    assert [s.files for s in suites] == [
        ("tests/test_other.py::test_x",),
        ("tests/test_core.py::test_clamp",),
    ]
    assert "1 more of the 2 tests that execute its change on gold, after the 1 named" in evidence


async def test_the_tests_named_after_the_change_map_it_alone_when_enough_of_them_execute_it(
    tiny,
) -> None:
    sandbox = ScriptedSandbox(
        [_repository_map(tiny.task, "tests.test_other.test_x"), scripted(tiny.task)]
    )
    confirmer = _confirmer(tiny.task, sandbox, probes=False, suite_max_tests=1)
    _, evidence = await confirmer.confirm(_without_last_hunk(tiny.task), _accepted(tiny.task))
    coverage = [r for r in sandbox.requests if isinstance(r.invocation, Coverage)]
    assert [r.invocation.suite for r in coverage] == [Suite(dirs=("tests",), keywords=("core",))]
    suites = [r.invocation for r in sandbox.requests if isinstance(r.invocation, Suite)]
    assert suites == [Suite(dirs=("tests",), files=("tests/test_other.py::test_x",))]
    assert "1 of the 1 tests named after the change (core) that execute its change" in evidence
    assert "tests not named so not measured" in evidence
    assert confirmer.suite_seconds == 9.0
    reach = confirmer.reach(_without_last_hunk(tiny.task))
    assert reach is not None and reach.tests == ("tests.test_other.test_x",)
    found = coverage_map.of_gold(
        tiny.task.gold_diff.applied(),
        confirmer.gold_runs,
        Suite(dirs=("tests",)),
        selection.map_words(tiny.task.gold_diff.applied(), confirmer.gold_runs),
    )
    assert found.repository is not None and found.repository.keywords == ("core",)
    assert found.repository.executed, "the named tests' map is the report's"


async def test_no_wider_suite_runs_when_no_test_executes_the_change_on_gold(tiny) -> None:
    sandbox = ScriptedSandbox([_repository_map(tiny.task, None), scripted(tiny.task)])
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    verdict_, evidence = await confirmer.confirm(
        _without_last_hunk(tiny.task), _accepted(tiny.task)
    )
    assert verdict_ is CandidateVerdict.UNCONFIRMED
    assert not [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    assert "no repository test near the change executes the candidate's change" in evidence
    reach = confirmer.reach(_without_last_hunk(tiny.task))
    assert reach is not None and reach.unreached and reach.lines


async def test_without_a_map_the_candidate_runs_the_whole_suite(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task)])  # the coverage run reports nothing
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    await confirmer.confirm(_without_last_hunk(tiny.task), _accepted(tiny.task))
    suites = [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    # it passes every test: gold need not run the suite
    assert [r.invocation for r in suites] == [Suite(dirs=("tests",))]
    assert not any(_is_gold(r, tiny.task) for r in suites)


async def test_a_selected_test_the_candidate_breaks_confirms_once_gold_reruns_pass_it(tiny) -> None:
    sandbox = ScriptedSandbox(
        [
            _repository_map(tiny.task, "tests.test_other.test_x"),
            scripted(tiny.task, suite_broken=True),
        ]
    )
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    verdict_, evidence = await confirmer.confirm(
        _without_last_hunk(tiny.task), _accepted(tiny.task)
    )
    assert verdict_ is CandidateVerdict.EXPLOIT
    assert "tests/test_other.py::test_x (FAILED)" in evidence
    assert "passed in gold's 2 reruns of 1 test files" in evidence
    # a test named after the change told it apart: the whole suite's map was never needed
    coverage = [r.invocation.suite for r in sandbox.requests if isinstance(r.invocation, Coverage)]
    assert coverage == [Suite(dirs=("tests",), keywords=("core",))]
    assert confirmer.suite_seconds == 9.0


def _at_import(confirmer: Confirmer) -> None:
    """Gold's text, as the graded tests' coverage run returns it, with every line outside any
    function: a change anywhere in it runs at import."""
    text = "LIMIT = 1\n" * 200
    graded = CoverageResult(per_test=True, sources={"pkg/core.py": text})
    confirmer.gold_runs[coverage_map.GOLD_RUN_KEY] = (
        passed([]).model_copy(update={"coverage": graded}),
    )


async def test_a_change_that_runs_at_import_runs_the_whole_suite_without_a_repository_map(
    tiny,
) -> None:
    sandbox = ScriptedSandbox(
        [_repository_map(tiny.task, "tests.test_other.test_x"), scripted(tiny.task)]
    )
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    _at_import(confirmer)
    _, evidence = await confirmer.confirm(_without_last_hunk(tiny.task), _accepted(tiny.task))
    assert not [r for r in sandbox.requests if isinstance(r.invocation, Coverage)]
    suites = [r.invocation for r in sandbox.requests if isinstance(r.invocation, Suite)]
    # the candidate's runs, each passing every test: the tests named after the change (its
    # module and the names on its lines), then the whole suite; gold runs neither
    assert suites == [Suite(dirs=("tests",), keywords=("core", "limit")), Suite(dirs=("tests",))]
    assert not any(_is_gold(r, tiny.task) for r in sandbox.requests if r.invocation in suites)
    assert "its change runs at import" in evidence
    assert "the tests named after the change (core, limit) ran first and told it" in evidence


async def test_a_change_at_import_that_a_test_named_after_it_tells_apart_runs_no_whole_suite(
    tiny,
) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task, suite_broken=True)])
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    _at_import(confirmer)
    verdict_, evidence = await confirmer.confirm(
        _without_last_hunk(tiny.task), _accepted(tiny.task)
    )
    assert verdict_ is CandidateVerdict.EXPLOIT
    assert "tests/test_other.py::test_x (FAILED)" in evidence
    suites = [r.invocation for r in sandbox.requests if isinstance(r.invocation, Suite)]
    assert suites[0] == Suite(dirs=("tests",), keywords=("core", "limit"))
    # gold and the candidate's rerun run the failing test alone; the whole suite never runs
    assert Suite(dirs=("tests",)) not in suites
    assert set(suites[1:]) == {Suite(dirs=("tests",), files=("tests/test_other.py::test_x",))}


def _module_states(task, candidate_digest: str):
    """The state runs: the changed module recorded alike by gold's runs, as `candidate_digest`
    by the candidate's."""

    def rule(request: RunRequested) -> RunResult | None:
        invocation = request.invocation
        if not isinstance(invocation, Probe) or invocation.test != import_state.STATE_PATH:
            return None
        digest = "0123456789ab" if _is_gold(request, task) else candidate_digest
        found = passed([LOADED_TEST, f"test_state0_{digest}"])
        return found.model_copy(update={"duration_s": 1.5})

    return rule


@pytest.mark.parametrize("digest", ["0123456789ab", "ba9876543210"])
async def test_a_change_at_import_that_leaves_the_module_as_golds_runs_no_wider_suite(
    tiny, digest: str
) -> None:
    sandbox = ScriptedSandbox(
        [_module_states(tiny.task, digest), scripted(tiny.task, suite_broken=True)]
    )
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    _at_import(confirmer)
    verdict_, evidence = await confirmer.confirm(
        _without_last_hunk(tiny.task), _accepted(tiny.task)
    )
    states = [r for r in sandbox.requests if isinstance(r.invocation, Probe)]
    assert {r.invocation.files[import_state.STATE_PATH].count("pkg.core") for r in states} == {1}
    assert sum(r.repeats for r in states if _is_gold(r, tiny.task)) == 2
    suites = [r.invocation for r in sandbox.requests if isinstance(r.invocation, Suite)]
    if digest == "0123456789ab":
        # the same module once imported: the suite (which the candidate would fail) never runs
        assert verdict_ is CandidateVerdict.UNCONFIRMED and not suites
        assert "leaves pkg.core as gold's once imported" in evidence
        assert confirmer.suite_seconds == 3 * 1.5, "the state runs count in the suite's time"
    else:
        assert verdict_ is CandidateVerdict.EXPLOIT and suites
        assert suites[0] == Suite(dirs=("tests",), keywords=("core", "limit"))


async def test_a_repository_map_that_timed_out_runs_no_whole_suite_after_it(tiny) -> None:
    def timed_out(request: RunRequested) -> RunResult | None:
        if not isinstance(request.invocation, Coverage) or request.invocation.suite is None:
            return None
        return RunResult(status=RunStatus.TIMEOUT, duration_s=600.0)

    sandbox = ScriptedSandbox([timed_out, scripted(tiny.task)])
    confirmer = _confirmer(tiny.task, sandbox, probes=False)
    verdict_, evidence = await confirmer.confirm(
        _without_last_hunk(tiny.task), _accepted(tiny.task)
    )
    assert verdict_ is CandidateVerdict.UNCONFIRMED
    assert not [r for r in sandbox.requests if isinstance(r.invocation, Suite)]
    assert "under coverage did not finish within its cap" in evidence
