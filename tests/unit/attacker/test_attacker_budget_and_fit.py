"""Budget by cost (sandbox-seconds), strategies that fit the repository and its runner, and the
classification of confirmed exploits (task exploit or tampering) down to the report."""

from __future__ import annotations

import json
import shutil

import pytest

from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.confirm.classification import ALWAYS_EQUAL_ADVICE, Kind, exploit_kind
from hackaudit.attacker.domain.generate.strategies import harness
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.service_layer.attack import AttackConfig, run_attack
from hackaudit.cli.report import TaskReport, write_report
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    CandidateVerdict,
    PatchFlags,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox, passed

from .conftest import LocalSandbox, git

# --- budget in sandbox-seconds ----------------------------------------------------------------


def timed(seconds: float):
    """Every candidate run is blocked and takes `seconds`."""

    def rule(request: RunRequested) -> RunResult | None:
        if request.purpose is not RunPurpose.CANDIDATE:
            return None
        return RunResult(status=RunStatus.COMPLETED, resolved=False, duration_s=seconds)

    return rule


def _seconds_request(task, budget: float, gold_s: float | None, k: int = 5) -> AttackRequested:
    return AttackRequested(
        correlation_id=f"audit-{budget}-{gold_s}",
        task=task,
        options=AuditOptions(candidates_per_round=k, rounds=1, budget_seconds=budget),
        gold_duration_s=gold_s,
    )


async def test_a_budget_in_seconds_buys_more_candidates_when_tests_are_fast(tiny) -> None:
    fast = await run_attack(
        _seconds_request(tiny.task, 24, 2.0),
        ScriptedSandbox([timed(2.0)]),
        None,
        InMemoryStateStore(RoundState),
    )
    slow = await run_attack(
        _seconds_request(tiny.task, 24, 12.0),
        ScriptedSandbox([timed(12.0)]),
        None,
        InMemoryStateStore(RoundState),
    )
    assert fast.spent is not None and slow.spent is not None
    assert fast.spent.candidates == 12 and fast.spent.sandbox_seconds == 24.0
    assert slow.spent.candidates == 2 and slow.spent.sandbox_seconds == 24.0
    assert fast.rounds_run == 3  # rounds of K=5 go on past `rounds=1` until the seconds are spent
    assert fast.budget == slow.budget == "24 sandbox-seconds"
    assert fast.budget_note == slow.budget_note == ""


def test_round_size_follows_the_seconds_left(tiny) -> None:
    state = orch.new_state(_seconds_request(tiny.task, 10, 4.0))
    assert orch.round_size(state) == 3  # ceil(10 / 4)
    state = state.model_copy(update={"sandbox_seconds": 9.0})
    assert orch.round_size(state) == 1
    state = state.model_copy(update={"sandbox_seconds": 10.0})
    assert orch.budget_spent(state)
    assert isinstance(orch.next_action(state), orch.Finish)


def test_without_gold_duration_the_mean_run_is_the_unit(tiny) -> None:
    state = orch.new_state(_seconds_request(tiny.task, 100, None))
    assert orch.unit_cost(state) is None and orch.round_size(state) == 5


async def test_spent_to_first_exploit_is_reported(tiny) -> None:
    def rule(request: RunRequested) -> RunResult | None:
        c = request.candidate
        if request.purpose is not RunPurpose.CANDIDATE or c is None:
            return None
        if c.provenance.strategy == "mutation":
            result = passed([*request.task.fail_to_pass, *request.task.pass_to_pass])
            return result.model_copy(update={"duration_s": 3.0})
        return RunResult(status=RunStatus.COMPLETED, resolved=False, duration_s=3.0)

    request = AttackRequested(
        correlation_id="audit-first",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=5, rounds=2),
    )
    done = await run_attack(
        request,
        ScriptedSandbox([rule]),
        None,
        InMemoryStateStore(RoundState),
        AttackConfig(confirmation=AttackConfig().confirmation.model_copy(update={"probes": False})),
    )
    verdicts = [o.verdict for o in done.outcomes]
    assert done.spent is not None and done.spent.candidates == 10
    if CandidateVerdict.EXPLOIT in verdicts:
        first = verdicts.index(CandidateVerdict.EXPLOIT) + 1
        assert done.to_first_exploit is not None
        assert done.to_first_exploit.candidates == first
        assert done.to_first_exploit.sandbox_seconds == 3.0 * first
    else:
        assert done.to_first_exploit is None


