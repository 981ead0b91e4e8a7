"""Turns (task, candidate, test patch, invocation) into everything one run needs, or refuses it
up front.

The invocation says what runs (`runners.command_for`): a probe's or a capture's added module
joins the test patch as new files, and the run is graded on that module's `loaded` test instead
of the task's FAIL_TO_PASS / PASS_TO_PASS (`graded_task`).

A coverage run (`Coverage`) also carries coverage.py's wheels, its configuration and the script
that reports after the tests (`coverage_run`); it is measured, not graded.

A candidate whose paths leave the repository, a patch over the size limit, or a test patch that
itself escapes are refused here as `patch_failed`, before any container is used. A task that
cannot be run at all (no image, an unknown log parser, no wider suite for its runner) yields
`infra_error`: that is never the patch's fault.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from hackaudit.sandbox.domain import coverage_run
from hackaudit.sandbox.domain.added_modules import loaded_test, with_added_files
from hackaudit.sandbox.domain.confinement import diff_problems, mapping_problems
from hackaudit.sandbox.domain.execution import RunPlan
from hackaudit.sandbox.domain.flags import config_verdicts, patch_flags
from hackaudit.sandbox.domain.grading import GradingPolicy
from hackaudit.sandbox.domain.log_parsers import UnknownParser
from hackaudit.sandbox.domain.protocol import (
    RUN_USER,
    Payload,
    end_marker,
    launcher_argv,
    marker,
    new_nonce,
    split_marker,
)
from hackaudit.sandbox.domain.runners import NoCommand, RunnerInvocation, command_for
from hackaudit.shared.anatomy import (
    FileDiff,
    Patch,
    is_sectioned_config,
    read_patch,
    touches_test_sections,
)
from hackaudit.shared.contracts import (
    Candidate,
    CandidateKind,
    Capture,
    Coverage,
    Grade,
    Invocation,
    PatchFlags,
    Probe,
    RunResult,
    RunStatus,
    Task,
)


@dataclass(frozen=True)
class RunOptions:
    """The knobs of the run protocol (from `SandboxSettings`)."""

    grading: GradingPolicy = GradingPolicy.SWEBENCH
    junit: bool = True
    strict_test_patch: bool = False
    setup_timeout_s: float = 120.0
    log_tail_chars: int = 4000
    max_patch_bytes: int = 5 << 20


@dataclass(frozen=True)
class RunSpec:
    """One run, ready for a backend (`plan`) and for reading its outcome afterwards."""

    task: Task
    candidate: Candidate
    test_patch: str
    invocation: RunnerInvocation
    candidate_paths: tuple[str, ...]
    candidate_changes: tuple[FileDiff, ...]
    test_patch_paths: tuple[str, ...]
    timeout_s: float
    nonce: str
    plan: RunPlan
    options: RunOptions = field(default_factory=RunOptions)
    # A coverage run's invocation: the run is measured, not graded.
    measure: Coverage | None = None


def _candidate_shape(candidate: Candidate) -> tuple[Patch, tuple[str, ...], list[str], int]:
    """(parsed diff, paths, problems, size in bytes) of a candidate of either kind."""
    if candidate.kind is CandidateKind.FILES:
        size = sum(len((v or "").encode()) for v in candidate.files.values())
        return Patch(), tuple(candidate.files), mapping_problems(candidate.files), size
    parsed = read_patch(candidate.diff) if candidate.diff.strip() else Patch()
    return parsed, parsed.named_paths, diff_problems(parsed), len(candidate.diff.encode())


def graded_task(task: Task, invocation: Invocation) -> Task:
    """The task as the run is graded: an added module's run on its `loaded` test alone."""
    if isinstance(invocation, Probe | Capture):
        update = {"fail_to_pass": (loaded_test(invocation),), "pass_to_pass": ()}
        return task.model_copy(update=update)
    return task


def run_test_patch(task: Task, invocation: Invocation, test_patch: str | None) -> str:
    """The test patch the run applies: the request's (else the task's), with an added module's
    files."""
    tests = task.test_patch if test_patch is None else test_patch
    if isinstance(invocation, Probe | Capture):
        return with_added_files(tests, invocation.files)
    return tests


def _refused(status: RunStatus, reason: str, flags: PatchFlags) -> RunResult:
    return RunResult(status=status, reason=reason, flags=flags)


