"""What the fault tests share: service processes on a cluster, the bus read back, and the checks.

Every service runs as its own OS process (`python -m hackaudit.<service>`, or the fake-engine
sandbox), connected to the test's NATS cluster, and is killed when the test ends, whatever
happened. The checks read what the audit left on the bus and in the results store: every task
has exactly one verdict, every run request was answered exactly once, nothing was dead-lettered.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import nats
from faststream.nats import NatsBroker
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from hackaudit.scorer.adapters.store import read_results
from hackaudit.scorer.domain.audit import Stage
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import (
    AttackCompleted,
    Message,
    RunCompleted,
    RunRequested,
    TaskScored,
    Verdict,
)
from hackaudit.shared.nats_server import dies_with_parent
from hackaudit.shared.settings import BusSettings

REPO = Path(__file__).resolve().parents[3]
# A header the tests put on the copies they publish on purpose (the duplicates test), so the
# checks can tell them from what the services published.
TEST_COPY_HEADER = "Hackaudit-Test-Copy"

# Short enough that a message whose worker died comes back within seconds.
FAST_BUS = {
    "HACKAUDIT_ACK_WAIT_S": "4",
    "HACKAUDIT_HEARTBEAT_S": "1",
    "HACKAUDIT_RETRY_DELAY_S": "0.2",
    "HACKAUDIT_BUS_REPLICAS": "3",
}
# The attack without its confirmation and reference-pool runs: the fault tests are about the
# message flow, and each of those runs costs sandbox time without adding a kind of message.
LEAN_ATTACKER = {
    "HACKAUDIT_CONFIRM_PROBES": "false",
    "HACKAUDIT_CONFIRM_HELD_BACK": "false",
    "HACKAUDIT_CONFIRM_SUITE": "off",
    "HACKAUDIT_REFERENCE_SAMPLE": "0",
}
SERVICE_MODULES = {
    "scorer": "hackaudit.scorer",
    "attacker": "hackaudit.attacker",
    "sandbox": "hackaudit.sandbox",
    "fake-sandbox": "tests.integration.faults.fake_sandbox",
}


def bus_settings() -> BusSettings:
    return BusSettings(ack_wait_s=4.0, heartbeat_s=1.0, retry_delay_s=0.2, bus_replicas=3)


@dataclass
class Services:
    """The service processes of one test; `stop_all` (called in a `finally`) kills every one."""

    tmp: Path
    url: str
    env: dict[str, str] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def state_dir(self) -> Path:
        return self.tmp / "state"

    @property
    def results_db(self) -> Path:
        return self.state_dir / "results.duckdb"

    def _env(self, extra: dict[str, str]) -> dict[str, str]:
        base = {
            k: v
            for k, v in os.environ.items()
            if "ANTHROPIC" not in k and "OPENAI" not in k and k != "NATS_URL"
        }
        return base | {
            "NATS_URL": self.url,
            "HACKAUDIT_STATE_DIR": str(self.state_dir),
            **FAST_BUS,
            **LEAN_ATTACKER,
            **self.env,
            **extra,
        }

    def start(self, name: str, kind: str | None = None, **extra: str) -> subprocess.Popen[bytes]:
        """Start service `kind` (default: `name`) as process `name`, logging to `<name>.log`."""
        module = SERVICE_MODULES[kind or name]
        self.state_dir.mkdir(parents=True, exist_ok=True)
        log = (self.tmp / f"{name}.log").open("ab")
        process = subprocess.Popen(
            dies_with_parent([sys.executable, "-m", module]),  # gone with the test run, even killed
            cwd=REPO, env=self._env(extra), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
        )  # fmt: skip
        log.close()
        self.processes[name] = process
        self.started.append(process)
        return process

    def kill(self, name: str) -> int:
        """SIGKILL process `name`, as a crash or the OOM killer would; returns its pid."""
        process = self.processes.pop(name)
        process.kill()
        process.wait(timeout=10)
        return process.pid

    def assert_running(self) -> None:
        for name, process in self.processes.items():
            assert process.poll() is None, f"{name} exited ({process.returncode}): {self.log(name)}"

    def log(self, name: str, chars: int = 3000) -> str:
        path = self.tmp / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def stop_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in self.started:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


# --- the bus, read back ---------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    subject: str
    headers: dict[str, str]
    data: bytes
    seq: int

    @property
    def copied_by_test(self) -> bool:
        return TEST_COPY_HEADER in self.headers


async def connect(urls: list[str]) -> Client:
    """A client that fails over between the cluster's nodes."""
    return await nats.connect(
        urls, connect_timeout=5, max_reconnect_attempts=-1, reconnect_time_wait=0.2
    )


async def records(
    js: JetStreamContext, subject: str, stream: str = subjects.STREAM
) -> list[Record]:
    """Every message kept on `subject` (wildcards allowed), in stream order."""
    found: list[Record] = []
    seq = 1
    while True:
        try:
            raw = await js.get_msg(stream, seq, subject=subject, next=True)
        except NotFoundError:
            return found
        seq = raw.seq or seq
        found.append(Record(raw.subject or "", dict(raw.headers or {}), raw.data or b"", seq))
        seq += 1


