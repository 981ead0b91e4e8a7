"""Reads an execution into a `RunResult`: the classification table of the sandbox.

| observation                                                | status        | resolved |
|------------------------------------------------------------|---------------|----------|
| preparation over its deadline, wrapper never started,      | infra_error   | None     |
| no repository, or the run ended before the tests began     |               |          |
| the task's set-up failed before the candidate was applied: | infra_error   | None     |
| test files not restored to base_commit, or the task's own  |               |          |
| test patch does not apply to the image's repository        |               |          |
| a proposed test patch (gold gate) does not apply at base   | patch_failed  | None     |
| the candidate did not apply (or resolved outside the repo) | patch_failed  | None     |
| after the candidate, the test files could not be restored  | patch_failed  | None     |
| or the test patch did not apply, in strict mode            |               |          |
| the container's memory limit killed a process              | oom           | None     |
| the tests ran past their deadline                          | timeout       | None     |
| the wrapper was killed before the tests ended              | completed     | False    |
| the tests ran                                              | completed     | graded   |
| the tests ran in a coverage run (`RunResult.coverage`)     | completed     | None     |

An infrastructure failure is never the patch's fault or merit: it carries no `resolved`. A run the
candidate cut short from inside (killing the wrapper) counts against it, never for it. The
set-up is checked on the untouched repository first, so a task whose test files cannot be reset
or whose test patch does not apply is reported as the infrastructure error it is, with the step
and its log in the reason, and never graded. When the test patch then fails over the candidate,
the candidate caused it (by creating a file the test patch adds, say): the tests run anyway — as
the SWE-bench harness's evaluation script does, so its hole is measured — and the reason says so,
unless strict mode (`strict_test_patch`) refuses the run as `patch_failed`.

A run's `duration_s` is the time its tests ran: a run whose tests ended is counted from their
start to their end, a run whose tests passed their deadline at its limit, and a run that never
reached its tests at its container's wall time. A run that gave its slot to a short run and went
on in the background at a lowered CPU weight (`fair_share`) is counted as if it were paused
there, as its deadlines are (`deadlines`): its time in the background is left out of
`duration_s` and reported as `background_s`, so that a run's sandbox-seconds — what budgets
and reports add up — are its time in a slot, not the time it waited behind other runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hackaudit.sandbox.domain.coverage_run import UnreadableReport, read_report
from hackaudit.sandbox.domain.execution import Execution, Phase
from hackaudit.sandbox.domain.flags import config_verdicts, patch_flags, porcelain_paths
from hackaudit.sandbox.domain.grading import grade
from hackaudit.sandbox.domain.log_parsers import StatusMap, get_parser
from hackaudit.sandbox.domain.log_parsers.junit import corroborate, parse_junit
from hackaudit.sandbox.domain.log_parsers.pytest import parse_pytest_ids, with_aliases
from hackaudit.sandbox.domain.log_parsers.summaries import corroborate_by_summary
from hackaudit.sandbox.domain.protocol import FILL_FAILED
from hackaudit.sandbox.domain.run_spec import RunSpec
from hackaudit.sandbox.domain.test_paths import sectioned_changes_from_full_diff
from hackaudit.sandbox.domain.transcript import Transcript, read_transcript
from hackaudit.shared.contracts import PatchFlags, RunResult, RunStatus


@dataclass(frozen=True)
class Interpreted:
    """A run's result (without its artifact path yet) and the full log to store as artifact."""

    result: RunResult
    log: str
    baseline: tuple[str, ...] | None = None


def tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[-limit:]


def _flags(spec: RunSpec, transcript: Transcript, baseline: Sequence[str] | None) -> PatchFlags:
    config_diff = transcript.decoded("config-diff")
    container = (
        sectioned_changes_from_full_diff(config_diff.decode("utf-8", errors="replace"))
        if config_diff is not None
        else None
    )
    sectioned = config_verdicts(spec.candidate_changes, spec.candidate_paths, container)
    status = transcript.decoded("status")
    git_removed = transcript.value("status") == "no-git"
    return patch_flags(
        spec.candidate_paths,
        spec.test_patch_paths,
        sectioned,
        changed_after_run=porcelain_paths(status) if status is not None else None,
        changed_in_image=baseline or (),
        git_removed=git_removed,
        processes_left=processes_left(transcript),
    )


def statuses_of(spec: RunSpec, transcript: Transcript) -> tuple[StatusMap, list[str]]:
    """Per-test statuses of the runner's output, and notes on how they were read."""
    output = transcript.runner_output or ""
    notes: list[str] = []
    if spec.invocation.parser != "pytest" or spec.invocation.junit_path is None:
        statuses = get_parser(spec.invocation.parser)(output)
        if not spec.invocation.checks_summary:
            return statuses, notes
        checked, doubt = corroborate_by_summary(
            spec.invocation.parser, output, statuses, transcript.test_exit_code
        )
        return checked, notes + ([doubt] if doubt else [])
    ids = parse_pytest_ids(output)
    junit = transcript.decoded("junit")
    cases = parse_junit(junit.decode("utf-8", errors="replace")) if junit is not None else None
    if cases is None and any(ids.values()):
        notes.append("pytest wrote no readable JUnit report: favourable results not corroborated")
    checked = corroborate(ids, cases)
    downgraded = sum(1 for test in ids if checked[test] != ids[test])
    if downgraded:
        notes.append(f"{downgraded} printed result(s) not backed by pytest's JUnit report")
    return with_aliases(checked), notes