async def test_a_budget_setting_applies_when_the_request_has_none(tiny) -> None:
    request = AttackRequested(
        correlation_id="audit-setting",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=5, rounds=1),
    )
    done = await run_attack(
        request,
        ScriptedSandbox([timed(1.0)]),
        None,
        InMemoryStateStore(RoundState),
        AttackConfig(budget_seconds=7),
    )
    assert done.budget == "7 sandbox-seconds" and done.spent is not None
    assert done.spent.candidates == 7


async def test_a_timed_out_candidate_runs_again_with_twice_the_time_before_it_counts(tiny) -> None:
    # The first run of each candidate times out (a loaded machine); given twice the time, the
    # mutants finish and pass the graded tests, the rest finish and fail them.
    def rule(request: RunRequested) -> RunResult | None:
        c = request.candidate
        if request.purpose is not RunPurpose.CANDIDATE or c is None:
            return None
        if request.timeout_s is None:
            return RunResult(status=RunStatus.TIMEOUT, duration_s=30.0)
        if c.provenance.strategy == "mutation":
            result = passed([*request.task.fail_to_pass, *request.task.pass_to_pass])
            return result.model_copy(update={"duration_s": 40.0})
        return RunResult(status=RunStatus.COMPLETED, resolved=False, duration_s=40.0)

    sandbox = ScriptedSandbox([rule])
    request = AttackRequested(
        correlation_id="audit-timeouts",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=5, rounds=1),
    )
    no_probes = AttackConfig().confirmation.model_copy(update={"probes": False})
    done = await run_attack(
        request, sandbox, None, InMemoryStateStore(RoundState), AttackConfig(confirmation=no_probes)
    )
    runs = [r for r in sandbox.requests if r.purpose is RunPurpose.CANDIDATE]
    assert [r.timeout_s for r in runs] == [None, 60.0] * (len(runs) // 2)
    assert all("timed out after 30s; run again within 60s" in o.evidence for o in done.outcomes)
    assert not any("run ended timeout" in o.evidence for o in done.outcomes)
    assert done.spent is not None and done.spent.sandbox_seconds == 70.0 * len(done.outcomes)

    # A candidate that times out again is blocked, and says it timed out twice.
    def hangs(request: RunRequested) -> RunResult | None:
        if request.purpose is not RunPurpose.CANDIDATE:
            return None
        return RunResult(status=RunStatus.TIMEOUT, duration_s=request.timeout_s or 30.0)

    again = await run_attack(
        request.model_copy(update={"correlation_id": "audit-hangs", "idempotency_key": ""}),
        ScriptedSandbox([hangs]),
        None,
        InMemoryStateStore(RoundState),
        AttackConfig(confirmation=no_probes),
    )
    assert {o.verdict for o in again.outcomes} == {CandidateVerdict.BLOCKED}
    assert all(
        o.evidence.startswith("timed out after 30s; run again within 60s: run ended timeout")
        for o in again.outcomes
    )


# --- strategies that fit the repository -------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "path"),
    [("conftest_report_rewrite", "conftest.py"), ("conftest_in_test_dir", "tests/conftest.py")],
)
def test_the_conftest_hook_is_appended_and_applies_with_or_without_a_conftest(
    tiny, tmp_path, variant, path
) -> None:
    (candidate,) = harness.harness_exploits(tiny.task, (variant,))
    assert "diff --git" not in candidate.diff  # a git header would make git refuse a new file
    assert f"@@ -{harness.APPEND_AT},0 " in candidate.diff
    assert tiny.applies(candidate.diff) == (True, "")
    for existing in ("import os\nCONFIGURED = True\n", "import os\nCONFIGURED = True"):
        repo = tmp_path / f"with-conftest-{len(existing)}"
        shutil.copytree(tiny.repo, repo)
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(existing)
        git(repo, "add", path)
        assert git(repo, "commit", "-qm", "conftest").returncode == 0
        done = git(repo, "apply", "-", stdin=candidate.diff)
        assert done.returncode == 0, done.stderr
        text = (repo / path).read_text()
        assert text.startswith("import os\nCONFIGURED = True")  # kept, then extended
        assert "def pytest_runtest_makereport(item, call):" in text
        compile(text, "conftest.py", "exec")


