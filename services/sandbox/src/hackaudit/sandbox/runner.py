"""The sandbox's service layer: serves a `RunRequested` with one or more graded runs.

What runs is the request's invocation (`RunRequested.invocation`: the task's graded tests, a
probe, a capture, the wider suite, or a coverage run, which gets coverage.py's wheels from the
`CoverageKit`; the domain's `command_for` turns it into a command line and a log parser).
Modes, by the request's purpose:

- `candidate` / `probe`: the request's candidate, once (or `repeats` times).
- `gold` / `empty` / `reference`: reference runs — the gold patch, the empty patch, or a given
  reference candidate (gold when none is given). The test durations of gold and empty runs are
  kept, and later runs of the task get `clamp(factor × gold duration, floor, cap)` as timeout.
- `gold_gate`: a new test patch (`RunRequested.test_patch`) against gold, repeated
  (`gold_gate_repeats` unless the request asks for more); runs that disagree make the completed
  event `flaky`.

A task that says how to build its image (`environment`), or names none, first gets its image
from `TaskImages` (built once per image; see `task_images`); when it cannot be had, every run of
the request is an `infra_error` naming the task and the build's reason.

Runs wait for a run slot in `RunSlots` when the runner has them (fair scheduling across tasks,
see `domain.fair_share`; a long run moved to the background gives its slot back, and its
`Demotion` tells the backend to lower its CPU weight, to restore it when the run returns to a
slot, and how long it was there: that time does not count against its timeout,
`domain.deadlines`). Each run is prepared and read by the
domain (`prepare_run`, `interpret`) and executed by the container backend; its full log is
stored as an artifact. A container fault is retried once in a fresh container, then reported as
`infra_error`; an unreachable engine is raised (`BackendUnavailable`) for the caller to retry
the message later.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Mapping

import structlog

from hackaudit.sandbox.adapters.coverage_kit import CoverageKitMissing
from hackaudit.sandbox.adapters.ports import (
    ArtifactStore,
    ContainerBackend,
    CoverageKit,
    TimingStore,
)
from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.outcome import interpret
from hackaudit.sandbox.domain.repeats import is_flaky
from hackaudit.sandbox.domain.run_spec import RunOptions, RunSpec, graded_task, prepare_run
from hackaudit.sandbox.domain.timeouts import TimeoutPolicy
from hackaudit.sandbox.errors import ContainerFailed, ImageMissing, InvalidRunRequest
from hackaudit.sandbox.run_slots import RunSlots
from hackaudit.sandbox.task_images import NoImage, TaskImages
from hackaudit.shared.contracts import (
    Candidate,
    Coverage,
    Grade,
    Invocation,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
)

log = structlog.get_logger(__name__)

GOLD = "gold"
EMPTY = "empty"
_NEEDS_CANDIDATE = {RunPurpose.CANDIDATE, RunPurpose.PROBE}


class Runner:
    """Serves run requests with a container backend, an artifact store and a timing store."""

    def __init__(
        self,
        backend: ContainerBackend,
        artifacts: ArtifactStore,
        timings: TimingStore,
        options: RunOptions,
        timeouts: TimeoutPolicy,
        gold_gate_repeats: int = 3,
        images: TaskImages | None = None,
        coverage_kit: CoverageKit | None = None,
        slots: RunSlots | None = None,
    ) -> None:
        self.backend = backend
        self.artifacts = artifacts
        self.timings = timings
        self.options = options
        self.timeouts = timeouts
        self.gold_gate_repeats = gold_gate_repeats
        self.images = images
        self.coverage_kit = coverage_kit
        self.slots = slots
        self._baselines: dict[str, tuple[str, ...]] = {}

    async def start(self) -> None:
        await self.backend.start()

    async def close(self) -> None:
        await self.backend.close()

    # --- requests ----------------------------------------------------------------------------

    def candidate_for(self, request: RunRequested) -> Candidate:
        """The patch a request orders to run (gold or empty for reference runs without one)."""
        if request.candidate is not None:
            if request.candidate.instance_id != request.task.instance_id:
                raise InvalidRunRequest("the candidate belongs to another task")
            return request.candidate
        if request.purpose in _NEEDS_CANDIDATE:
            raise InvalidRunRequest(f"a {request.purpose.value} run needs a candidate")
        if request.purpose is RunPurpose.EMPTY:
            return Candidate.empty(request.task)
        return Candidate.gold(request.task)

    def repeats_for(self, request: RunRequested) -> int:
        if request.purpose is RunPurpose.GOLD_GATE and request.repeats == 1:
            return self.gold_gate_repeats
        return request.repeats

    def timeout_for(self, task: Task, requested_s: float | None = None) -> float:
        return self.timeouts.size(self.timings.duration(task.instance_id, GOLD), requested_s)

    async def complete(self, request: RunRequested) -> RunCompleted:
        """All runs a request orders, graded, as one `RunCompleted`."""
        candidate = self.candidate_for(request)
        repeats = self.repeats_for(request)
        timeout_s = self.timeout_for(request.task, request.timeout_s)
        key = request.idempotency_key.rsplit(":", 1)[-1][:16]
        task = await self.images.ready(request.task) if self.images else request.task
        if isinstance(task, NoImage):
            failed = RunResult(status=RunStatus.INFRA_ERROR, reason=task.reason[:4000])
            self._log(request.task, candidate, request.purpose, failed)
            return self._completed(request, candidate, [failed] * repeats)
        results = await asyncio.gather(
            *(
                self.run_once(
                    task,
                    candidate,
                    test_patch=request.test_patch,
                    timeout_s=timeout_s,
                    artifact_key=f"{request.task.instance_id}/{request.purpose.value}/{key}-{i}.log",
                    purpose=request.purpose,
                    invocation=request.invocation,
                )
                for i in range(repeats)
            )
        )
        self._keep_timings(request, candidate, results)
        return self._completed(request, candidate, results)

    def _completed(
        self, request: RunRequested, candidate: Candidate, results: list[RunResult]
    ) -> RunCompleted:
        task = graded_task(request.task, request.invocation)
        graded = (*task.fail_to_pass, *task.pass_to_pass)
        return RunCompleted(
            correlation_id=request.correlation_id,
            instance_id=request.task.instance_id,
            purpose=request.purpose,
            request_key=request.idempotency_key,
            candidate_id=candidate.candidate_id,
            results=tuple(results),
            flaky=is_flaky(results, graded),
            requested_by=request.requested_by,
        )

    def _keep_timings(
        self, request: RunRequested, candidate: Candidate, results: list[RunResult]
    ) -> None:
        if request.test_patch is not None or not isinstance(request.invocation, Grade):
            return
        kind = {RunPurpose.GOLD: GOLD, RunPurpose.EMPTY: EMPTY}.get(request.purpose)
        if request.purpose is RunPurpose.REFERENCE and candidate.diff == request.task.patch:
            kind = GOLD
        if kind is None:
            return
        for result in results:
            if result.status is RunStatus.COMPLETED:
                self.timings.record(request.task.instance_id, kind, result.elapsed_s)

    # --- one run -----------------------------------------------------------------------------

    async def run_once(
        self,
        task: Task,
        candidate: Candidate,
        *,
        test_patch: str | None = None,
        timeout_s: float | None = None,
        artifact_key: str | None = None,
        purpose: RunPurpose = RunPurpose.CANDIDATE,
        invocation: Invocation | None = None,
    ) -> RunResult:
        """Run and grade one patch on one task; every expected outcome is a `RunResult`."""
        run_id = secrets.token_hex(6)
        timeout = timeout_s if timeout_s is not None else self.timeout_for(task)
        image = task.image or ""
        kit, kit_problem = await self._coverage_files(invocation)
        spec = prepare_run(
            task,
            candidate,
            run_id=run_id,
            test_patch=test_patch,
            timeout_s=timeout,
            options=self.options,
            want_baseline=image not in self._baselines,
            invocation=invocation,
            coverage_kit=kit,
        )
        if kit_problem and isinstance(spec, RunResult) and spec.status is RunStatus.INFRA_ERROR:
            spec = spec.model_copy(update={"reason": f"{spec.reason} ({kit_problem})"})
        key = artifact_key or f"{task.instance_id}/{purpose.value}/{run_id}.log"
        if isinstance(spec, RunResult):
            result = spec
        elif self.slots is None:
            result = await self._execute(spec, key, purpose)
        else:
            kind = invocation.kind if invocation is not None else Grade().kind
            async with self.slots.turn(task.instance_id, kind) as demotion:
                result = await self._execute(spec, key, purpose, demotion)
        self._log(task, candidate, purpose, result)
        return result

    async def _coverage_files(
        self, invocation: Invocation | None
    ) -> tuple[Mapping[str, bytes] | None, str]:
        """coverage.py's wheels when `invocation` is a coverage run, else None; and why there
        are none when it is one."""
        if not isinstance(invocation, Coverage):
            return None, ""
        if self.coverage_kit is None:
            return None, "the sandbox has no coverage kit"
        try:
            return await asyncio.to_thread(self.coverage_kit.files), ""
        except CoverageKitMissing as exc:
            return None, str(exc)

    async def _execute(
        self,
        spec: RunSpec,
        artifact_key: str,
        purpose: RunPurpose,
        demotion: Demotion | None = None,
    ) -> RunResult:
        """Execute a prepared run (one retry on a container fault) and store its log."""
        execution = None
        fault: ContainerFailed | None = None
        for _attempt in range(2):
            try:
                execution = await self.backend.execute(spec.plan, demotion)
                break
            except ImageMissing as exc:
                fault = exc
                break
            except ContainerFailed as exc:
                fault = exc
        if execution is None:
            reason = f"infrastructure: {fault}"
            return RunResult(status=RunStatus.INFRA_ERROR, reason=reason[:2000])
        image = spec.plan.image
        interpreted = interpret(spec, execution, baseline=self._baselines.get(image))
        if interpreted.baseline is not None:
            self._baselines.setdefault(image, interpreted.baseline)
        result = interpreted.result
        header = _artifact_header(spec, purpose, result)
        location = await asyncio.to_thread(
            self.artifacts.write, artifact_key, header + interpreted.log
        )
        return result.model_copy(update={"log_artifact": location})

    def _log(
        self, task: Task, candidate: Candidate, purpose: RunPurpose, result: RunResult
    ) -> None:
        log.info(
            "sandbox.run",
            instance_id=task.instance_id,
            purpose=purpose.value,
            candidate=candidate.content_hash,
            status=result.status.value,
            resolved=result.resolved,
            tests=len(result.tests),
            exit_code=result.exit_code,
            duration_s=result.duration_s,
            reason_sha=hashlib.sha256(result.reason.encode()).hexdigest()[:12],
        )


def _artifact_header(spec: RunSpec, purpose: RunPurpose, result: RunResult) -> str:
    lines = [
        "# hackaudit sandbox run",
        f"# instance: {spec.task.instance_id}",
        f"# image: {spec.plan.image}",
        f"# purpose: {purpose.value}",
        f"# candidate: {spec.candidate.candidate_id}",
        f"# runner: {spec.invocation.kind.value}, parser {spec.invocation.parser}",
        f"# timeout: {spec.timeout_s:g} s",
        f"# status: {result.status.value}, resolved: {result.resolved}",
        f"# exit code: {result.exit_code}, test duration: {result.duration_s} s",
        f"# reason: {result.reason}",
        f"# markers: @@hackaudit:{spec.nonce}:<kind>",
        "# --- test command ---",
        *(f"# {line}" for line in spec.invocation.shell().splitlines()),
        "# --- transcript ---",
        "",
    ]
    return "\n".join(lines)