def processes_left(transcript: Transcript) -> bool:
    """Did a process of the run outlive the wrapper's final kill?"""
    return transcript.has("survivors") or transcript.value("status") == "survivors"


def _notes(transcript: Transcript) -> list[str]:
    notes = []
    if processes_left(transcript):
        notes.append(
            "processes of the run outlived the final kill: the files the run changed were not "
            "checked, and its container is not reused"
        )
    if transcript.value("apply") == "ok:patch-fuzz":
        notes.append("the candidate applied only with `patch --fuzz=5`")
    if transcript.value("restore") == "failed":
        notes.append("after the candidate, the test files could not all be restored")
    if transcript.value("test-patch") == "failed":
        notes.append(
            "the test patch did not apply over the candidate; the tests ran without it, "
            "as the harness does"
        )
    if transcript.value("git") == "no":
        notes.append("/testbed is not a git repository: file changes could not be checked")
    return notes


@dataclass(frozen=True)
class _Report:
    """Builds the results of one run: what every outcome shares, plus its own fields."""

    transcript: Transcript
    common: dict[str, object]
    tail_chars: int
    baseline: tuple[str, ...] | None

    def __call__(self, status: RunStatus, reason: str, text: str, **extra: object) -> Interpreted:
        fields = {**self.common, **extra}
        fields.update(status=status, reason=reason, log_tail=tail(text, self.tail_chars))
        return Interpreted(
            result=RunResult.model_validate(fields),
            log=self.transcript.full_text,
            baseline=self.baseline,
        )


def interpret(
    spec: RunSpec, execution: Execution, baseline: Sequence[str] | None = None
) -> Interpreted:
    """The result of one executed run (see the module docstring for the table)."""
    transcript = read_transcript(execution.output, spec.nonce)
    base = transcript.decoded("baseline")
    new_baseline = tuple(porcelain_paths(base)) if base is not None else None
    exit_code = transcript.test_exit_code
    duration = transcript.test_duration_s
    ran = duration if duration is not None else execution.wall_s
    background = min(max(execution.background_s, 0.0), ran)
    done = _Report(
        transcript=transcript,
        common={
            "exit_code": exit_code if exit_code is not None else execution.exit_code,
            "duration_s": round(ran - background, 3),
            "background_s": round(background, 3),
            "flags": _flags(spec, transcript, baseline if baseline is not None else new_baseline),
        },
        tail_chars=spec.options.log_tail_chars,
        baseline=new_baseline,
    )
    return _not_graded(spec, execution, transcript, done) or _graded(spec, transcript, done)


def _not_graded(
    spec: RunSpec, execution: Execution, transcript: Transcript, done: _Report
) -> Interpreted | None:
    """The result of a run whose tests cannot be graded, or None when they can."""
    prep = transcript.full_text
    memory = "a process hit the memory limit"
    oom = transcript.oom_kills > 0 or execution.container_oom
    if execution.timed_out is Phase.SETUP:
        reason = f"preparing the run took over {spec.options.setup_timeout_s:g} s"
        return done(RunStatus.INFRA_ERROR, reason, prep)
    if execution.timed_out is Phase.TEST:
        if oom:
            return done(RunStatus.OOM, memory, prep)
        reason = f"the tests ran longer than the {spec.timeout_s:g} s limit"
        if execution.background_s >= 1:
            reason += f" (not counting {execution.background_s:.0f} s in the background)"
        # Its tests ran for the whole limit: counted at it (its preparation, its time in the
        # background and its kill are not the tests' time, as for a run that ends).
        return done(
            RunStatus.TIMEOUT,
            reason,
            transcript.runner_output or prep,
            duration_s=round(spec.timeout_s, 3),
            background_s=round(execution.background_s, 3),
        )
    if not transcript.has("stage") and execution.exit_code == FILL_FAILED:
        reason = "the repository could not be copied into the container's /testbed"
        return done(RunStatus.INFRA_ERROR, reason, prep)
    if not transcript.has("stage"):
        reason = (
            f"the wrapper did not start (exit code {execution.exit_code}); the image needs "
            "/bin/sh, /bin/bash, coreutils and a writable /tmp"
        )
        return done(RunStatus.INFRA_ERROR, reason, prep)
    if transcript.has("fatal"):
        return done(RunStatus.INFRA_ERROR, f"cannot run: {transcript.value('fatal')}", prep)
    setup = _setup_failure(spec, transcript, done)
    if setup is not None:
        return setup
    apply = transcript.value("apply") or ""
    if apply in {"failed", "refused"}:
        reason = "the candidate did not apply (git apply, then patch --fuzz=5)"
        if apply == "refused":
            reason = "refused: the candidate writes through a link out of the repository"
        return done(RunStatus.PATCH_FAILED, reason, transcript.bodies.get("apply-log", ""))
    if not apply.startswith("ok"):
        return done(RunStatus.INFRA_ERROR, "the run ended while the candidate was applied", prep)
    over_candidate = [
        (step, why)
        for step, why in (
            ("restore", "the test files could not be restored after the candidate"),
            ("test-patch", "the test patch did not apply over the candidate"),
        )
        if transcript.value(step) == "failed"
    ]
    if over_candidate and spec.options.strict_test_patch:
        step, why = over_candidate[0]
        return done(RunStatus.PATCH_FAILED, why, transcript.bodies.get(f"{step}-log", ""))
    if oom:
        return done(RunStatus.OOM, memory, transcript.runner_output or prep)
    if not transcript.has("begin"):
        return done(RunStatus.INFRA_ERROR, "the run ended before the tests started", prep)
    return None