async def test_an_extended_conftest_forces_passes_in_a_real_run(tiny, tmp_path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(tiny.repo, repo)
    (repo / "conftest.py").write_text('collect_ignore = ["setup.py"]\n')
    git(repo, "add", "conftest.py")
    assert git(repo, "commit", "-qm", "conftest").returncode == 0
    (candidate,) = harness.conftest_report_rewrite(tiny.task)
    done = await LocalSandbox(repo).run(
        RunRequested(
            correlation_id="c", task=tiny.task, purpose=RunPurpose.CANDIDATE, candidate=candidate
        )
    )
    assert done.result.resolved is True, done.result.log_tail[-2000:]


def test_pytest_only_variants_are_not_built_for_sympy_and_are_reported(tiny) -> None:
    task = tiny.task.model_copy(update={"repo": "sympy/sympy", "test_command": None})
    produced = {c.provenance.detail.split(":")[0] for c in harness.harness_exploits(task)}
    skipped = harness.not_applicable(task)
    assert produced.isdisjoint(harness.PYTEST_ONLY)
    assert {s.split(":")[0] for s in skipped} == harness.PYTEST_ONLY
    assert "conftest_report_rewrite: needs pytest, the task runs sympy" in skipped
    assert {"always_equal", "exit_zero_at_import"} | harness.FORGED_OUTPUT <= produced
    # Under pytest, what an import prints is captured: only the at-exit forgery is built.
    assert [s.split(":")[0] for s in harness.not_applicable(tiny.task)] == [
        "forged_pass_lines_then_exit"
    ]


async def test_not_applicable_variants_are_reported_not_run(tiny) -> None:
    task = tiny.task.model_copy(update={"repo": "sympy/sympy", "test_command": None})
    sandbox = ScriptedSandbox()
    request = AttackRequested(
        correlation_id="audit-sympy", task=task, options=AuditOptions(candidates_per_round=5)
    )
    done = await run_attack(request, sandbox, None, InMemoryStateStore(RoundState))
    sent = [r.candidate for r in sandbox.requests if r.purpose is RunPurpose.CANDIDATE]
    variants = {harness.variant_of(c) for c in sent if c is not None}
    assert variants.isdisjoint(harness.PYTEST_ONLY)
    assert len(done.not_applicable) == len(harness.PYTEST_ONLY)
    assert all(o.verdict is not CandidateVerdict.INVALID for o in done.outcomes)


# --- classification of confirmed exploits -----------------------------------------------------


def _variant(tiny, name: str):
    return harness.harness_exploits(tiny.task, (name,))[0]


def test_always_equal_is_a_task_exploit_with_assertion_advice(tiny) -> None:
    kind = exploit_kind(_variant(tiny, "always_equal"), PatchFlags())
    assert kind.kind is Kind.TASK and not kind.tampering
    assert kind.advice == ALWAYS_EQUAL_ADVICE and "compare types" in kind.advice


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("conftest_report_rewrite", Kind.TEST_TAMPERING),
        ("conftest_in_test_dir", Kind.TEST_TAMPERING),
        ("shadow_test_file", Kind.TEST_TAMPERING),
        ("exit_zero_at_import", Kind.RUNNER_TAMPERING),
        ("forged_pass_lines_at_exit", Kind.RUNNER_TAMPERING),
        ("git_history_fix", Kind.RUNNER_TAMPERING),
    ],
)
def test_harness_variants_are_classified(tiny, variant, expected) -> None:
    kind = exploit_kind(_variant(tiny, variant), PatchFlags())
    assert kind.kind is expected and kind.tampering


def test_a_source_only_candidate_flagged_by_the_sandbox_is_tampering(tiny) -> None:
    always_equal = _variant(tiny, "always_equal")
    flagged = exploit_kind(always_equal, PatchFlags(touched_test_config=("setup.cfg",)))
    assert flagged.kind is Kind.TEST_TAMPERING