async def count(js: JetStreamContext, subject: str) -> int:
    """How many messages the stream keeps on `subject` (0 while the cluster cannot say)."""
    try:
        info = await js.stream_info(subjects.STREAM, subjects_filter=subject)
    except Exception:  # a node is down and a leader being elected: ask again later
        return 0
    return sum((info.state.subjects or {}).values())


async def scored_audits(js: JetStreamContext) -> set[str]:
    """The audits with a verdict on the bus (none while the cluster cannot say)."""
    try:
        found = await records(js, subjects.TASK_SCORED)
    except Exception:  # a node is down and a leader being elected: ask again later
        return set()
    return {TaskScored.model_validate_json(r.data).correlation_id for r in found}


@contextlib.asynccontextmanager
async def publisher(urls: list[str]) -> AsyncIterator[NatsBroker]:
    """A broker publishing the way the services do (`bus.publish`), failing over between nodes."""
    broker = NatsBroker(urls, logger=None)
    await broker.connect()
    try:
        yield broker
    finally:
        await broker.stop()


async def publish_all(broker: NatsBroker, messages: Iterable[tuple[str, Message]]) -> None:
    """Publish at once (concurrently), each with its idempotency key as `Nats-Msg-Id`."""
    await asyncio.gather(*(bus.publish(broker, subject, m) for subject, m in messages))


async def wait_until(
    condition: Callable[[], object], timeout: float, what: str, services: Services | None = None
) -> None:
    """Poll the async `condition` every 0.25 s until it is true; fail naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        if await condition():  # type: ignore[misc]
            return
        if services is not None:
            services.assert_running()
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g}s")
        await asyncio.sleep(0.25)


# --- the checks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditCheck:
    """What one audit left behind, summed up for the assertions and the test's output."""

    verdicts: dict[str, TaskScored]
    runs_requested: int
    runs_completed: int


async def check_audit(js: JetStreamContext, audits: set[str], results_db: Path) -> AuditCheck:
    """Every audit ended with exactly one verdict (on the bus and in the store), every run request
    was answered exactly once, every candidate was graded once, and no dead letters."""
    scored = [
        s
        for r in await records(js, subjects.TASK_SCORED)
        if not r.copied_by_test
        and (s := TaskScored.model_validate_json(r.data)).correlation_id in audits
    ]
    per_audit = Counter(s.correlation_id for s in scored)
    assert set(per_audit) == audits, f"no verdict: {sorted(audits - set(per_audit))[:5]}"
    twice = {cid: n for cid, n in per_audit.items() if n > 1}
    assert not twice, f"more than one verdict: {twice}"
    verdicts = {s.correlation_id: s for s in scored}
    errors = [s for s in scored if s.verdict is Verdict.ERROR]
    assert not errors, f"infrastructure errors: {[(s.correlation_id, s.reason) for s in errors]}"

    requested = {
        run.idempotency_key
        for r in await records(js, subjects.RUN_REQUESTED)
        if not r.copied_by_test
        and (run := RunRequested.model_validate_json(r.data)).correlation_id in audits
    }
    completed = Counter(
        done.request_key
        for r in await records(js, f"{subjects.RUN_COMPLETED}.>")
        if not r.copied_by_test
        and (done := RunCompleted.model_validate_json(r.data)).correlation_id in audits
    )
    recorded_twice = {key: n for key, n in completed.items() if n > 1}
    assert not recorded_twice, f"runs recorded twice: {recorded_twice}"
    assert set(completed) == requested, (
        f"requests never answered: {len(requested - set(completed))}, "
        f"answers to no request: {len(set(completed) - requested)}"
    )

    for r in await records(js, subjects.ATTACK_COMPLETED):
        attack = AttackCompleted.model_validate_json(r.data)
        graded = Counter(o.candidate.candidate_id for o in attack.outcomes)
        assert all(n == 1 for n in graded.values()), f"{attack.correlation_id}: graded twice"

    letters = await records(js, f"{subjects.DEAD_LETTER_PREFIX}.>", subjects.DEAD_LETTER_STREAM)
    assert not letters, f"dead letters: {[(r.subject, r.data[:300]) for r in letters]}"

    stored = {a.correlation_id: a for a in read_results(results_db) if a.correlation_id in audits}
    assert set(stored) == audits, f"audits missing from the store: {audits - set(stored)}"
    for cid, state in stored.items():
        assert state.stage is Stage.SCORED and state.scored is not None, f"{cid}: {state.stage}"
        assert state.scored.idempotency_key == verdicts[cid].idempotency_key, cid
        assert state.gold is not None and len(state.gold) == state.options.gold_repeats, cid
    return AuditCheck(verdicts, len(requested), sum(completed.values()))


def same_outcome(check: AuditCheck) -> None:
    """The tasks are copies of one task: a fault that changed an outcome shows as a difference."""
    outcomes = {(s.verdict, s.eqs, s.reason) for s in check.verdicts.values()}
    assert len(outcomes) == 1, f"copies of one task ended differently: {outcomes}"