SETUP_TAIL_CHARS = 600


def _setup_failure(spec: RunSpec, transcript: Transcript, done: _Report) -> Interpreted | None:
    """The result of a run whose task could not be set up before the candidate, or None.

    Both steps ran on the untouched repository, so the candidate played no part: the task's own
    test patch or base commit does not fit its image. A test patch proposed in the request
    (`RunRequested.test_patch`, the gold gate's) is that proposal's fault instead.
    """
    if transcript.value("reset") == "failed":
        log = transcript.bodies.get("reset-log", "")
        reason = (
            f"infrastructure: the test files of {spec.task.instance_id} could not be reset to "
            f"base_commit {spec.task.base_commit[:12]} (git checkout <base_commit> -- <files>); "
            f"is that commit in the image? log: {_last_lines(log)}"
        )
        return done(RunStatus.INFRA_ERROR, reason, log)
    if transcript.value("test-patch-check") == "failed":
        log = transcript.bodies.get("test-patch-check-log", "")
        if spec.test_patch != spec.task.test_patch:
            reason = f"the proposed test patch does not apply at base_commit: {_last_lines(log)}"
            return done(RunStatus.PATCH_FAILED, reason, log)
        reason = (
            f"infrastructure: the test patch of {spec.task.instance_id} does not apply to the "
            f"image's repository at base_commit {spec.task.base_commit[:12]} "
            f"(git apply --check); log: {_last_lines(log)}"
        )
        return done(RunStatus.INFRA_ERROR, reason, log)
    return None


def _last_lines(log: str) -> str:
    text = " | ".join(line.strip() for line in log.strip().splitlines() if line.strip())
    return tail(text, SETUP_TAIL_CHARS) or "(no output)"


def _graded(spec: RunSpec, transcript: Transcript, done: _Report) -> Interpreted:
    output = transcript.runner_output or ""
    statuses, parse_notes = statuses_of(spec, transcript)
    notes = _notes(transcript) + parse_notes
    if not transcript.has("test-exit"):
        notes.insert(0, "the wrapper was killed before the tests finished; counted as failed")
        reason = "; ".join(notes)
        return done(RunStatus.COMPLETED, reason, output, resolved=False, tests=statuses)
    if spec.measure is not None:
        return _measured(spec, transcript, done, statuses, notes)
    verdict = grade(statuses, spec.task.fail_to_pass, spec.task.pass_to_pass, spec.options.grading)
    reason = "; ".join([verdict.summary(), *notes])
    return done(RunStatus.COMPLETED, reason, output, resolved=verdict.resolved, tests=statuses)


def _measured(
    spec: RunSpec, transcript: Transcript, done: _Report, statuses: StatusMap, notes: list[str]
) -> Interpreted:
    """A coverage run's result: the tests' statuses and the measurements, never a verdict."""
    assert spec.measure is not None
    output = transcript.runner_output or ""
    report = transcript.decoded("coverage")
    coverage = None
    if report is None:
        failed = transcript.bodies.get("coverage-failed", "").strip()
        notes.insert(0, f"coverage.py reported nothing: {tail(failed, 600) or 'no report'}")
    else:
        try:
            coverage = read_report(report, spec.measure)
        except UnreadableReport as exc:
            notes.insert(0, str(exc)[:600])
    if coverage is not None:
        lines = sum(len(f.executed) for f in coverage.files.values())
        notes.insert(0, f"measured: {lines} executed line(s) of {len(coverage.files)} file(s)")
    reason = "; ".join(notes)
    return done(
        RunStatus.COMPLETED, reason, output, resolved=None, tests=statuses, coverage=coverage
    )
