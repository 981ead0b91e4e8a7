"""An in-memory container backend: answers each plan with scripted output in the wrapper's format.

Unit tests use it to drive the run logic through every outcome (patch failures, timeouts, OOM,
forged output) without Docker. A responder sees the run as the wrapper would — its nonce and the
files it was sent (candidate diff, test patch, test command) — and returns a `FakeOutcome`, which
is rendered exactly as the real wrapper prints, markers and all.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.execution import Execution, Phase, RunPlan
from hackaudit.sandbox.domain.log_parsers.junit import junit_address
from hackaudit.sandbox.domain.protocol import SURVIVORS_REPORT, decode_payload, marker
from hackaudit.sandbox.domain.transcript import CapturedOutput
from hackaudit.shared.contracts import TestStatus


@dataclass(frozen=True)
class FakeRun:
    """One plan as the fake received it."""

    plan: RunPlan
    nonce: str
    files: Mapping[str, bytes]
    # The signal the run slots gave the run (None without slots).
    demotion: Demotion | None = None

    def text(self, name: str) -> str | None:
        body = self.files.get(name)
        return None if body is None else body.decode()

    @property
    def candidate_diff(self) -> str | None:
        return self.text("candidate.diff")

    @property
    def test_command(self) -> str:
        return self.text("test.sh") or ""


@dataclass(frozen=True)
class FakeOutcome:
    """What the wrapper would have printed and the engine observed for one run."""

    runner_output: str = ""
    exit_code: int = 0
    apply: str = "ok:git-apply"
    apply_log: str = ""
    # Set-up before the candidate (None: the step is not printed, as when nothing needs it).
    reset: str | None = "ok"
    test_patch_check: str = "ok"
    setup_log: str = ""
    # After the candidate.
    restore: str | None = "ok"
    test_patch: str = "ok"
    git: str = "yes"
    oom_kills: int = 0
    junit: str | None = None
    # A coverage run's JSON report (coverage.py's `json --show-contexts`), or why there is none.
    coverage: str | None = None
    coverage_failed: str | None = None
    changed_files: tuple[str, ...] | None = ()
    # A process outlived the wrapper's final kill: no status and no coverage report follow.
    processes_left: bool = False
    baseline: tuple[str, ...] | None = None
    duration_s: float = 0.5
    timed_out: Phase | None = None
    # Seconds the engine saw the run spend in the background.
    background_s: float = 0.0
    wrapper_killed: bool = False
    started: bool = True
    container_oom: bool = False


def junit_xml(statuses: Mapping[str, TestStatus]) -> str:
    """A pytest-style JUnit report holding these node ids with these statuses."""
    cases = []
    for nodeid, status in statuses.items():
        classname, name = junit_address(nodeid)
        inner = {
            TestStatus.FAILED: "<failure message='x'/>",
            TestStatus.ERROR: "<error message='x'/>",
            TestStatus.SKIPPED: "<skipped type='pytest.skip' message='x'/>",
            TestStatus.XFAIL: "<skipped type='pytest.xfail' message='x'/>",
        }.get(status, "")
        cases.append(
            f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}>{inner}</testcase>"
        )
    return f"<testsuites><testsuite name='pytest'>{''.join(cases)}</testsuite></testsuites>"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _porcelain(paths: tuple[str, ...]) -> bytes:
    return b"".join(f"?? {path}\0".encode() for path in paths)


def render(nonce: str, outcome: FakeOutcome, start: float = 1000.0) -> CapturedOutput:
    """The wrapper's output for `outcome`, split at the test-exit marker as a backend keeps it."""

    def mark(kind: str) -> str:
        return f"\n{marker(nonce, kind)}\n"

    if not outcome.started:
        return CapturedOutput(head=b"sh: 1: /bin/bash: not found\n")
    before = mark("stage") + mark(f"git:{outcome.git}")
    if outcome.baseline is not None:
        before += mark("baseline") + _b64(_porcelain(outcome.baseline))
    if outcome.reset is not None:
        before += mark("reset-log") + outcome.setup_log + mark(f"reset:{outcome.reset}")
        if outcome.reset != "ok":
            return CapturedOutput(head=(before + mark("end")).encode())
    before += mark("test-patch-check-log") + outcome.setup_log
    before += mark(f"test-patch-check:{outcome.test_patch_check}")
    if outcome.test_patch_check != "ok":
        return CapturedOutput(head=(before + mark("end")).encode())
    before += mark("apply-log") + outcome.apply_log + mark(f"apply:{outcome.apply}")
    if not outcome.apply.startswith("ok"):
        return CapturedOutput(head=(before + mark("end")).encode())
    if outcome.restore is not None:
        before += mark("restore-log") + mark(f"restore:{outcome.restore}")
    before += mark("test-patch-log") + mark(f"test-patch:{outcome.test_patch}")
    before += mark(f"begin:{start}").rstrip("\n") + "\n" + outcome.runner_output
    if outcome.timed_out is not None or outcome.wrapper_killed:
        return CapturedOutput(head=before.encode())
    trailer = f"\n{marker(nonce, f'test-exit:{outcome.exit_code}:{start + outcome.duration_s}')}\n"
    trailer += f"{marker(nonce, f'oom-kills:{outcome.oom_kills}')}\n"
    if outcome.junit is not None:
        trailer += marker(nonce, "junit") + "\n" + _b64(outcome.junit.encode()) + "\n"
    if outcome.processes_left:
        trailer += marker(nonce, "survivors") + "\n"
        if outcome.coverage is not None or outcome.coverage_failed is not None:
            trailer += marker(nonce, "coverage-failed") + "\n" + SURVIVORS_REPORT + "\n"
        trailer += marker(nonce, "status:survivors") + "\n" + marker(nonce, "end") + "\n"
        return CapturedOutput(head=before.encode(), trailer=trailer.encode())
    if outcome.coverage is not None:
        trailer += marker(nonce, "coverage") + "\n" + _b64(outcome.coverage.encode()) + "\n"
    if outcome.coverage_failed is not None:
        trailer += marker(nonce, "coverage-failed") + "\n" + outcome.coverage_failed + "\n"
    if outcome.changed_files is not None:
        trailer += marker(nonce, "status") + "\n" + _b64(_porcelain(outcome.changed_files)) + "\n"
    else:
        trailer += marker(nonce, "status:no-git") + "\n"
    trailer += marker(nonce, "end") + "\n"
    return CapturedOutput(head=before.encode(), trailer=trailer.encode())


Responder = Callable[[FakeRun], FakeOutcome | Execution]


@dataclass
class FakeBackend:
    """A `ContainerBackend` that answers from `respond` and records every run it was given."""

    respond: Responder = field(default=lambda run: FakeOutcome())
    fault: Exception | None = None
    runs: list[FakeRun] = field(default_factory=list)
    started: bool = False
    closed: bool = False

    async def start(self) -> None:
        self.started = True

    async def execute(self, plan: RunPlan, demotion: Demotion | None = None) -> Execution:
        if self.fault is not None:
            raise self.fault
        nonce, files = decode_payload(plan.stdin)
        run = FakeRun(plan=plan, nonce=nonce, files=files, demotion=demotion)
        self.runs.append(run)
        answer = self.respond(run)
        if isinstance(answer, Execution):
            return answer
        return Execution(
            output=render(nonce, answer),
            exit_code=137 if answer.wrapper_killed else (127 if not answer.started else 0),
            timed_out=answer.timed_out,
            container_oom=answer.container_oom,
            wall_s=answer.duration_s + 0.1,
            background_s=answer.background_s,
        )

    async def close(self) -> None:
        self.closed = True