def prepare_run(
    task: Task,
    candidate: Candidate,
    *,
    run_id: str,
    test_patch: str | None = None,
    timeout_s: float,
    options: RunOptions,
    want_baseline: bool = False,
    nonce: str | None = None,
    invocation: Invocation | None = None,
    coverage_kit: Mapping[str, bytes] | None = None,
) -> RunSpec | RunResult:
    """The spec of one run, or the result of refusing it before it starts. A coverage run
    needs `coverage_kit`: coverage.py's wheels as stage files (`coverage_run`)."""
    invocation = invocation or Grade()
    tests = run_test_patch(task, invocation, test_patch)
    task = graded_task(task, invocation)
    parsed, paths, problems, size = _candidate_shape(candidate)
    plain = test_patch is None and not isinstance(invocation, Probe | Capture)
    test_parsed = task.test_diff.applied() if plain else read_patch(tests)
    test_paths = test_parsed.named_paths
    flags = patch_flags(paths, test_paths, config_verdicts(parsed.files, paths, None))
    if size > options.max_patch_bytes:
        reason = f"refused: the patch is {size} bytes, over the {options.max_patch_bytes} limit"
        return _refused(RunStatus.PATCH_FAILED, reason, flags)
    if problems:
        return _refused(RunStatus.PATCH_FAILED, "refused: " + "; ".join(problems[:5]), flags)
    test_problems = diff_problems(test_parsed)
    if test_problems:
        reason = "refused: the test patch names " + "; ".join(test_problems[:5])
        return _refused(RunStatus.PATCH_FAILED, reason, flags)
    if not task.image:
        return _refused(RunStatus.INFRA_ERROR, "the task names no image to run in", flags)
    junit = f"/tmp/hackaudit-report-{secrets.token_hex(8)}.xml" if options.junit else None
    try:
        runner = command_for(task, invocation, tests, junit)
    except UnknownParser as exc:
        return _refused(RunStatus.INFRA_ERROR, str(exc).strip("'\""), flags)
    except NoCommand as exc:
        return _refused(RunStatus.INFRA_ERROR, str(exc), flags)
    measure = invocation if isinstance(invocation, Coverage) else None
    if measure is not None and not coverage_kit:
        reason = "coverage runs are not available: no coverage.py wheels for the sandbox"
        return _refused(RunStatus.INFRA_ERROR, reason, flags)
    nonce = nonce or new_nonce()
    files = _payload_files(task, candidate, parsed, tests, test_parsed, runner, options)
    if measure is not None and coverage_kit:
        files.update(coverage_run.stage_files(measure, coverage_kit, runner.preamble()))
    if want_baseline:
        files["baseline"] = b""
    plan = RunPlan(
        run_id=run_id,
        image=task.image,
        argv=launcher_argv(),
        stdin=Payload(files).encode(nonce),
        user=RUN_USER,
        begin_marker=f"\n{marker(nonce, 'begin:')}".encode(),
        split_marker=split_marker(nonce),
        end_marker=end_marker(nonce),
        setup_timeout_s=options.setup_timeout_s,
        test_timeout_s=timeout_s,
    )
    return RunSpec(
        task=task,
        candidate=candidate,
        test_patch=tests,
        invocation=runner,
        candidate_paths=paths,
        candidate_changes=parsed.files,
        test_patch_paths=test_paths,
        timeout_s=timeout_s,
        nonce=nonce,
        plan=plan,
        options=options,
        measure=measure,
    )


def _payload_files(
    task: Task,
    candidate: Candidate,
    parsed: Patch,
    tests: str,
    test_parsed: Patch,
    invocation: RunnerInvocation,
    options: RunOptions,
) -> dict[str, bytes]:
    files: dict[str, bytes] = {"base": task.base_commit.encode() + b"\n"}
    if candidate.kind is CandidateKind.FILES and candidate.files:
        manifest = []
        for index, (path, content) in enumerate(candidate.files.items()):
            manifest.append(f"{'delete' if content is None else 'write'}\t{index}\t{path}\n")
            if content is not None:
                files[f"file.{index}"] = content.encode()
        files["files.manifest"] = "".join(manifest).encode()
    elif candidate.kind is CandidateKind.DIFF and candidate.diff.strip():
        diff = candidate.diff if candidate.diff.endswith("\n") else candidate.diff + "\n"
        files["candidate.diff"] = diff.encode()
    hunks = {change.path: change.hunks for change in parsed.files}
    paths = parsed.named_paths if candidate.kind is CandidateKind.DIFF else tuple(candidate.files)
    inspect = [
        p
        for p in paths
        if is_sectioned_config(p) and touches_test_sections(p, hunks.get(p, ())) is None
    ]
    if inspect:
        files["config.list"] = "\0".join(inspect).encode() + b"\0"
    if tests.strip():
        files["test.patch"] = (tests if tests.endswith("\n") else tests + "\n").encode()
        if test_parsed.modified_existing:
            files["reset.list"] = "\0".join(dict.fromkeys(test_parsed.modified_existing)).encode()
    files["test.sh"] = invocation.shell().encode()
    if invocation.junit_path:
        files["junit.path"] = invocation.junit_path.encode() + b"\n"
    if options.strict_test_patch:
        files["strict"] = b""
    return files
