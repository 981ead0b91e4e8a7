"""Measures what the sandbox costs per run, against the bare test command and a naive runner.

Three ways to run the same task's tests with its gold patch, on the same engine:

- *bare*: the test command alone, `docker exec`-ed again and again in one long-lived container
  where the patches were applied once — the floor no verifier can beat;
- *sandbox*: the sandbox itself (`Runner` on the Docker backend), once per isolation mode:
  `container` — a fresh, locked-down container per run, taken from the per-image pool of started
  containers; `warm` — warm containers reused by `docker exec`, read-only root, writable places
  wiped between runs (`adapters.warm_backend`);
- *naive*: what the SWE-bench harness does per candidate — create and start a container, copy the
  patch in, apply it (git apply), record `git diff`, copy an evaluation script in and run it
  (git status/show/diff, restore the test files, apply the test patch, run the tests), record
  `git diff` again, read the log, remove the container. The harness stops its container with a
  15 s grace period that its `tail -f /dev/null` pid 1 never honours; the baseline here removes
  it at once instead, so it is a lower bound of the harness's cost.

Sandbox and naive runs are measured with 1 and with `workers` concurrent runs. The result holds
per-run latency medians, runs per minute, each mode's median overhead over the bare command,
sandbox/naive throughput ratios, how runs per minute scale from 1 to `workers` workers, and the
CPU the whole machine spent per run (other load on the machine counts too: the load average is
recorded beside it).
"""

from __future__ import annotations

import asyncio
import io
import os
import statistics
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker

from hackaudit.sandbox.adapters.artifact_store import FileArtifactStore
from hackaudit.sandbox.adapters.timing_store import MemoryTimingStore
from hackaudit.sandbox.bootstrap import docker_backend
from hackaudit.sandbox.domain.log_parsers import get_parser
from hackaudit.sandbox.domain.runners import resolve_invocation
from hackaudit.sandbox.runner import Runner
from hackaudit.sandbox.settings import Isolation, SandboxSettings
from hackaudit.shared.contracts import Candidate, RunStatus, Task

START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"


def busy_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (all cores; Linux only)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except OSError:
        return 0.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def _summary(latencies: list[float], wall_s: float, cpu_s: float = 0.0) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "median_s": round(statistics.median(ordered), 4),
        "p90_s": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 4),
        "runs_per_min": round(60 * len(ordered) / wall_s, 2),
        "cpu_per_run_s": round(cpu_s / len(ordered), 4),
        "load": load_average(),
    }


def _tar(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _test_command(task: Task) -> str:
    return resolve_invocation(task, task.test_patch, None).shell()


# --- bare -------------------------------------------------------------------------------------


def measure_bare(client: Any, task: Task, runs: int) -> dict[str, float]:
    """The test command alone, repeated in one long-lived container with the patches applied."""
    image = task.image or ""
    container = client.containers.run(
        image,
        entrypoint=["sleep"],
        command=["infinity"],
        detach=True,
        network_mode="none",
        user="1000:1000",
    )
    try:
        container.put_archive("/tmp", _tar({"gold.diff": task.patch, "test.diff": task.test_patch}))
        for patch in ("/tmp/gold.diff", "/tmp/test.diff"):
            done = container.exec_run(["git", "apply", patch], workdir="/testbed", user="1000:1000")
            if done.exit_code != 0:
                raise RuntimeError(f"bare setup could not apply {patch}: {done.output[-300:]!r}")
        command = ["bash", "-c", _test_command(task)]
        latencies = []
        started, cpu = time.monotonic(), busy_cpu_s()
        for _ in range(runs):
            began = time.monotonic()
            container.exec_run(command, user="1000:1000")
            latencies.append(time.monotonic() - began)
        return _summary(latencies, time.monotonic() - started, busy_cpu_s() - cpu)
    finally:
        container.remove(force=True)


# --- naive ------------------------------------------------------------------------------------


def _eval_script(task: Task) -> str:
    patch_files = " ".join(task.test_diff.applied().modified_existing)
    reset = f"git checkout {task.base_commit} {patch_files}" if patch_files else ":"
    return "\n".join(
        [
            "#!/bin/bash",
            "set -uxo pipefail",
            "cd /testbed",
            "git config --global --add safe.directory /testbed",
            "git status",
            "git show",
            f"git -c core.fileMode=false diff {task.base_commit}",
            reset,
            f"git apply -v - <<'EOF_114329324912'\n{task.test_patch}\nEOF_114329324912",
            f": '{START}'",
            _test_command(task),
            f": '{END}'",
            reset,
            "",
        ]
    )


def naive_run(client: Any, task: Task) -> tuple[float, bool]:
    """One run the way the SWE-bench harness runs a candidate; (latency, resolved)."""
    began = time.monotonic()
    container = client.containers.create(
        task.image,
        command="tail -f /dev/null",
        entrypoint=[],
        user="root",
        detach=True,
        network_mode="none",
    )
    try:
        container.start()
        container.put_archive("/tmp", _tar({"patch.diff": task.patch}))
        for apply in (
            "git apply --verbose",
            "git apply --verbose --reject",
            "patch --batch --fuzz=5 -p1 -i",
        ):
            if container.exec_run(f"{apply} /tmp/patch.diff", workdir="/testbed").exit_code == 0:
                break
        container.exec_run("git -c core.fileMode=false diff", workdir="/testbed")
        container.put_archive("/", _tar({"eval.sh": _eval_script(task)}))
        output = container.exec_run("/bin/bash /eval.sh").output.decode(errors="replace")
        container.exec_run("git -c core.fileMode=false diff", workdir="/testbed")
        region = output.split(START, 1)[-1].split(END, 1)[0]
        statuses = get_parser(resolve_invocation(task, task.test_patch, None).parser)(region)
        resolved = all(
            statuses.get(test) is not None and statuses[test].value in {"PASSED", "XFAIL"}
            for test in (*task.fail_to_pass, *task.pass_to_pass)
        )
    finally:
        container.remove(force=True)
    return time.monotonic() - began, resolved


def measure_naive(client: Any, task: Task, runs: int, workers: int) -> dict[str, Any]:
    started, cpu = time.monotonic(), busy_cpu_s()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(lambda _: naive_run(client, task), range(runs)))
    summary: dict[str, Any] = _summary(
        [o[0] for o in outcomes], time.monotonic() - started, busy_cpu_s() - cpu
    )
    summary["all_resolved"] = all(o[1] for o in outcomes)
    return summary


