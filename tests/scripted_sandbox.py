"""An in-memory `SandboxPort` that grades by scripted rules instead of running anything.

A rule is a function from the request to a `RunResult` (or one per repeat), or None when it does
not apply; the first rule that applies decides, and a run no rule covers is a completed run that
resolves nothing. Every request is recorded, so tests can assert what reached the sandbox. The
attacker's and the repairer's tests share it: both speak to the sandbox through the one
`hackaudit.shared.ports.SandboxPort`.

A rule reads what a request runs from its invocation (`RunRequested.invocation`: the task's
graded tests, a probe, a capture or the wider suite); `added_tests` gives the test text a probe
or a capture run applies, built by the sandbox's own rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hackaudit.sandbox.domain.run_spec import run_test_patch
from hackaudit.shared.contracts import (
    Capture,
    PatchFlags,
    Probe,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    TestStatus,
)

Rule = Callable[[RunRequested], RunResult | list[RunResult] | None]


def passed(tests: Iterable[str], flags: PatchFlags | None = None, log_tail: str = "") -> RunResult:
    return RunResult(
        status=RunStatus.COMPLETED,
        resolved=True,
        tests=dict.fromkeys(tests, TestStatus.PASSED),
        flags=flags or PatchFlags(),
        log_tail=log_tail,
    )


def failed(tests: dict[str, TestStatus], log_tail: str = "") -> RunResult:
    return RunResult(status=RunStatus.COMPLETED, resolved=False, tests=tests, log_tail=log_tail)


def added_tests(request: RunRequested) -> str:
    """The test patch a request orders (its own, else "" for the task's), and for a probe or a
    capture the task's test patch with the module's files added as new files."""
    if not isinstance(request.invocation, Probe | Capture):
        return request.test_patch or ""
    return run_test_patch(request.task, request.invocation, request.test_patch)


class ScriptedSandbox:
    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules = list(rules)
        self.requests: list[RunRequested] = []

    def count(self, purpose: RunPurpose) -> int:
        return sum(r.purpose is purpose for r in self.requests)

    async def run(self, request: RunRequested) -> RunCompleted:
        self.requests.append(request)
        found = next((r for rule in self.rules if (r := rule(request)) is not None), None)
        if found is None:
            found = RunResult(status=RunStatus.COMPLETED, resolved=False, reason="no rule")
        results = tuple(found) if isinstance(found, list) else (found,) * request.repeats
        return RunCompleted(
            correlation_id=request.correlation_id,
            instance_id=request.task.instance_id,
            purpose=request.purpose,
            request_key=request.idempotency_key,
            candidate_id=request.candidate.candidate_id if request.candidate else None,
            results=results,
            requested_by=request.requested_by,
        )


Seconds = Callable[[RunRequested], float]


class TimedSandbox(ScriptedSandbox):
    """A scripted sandbox whose runs take time: `seconds(request)` per run, as the sandbox would
    report it. A run that would take longer than its request's timeout times out instead, and is
    counted at its timeout, as the sandbox counts it, plus `overrun_s` (what a real run may be
    counted beyond it: its time in the background). `spent[i]`: what `requests[i]`'s runs took."""

    def __init__(self, rules: Iterable[Rule], seconds: Seconds, overrun_s: float = 0.0) -> None:
        super().__init__(rules)
        self.seconds = seconds
        self.overrun_s = overrun_s
        self.spent: list[float] = []

    async def run(self, request: RunRequested) -> RunCompleted:
        done = await super().run(request)
        cost = self.seconds(request)
        limit = request.timeout_s
        if limit is not None and cost > limit:
            cut = RunResult(
                status=RunStatus.TIMEOUT,
                duration_s=limit + self.overrun_s,
                reason=f"timed out after {limit:g} s",
            )
            done = done.model_copy(update={"results": (cut,) * len(done.results)})
        else:
            timed = tuple(r.model_copy(update={"duration_s": cost}) for r in done.results)
            done = done.model_copy(update={"results": timed})
        self.spent.append(sum(r.duration_s for r in done.results))
        return done
