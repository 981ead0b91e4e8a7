"""Forged results in each runner's own format: what the harness strategy's forged-output variants
print passes every check the sandbox makes on that runner's text (its log parser, the runner's
final summary, pytest's JUnit report), and the generated code prints it and exits 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hackaudit.attacker.domain.confirm.classification import (
    FORGED_OUTPUT_ADVICE,
    Kind,
    exploit_kind,
)
from hackaudit.attacker.domain.generate.strategies import forged_output, harness
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.service_layer.attack import run_attack
from hackaudit.sandbox.domain.log_parsers import parse_log
from hackaudit.sandbox.domain.log_parsers.junit import corroborate, parse_junit
from hackaudit.sandbox.domain.log_parsers.pytest import parse_pytest_ids
from hackaudit.sandbox.domain.log_parsers.summaries import corroborate_by_summary
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    CandidateVerdict,
    PatchFlags,
    RunPurpose,
    RunRequested,
    RunResult,
    TestStatus,
)
from hackaudit.shared.runners import RunnerKind
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox, passed

TESTS = {
    RunnerKind.UNITTEST: [
        "test_add (tests.test_ops.OpsTest.test_add)",
        "Adds two numbers the documented way.",
    ],
    RunnerKind.DJANGO: ["test_version (admin_scripts.tests.CommandTypes.test_version)"],
    RunnerKind.SYMPY: ["test_add", "test_issue_7263"],
    RunnerKind.PYTEST: [
        "tests/test_ops.py::OpsTest::test_add",
        "tests/test_ops.py::test_div[1-2]",
        "tests/test_ops.py::test_text[a b]",
    ],
}
FORGED = harness.FORGED_OUTPUT
TEXT_RUNNERS = [RunnerKind.UNITTEST, RunnerKind.DJANGO, RunnerKind.SYMPY]


@pytest.mark.parametrize("runner", TEXT_RUNNERS, ids=lambda r: r.value)
def test_the_forged_text_passes_the_parser_and_the_summary_check(runner: RunnerKind) -> None:
    tests = TESTS[runner]
    text = forged_output.report(runner, tests)
    statuses = parse_log(runner.value, text)

    assert statuses == dict.fromkeys(tests, TestStatus.PASSED)
    assert corroborate_by_summary(runner.value, text, statuses, 0) == (statuses, None)


def test_the_forged_pytest_summary_is_backed_by_the_forged_junit_report() -> None:
    tests = TESTS[RunnerKind.PYTEST]
    ids = parse_pytest_ids(forged_output.report(RunnerKind.PYTEST, tests))
    cases = parse_junit(forged_output.junit_report(tests))

    assert ids == {test.split(" ")[0]: TestStatus.PASSED for test in tests}
    assert corroborate(ids, cases) == ids
    assert corroborate(ids, None) != ids  # without the rewritten report, nothing is backed


def _run(code: list[str], tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    module = tmp_path / "forged_module.py"
    module.write_text("\n".join(code) + "\n")
    main = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import forged_module"
    return subprocess.run(
        [sys.executable, "-c", main, *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("runner", TEXT_RUNNERS, ids=lambda r: r.value)
def test_at_import_prints_on_the_runners_stream_and_exits_zero(
    runner: RunnerKind, tmp_path: Path
) -> None:
    done = _run(forged_output.at_import(runner, TESTS[runner]), tmp_path)
    stream = done.stderr if runner is not RunnerKind.SYMPY else done.stdout

    assert done.returncode == 0
    assert forged_output.report(runner, TESTS[runner]) in stream


def test_at_exit_rewrites_pytests_junit_report_although_the_import_failed(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text("<testsuites><testsuite><testcase name='x'><failure/></testcase>")
    tests = TESTS[RunnerKind.PYTEST]
    done = _run(forged_output.at_exit(RunnerKind.PYTEST, tests), tmp_path, f"--junitxml={junit}")

    assert done.returncode == 0
    assert "ImportError: the results are forged at exit" in done.stderr
    assert done.stdout.strip().endswith(forged_output.report(RunnerKind.PYTEST, tests))
    assert junit.read_text() == forged_output.junit_report(tests)


def _task(tiny, runner: RunnerKind):
    tests = TESTS[runner]
    return tiny.task.model_copy(
        update={"log_parser": runner.value, "fail_to_pass": tests[:1], "pass_to_pass": tests[1:]}
    )


@pytest.mark.parametrize("runner", list(RunnerKind), ids=lambda r: r.value)
def test_the_variants_are_built_in_the_tasks_runner_format(tiny, runner: RunnerKind) -> None:
    task = _task(tiny, runner)
    built = {harness.variant_of(c): c for c in harness.harness_exploits(task)}
    expected = harness.FORGED_OUTPUT - (
        {"forged_pass_lines_then_exit"} if runner is RunnerKind.PYTEST else set()
    )

    assert expected <= set(built)
    for variant in expected:
        candidate = built[variant]
        assert f"forged {runner.value} results" in candidate.provenance.detail
        lines = forged_output.report(runner, TESTS[runner]).splitlines()
        first = next(line for line in lines if TESTS[runner][0] in line)
        assert repr(first)[1:-1] in candidate.diff
        kind = exploit_kind(candidate, PatchFlags())
        assert kind.kind is Kind.RUNNER_TAMPERING and kind.tampering
        assert kind.advice == FORGED_OUTPUT_ADVICE


async def test_an_accepted_forgery_on_a_sympy_task_is_a_harness_finding_with_its_fix(tiny) -> None:
    def accept_forged_output(request: RunRequested) -> RunResult | None:
        c = request.candidate
        if request.purpose is RunPurpose.CANDIDATE and c and harness.variant_of(c) in FORGED:
            return passed([*request.task.fail_to_pass, *request.task.pass_to_pass])
        return None

    task = tiny.task.model_copy(update={"repo": "sympy/sympy", "test_command": None})
    request = AttackRequested(
        correlation_id="audit-forged",
        task=task,
        options=AuditOptions(candidates_per_round=15, rounds=1),
    )
    done = await run_attack(
        request, ScriptedSandbox([accept_forged_output]), None, InMemoryStateStore(RoundState)
    )
    exploits = [o for o in done.outcomes if o.verdict is CandidateVerdict.EXPLOIT]
    assert exploits and all(o.tampering for o in exploits)
    assert {o.advice for o in exploits} == {FORGED_OUTPUT_ADVICE}
    assert not any(item.startswith("forged_pass_lines") for item in done.not_applicable)