# --- sandbox ----------------------------------------------------------------------------------


async def measure_pooled(
    task: Task,
    runs: int,
    workers: int,
    settings: SandboxSettings,
    isolation: Isolation = Isolation.CONTAINER,
) -> dict[str, Any]:
    """The sandbox's own runs (gold patch), `workers` at a time, after a warm-up run per worker."""
    tuned = settings.model_copy(
        update={
            "max_concurrent_runs": workers,
            "pool_size": max(settings.pool_size, workers),
            "isolation": isolation,
        }
    )
    backend = docker_backend(tuned)
    runner = Runner(
        backend=backend,
        artifacts=FileArtifactStore(tuned.artifacts_dir),
        timings=MemoryTimingStore(),
        options=tuned.run_options(),
        timeouts=tuned.timeout_policy(),
    )
    await runner.start()
    candidate = Candidate.gold(task)
    try:
        warmups = await asyncio.gather(
            *(
                runner.run_once(task, candidate, timeout_s=tuned.timeout_cap_s)
                for _ in range(workers)
            )
        )
        for warm in warmups:
            if warm.status is not RunStatus.COMPLETED:
                raise RuntimeError(f"warm-up run did not complete: {warm.reason}")
        await asyncio.sleep(1.0)  # let the pool refill (or the resets finish) before timing
        gate = asyncio.Semaphore(workers)
        latencies: list[float] = []
        resolved: list[bool] = []

        async def one() -> None:
            async with gate:
                began = time.monotonic()
                result = await runner.run_once(task, candidate, timeout_s=tuned.timeout_cap_s)
                latencies.append(time.monotonic() - began)
                resolved.append(result.resolved is True)

        started, cpu = time.monotonic(), busy_cpu_s()
        await asyncio.gather(*(one() for _ in range(runs)))
        summary: dict[str, Any] = _summary(
            latencies, time.monotonic() - started, busy_cpu_s() - cpu
        )
        summary["all_resolved"] = all(resolved)
        counts = getattr(backend, "counts", None)
        if counts is not None:
            summary["containers"] = dict(counts)
        return summary
    finally:
        await runner.close()


# --- all --------------------------------------------------------------------------------------


def benchmark(
    image: str,
    task: Task,
    runs: int = 10,
    workers: int = 2,
    settings: SandboxSettings | None = None,
    isolations: tuple[Isolation, ...] = (Isolation.WARM, Isolation.CONTAINER),
) -> dict[str, Any]:
    """Bare, sandbox (per isolation mode) and naive figures for `task` run in `image` (see the
    module docstring).

    Blocking; call it from synchronous code (it runs its own event loop), never from a running
    event loop.
    """
    task = task.model_copy(update={"image": image})
    settings = settings or SandboxSettings(
        artifacts_dir=Path(tempfile.mkdtemp(prefix="hackaudit-bench-")), sweep_on_start=False
    )
    client = (
        docker.DockerClient(base_url=settings.docker_url)
        if settings.docker_url
        else (docker.from_env())
    )
    counts = sorted({1, max(1, workers)})
    n = str(counts[-1])
    try:
        bare = measure_bare(client, task, runs)
        sandbox = {
            mode.value: {
                str(w): asyncio.run(measure_pooled(task, runs, w, settings, mode)) for w in counts
            }
            for mode in isolations
        }
        naive = {str(w): measure_naive(client, task, runs, w) for w in counts}
    finally:
        client.close()
    return {
        "image": image,
        "instance_id": task.instance_id,
        "runs": runs,
        "workers": counts[-1],
        "bare": bare,
        "sandbox": sandbox,
        "naive": naive,
        "overhead_median_s": {
            mode: round(cells["1"]["median_s"] - bare["median_s"], 4)
            for mode, cells in sandbox.items()
        },
        "throughput_ratio": {
            mode: {w: round(cells[w]["runs_per_min"] / naive[w]["runs_per_min"], 2) for w in cells}
            for mode, cells in sandbox.items()
        },
        "scaling": {
            **{
                mode: round(cells[n]["runs_per_min"] / cells["1"]["runs_per_min"], 2)
                for mode, cells in sandbox.items()
            },
            "naive": round(naive[n]["runs_per_min"] / naive["1"]["runs_per_min"], 2),
        },
    }