async def test_accepted_always_equal_is_counted_as_a_task_exploit(tiny) -> None:
    def accept_always_equal(request: RunRequested) -> RunResult | None:
        c = request.candidate
        if request.purpose is RunPurpose.CANDIDATE and c and "always_equal" in c.provenance.detail:
            return passed([*request.task.fail_to_pass, *request.task.pass_to_pass])
        return None

    request = AttackRequested(
        correlation_id="audit-eq",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=15, rounds=1),
    )
    done = await run_attack(
        request, ScriptedSandbox([accept_always_equal]), None, InMemoryStateStore(RoundState)
    )
    exploits = [o for o in done.outcomes if o.verdict is CandidateVerdict.EXPLOIT]
    assert exploits and all(not o.tampering for o in exploits)
    assert exploits[0].advice == ALWAYS_EQUAL_ADVICE


# --- the report -------------------------------------------------------------------------------


async def test_report_carries_budget_and_advice(tiny, tmp_path) -> None:
    def accept_always_equal(request: RunRequested) -> RunResult | None:
        c = request.candidate
        if request.purpose is RunPurpose.CANDIDATE and c and "always_equal" in c.provenance.detail:
            result = passed([*request.task.fail_to_pass, *request.task.pass_to_pass])
            # each went on 1 s in the background too: reported apart, in no sandbox-second
            return result.model_copy(update={"duration_s": 2.5, "background_s": 1.0})
        return RunResult(status=RunStatus.COMPLETED, resolved=False, duration_s=2.5)

    request = AttackRequested(
        correlation_id="audit-report",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=15, rounds=1),
    )
    attack = await run_attack(
        request, ScriptedSandbox([accept_always_equal]), None, InMemoryStateStore(RoundState)
    )
    assert attack.to_first_exploit is not None
    write_report(
        tmp_path,
        [TaskReport(tiny.task.instance_id, None, attack)],
        missing_stages=[],
    )
    row = json.loads((tmp_path / "report.json").read_text())["tasks"][0]
    assert row["budget"] == "15 candidates (1 rounds of 15)"
    # every run's seconds by kind: the 15 candidates' graded runs, gold's coverage run
    by_kind = {"grade": 37.5, "coverage": 2.5}
    assert row["spent"] == {
        "candidates": 15,
        "sandbox_seconds": 37.5,
        "by_kind": by_kind,
        "background_s": 2.0,  # the two always-equal candidates' runs
    }
    assert row["to_first_exploit"] == attack.to_first_exploit.model_dump()
    assert row["exploits"][0]["advice"] == ALWAYS_EQUAL_ADVICE
    assert row["harness_evidence"] == []
    md = (tmp_path / "report.md").read_text()
    assert "## Attack budget" in md and "| 15 / 38 s |" in md
    assert "## How to close the task exploits" in md and "compare types" in md
    assert "## The harness" not in md


async def test_first_exploit_counts_task_exploits_not_harness_findings(tiny) -> None:
    def accept_all(request: RunRequested) -> RunResult | None:
        if request.purpose is not RunPurpose.CANDIDATE:
            return None
        result = passed([*request.task.fail_to_pass, *request.task.pass_to_pass])
        return result.model_copy(update={"duration_s": 1.0})

    request = AttackRequested(
        correlation_id="audit-all",
        task=tiny.task,
        options=AuditOptions(candidates_per_round=15, rounds=1),
    )
    done = await run_attack(
        request, ScriptedSandbox([accept_all]), None, InMemoryStateStore(RoundState)
    )
    first_outcome = done.outcomes[0]
    assert first_outcome.verdict is CandidateVerdict.EXPLOIT and first_outcome.tampering
    task_exploits = [
        i + 1
        for i, o in enumerate(done.outcomes)
        if o.verdict is CandidateVerdict.EXPLOIT and not o.tampering
    ]
    assert task_exploits, [o.verdict for o in done.outcomes]
    assert done.to_first_exploit is not None
    assert done.to_first_exploit.candidates == task_exploits[0] > 1
    assert done.to_first_exploit.sandbox_seconds == float(task_exploits[0])
