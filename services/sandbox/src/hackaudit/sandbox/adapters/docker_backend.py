"""Runs plans in throwaway Docker containers, locked down, from a per-image pool.

Every container runs the plan's command (the run's wrapper) as its main process, as uid 1000,
under `docker-init`; it is started ahead of time and waits on its standard input, so a run only
attaches to it, sends the run's input and reads the output — no `docker exec`, whose cost is
paid per run. Each container has no network, all capabilities dropped, `no-new-privileges`,
a seccomp profile that refuses tracing other processes (see `seccomp_profile`), memory (without
swap), pids, CPU and file-size limits, no log driver (nothing it prints reaches the host's disk),
is labelled `hackaudit.sandbox=1`, and is removed after its one run whatever happened.
The root file system is read-only; the only writable places are size-limited tmpfs mounts
(`writable_places`): `/testbed`, filled from the derived image's pristine copy by the container's
main process as soon as the container starts (before the run attaches: the pool starts
containers ahead), `/tmp`, `/var/tmp` and `/dev/shm`. What a run writes is capped
(`max_write_mb` in all, a share of it per place, and a memory limit that holds every place full
at once), fails inside the run with ENOSPC past a place's share, and never reaches the host's
disk.

Blocking Docker calls run in worker threads so the event loop never waits on them; the stream
of one run is read in one thread, with the run's deadlines enforced there by killing the
container: the host enforces them (nothing inside the container limits the tests' time), so a
run's deadline can move by the time it spends in the background (`domain.deadlines`).

Images are adapted once: a derived image, tagged `hackaudit-sandbox/runnable:<hash of the image
id and the recipe>` (`writable_places.recipe`, the same image for both isolation modes), holds a
pristine copy of `/testbed` owned by uid 1000 and the wrapper's execute-only bash.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import os
import secrets
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import docker
import requests
import structlog
from docker.errors import DockerException, ImageNotFound, NotFound
from docker.types import LogConfig, Ulimit

from hackaudit.sandbox.adapters.container_pool import ContainerPool
from hackaudit.sandbox.adapters.output_capture import FrameDecoder, OutputCapture
from hackaudit.sandbox.adapters.seccomp_profile import security_option
from hackaudit.sandbox.adapters.writable_places import (
    TESTBED_KB_LABEL,
    confined_options,
    image_argv,
    recipe,
    recorded_testbed_kb,
)
from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.cpu_weight import CpuWeight
from hackaudit.sandbox.domain.deadlines import PhaseDeadline, time_in
from hackaudit.sandbox.domain.execution import Execution, Phase, RunPlan
from hackaudit.sandbox.errors import BackendUnavailable, ContainerFailed, ImageMissing
from hackaudit.sandbox.settings import SandboxSettings

log = structlog.get_logger(__name__)

LABEL = "hackaudit.sandbox"
OWNER_LABEL = "hackaudit.sandbox.owner"
PROBE_USER = "65534:65534"
RUNNER_UID = "1000"
DERIVED_REPOSITORY = "hackaudit-sandbox/runnable"
_RECV = 256 * 1024


def owner_id() -> str:
    """`host/pid/token`: which sandbox process (and which backend in it) made a container."""
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(4)}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class Limits:
    memory_mb: int
    pids: int
    cpus: float
    max_file_bytes: int

    @classmethod
    def from_settings(cls, settings: SandboxSettings) -> Limits:
        return cls(
            memory_mb=settings.memory_mb,
            pids=settings.pids_limit,
            cpus=settings.cpus,
            max_file_bytes=settings.max_file_mb << 20,
        )


def container_options(
    image: str, limits: Limits, owner: str, argv: tuple[str, ...], user: str
) -> dict[str, Any]:
    """The `containers.create` arguments of every sandbox container: `argv` as `user`."""
    memory = f"{limits.memory_mb}m"
    return {
        "image": image,
        "entrypoint": [argv[0]],
        "command": list(argv[1:]),
        "user": user,
        "init": True,
        "detach": True,
        "stdin_open": True,
        "tty": False,
        "network_mode": "none",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges", security_option()],
        "mem_limit": memory,
        "memswap_limit": memory,
        "pids_limit": limits.pids,
        "nano_cpus": int(limits.cpus * 1e9),
        "ulimits": [Ulimit(name="fsize", soft=limits.max_file_bytes, hard=limits.max_file_bytes)],
        "log_config": LogConfig(type=LogConfig.types.NONE),
        "ipc_mode": "private",
        "hostname": "sandbox",
        "working_dir": "/",
        "labels": {LABEL: "1", OWNER_LABEL: owner, f"{LABEL}.image": image[:200]},
    }


def build_image(client: Any, recipe: str, tag: str, failure: str) -> str:
    """Builds the Dockerfile `recipe` as `tag`, offline, and returns `tag`; `failure` opens the
    message of the ContainerFailed raised when the engine cannot build it."""
    try:
        client.images.build(
            fileobj=io.BytesIO(recipe.encode()), tag=tag, network_mode="none", rm=True
        )
    except (DockerException, requests.RequestException) as exc:
        raise ContainerFailed(f"{failure}: {exc}") from exc
    return tag


def background_s(demotion: Demotion | None, started: float) -> float:
    """Seconds the run started at `started` has spent in the background up to now."""
    if demotion is None:
        return 0.0
    return round(time_in(demotion.background(), started, time.monotonic()), 3)


class DerivedImages:
    """The image derived from each image, worked out once per process (in a thread: the Docker SDK
    blocks); a caller asking for an image already being derived waits for that derivation."""

    def __init__(self, derive: Callable[[str], str]) -> None:
        self._derive = derive
        self._done: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def of(self, image: str) -> str:
        if image in self._done:
            return self._done[image]
        async with self._locks.setdefault(image, asyncio.Lock()):
            if image not in self._done:
                self._done[image] = await asyncio.to_thread(self._derive, image)
        return self._done[image]


class LongRunWeight:
    """Keeps a run's CPU weight where it belongs: low `delay` seconds from now (a timer thread;
    never with None) or while the run is in the background (`background(True)`: lowered at
    once), normal again when it returns to a slot (unless the timer fired). Each change is made
    in a thread of its own (never blocks the caller), one at a time, to the state wanted when
    it is made, so quick moves cannot leave a stale weight. Nothing changes after `stop`, which
    says whether the weight is low then."""

    def __init__(
        self,
        lower: Callable[[], bool],
        delay: float | None,
        restore: Callable[[], bool] | None = None,
    ) -> None:
        self._lower = lower
        self._restore = restore
        self._lock = threading.Lock()
        self._changing = threading.Lock()
        self._done = False
        self._timed = False
        self._background = False
        self._lowered = False
        self._timer: threading.Timer | None = None
        if delay is not None:
            self._timer = threading.Timer(delay, self._time_up)
            self._timer.daemon = True
            self._timer.start()

    def lower_soon(self) -> None:
        """The run moved to the background: lower the weight now."""
        self.background(True)

    def background(self, moved_out: bool) -> None:
        """The run moved to the background (True) or back to a slot (False)."""
        with self._lock:
            if self._done:
                return
            self._background = moved_out
        now = threading.Timer(0.0, self._settle)
        now.daemon = True
        now.start()

    def _time_up(self) -> None:
        with self._lock:
            self._timed = True
        self._settle()

    def _settle(self) -> None:
        with self._changing:
            with self._lock:
                if self._done:
                    return
                low = self._timed or self._background
            if low == self._lowered or (not low and self._restore is None):
                return
            changed = self._lower() if low else self._restore is not None and self._restore()
            if changed:
                self._lowered = low

    def stop(self) -> bool:
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()
        with self._changing:
            return self._lowered


class DockerBackend:
    """The `ContainerBackend` on a Docker engine (see the module docstring)."""

    def __init__(self, settings: SandboxSettings, client: Any | None = None) -> None:
        self._settings = settings
        self._client = client
        self._limits = Limits.from_settings(settings)
        self._weight: CpuWeight = settings.cpu_weight()
        self._owner = owner_id()
        self._pools: OrderedDict[tuple[str, ...], ContainerPool] = OrderedDict()
        self._runnable = DerivedImages(self._adapt_image)
        self._max_write_mb = settings.max_write_mb
        # The derived images' pristine /testbed sizes in KiB (None: no repository).
        self._testbed_kb: dict[str, int | None] = {}
        # Runs in slots and runs moved to the background (the run slots bound each).
        self._slots = asyncio.Semaphore(settings.runs_at_once())
        self._readers = ThreadPoolExecutor(
            max_workers=settings.runs_at_once(), thread_name_prefix="sandbox-run"
        )

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                url = self._settings.docker_url
                self._client = docker.DockerClient(base_url=url) if url else docker.from_env()
            except DockerException as exc:
                raise BackendUnavailable(f"cannot reach the Docker engine: {exc}") from exc
        return self._client

    async def start(self) -> None:
        try:
            await asyncio.to_thread(self.client.ping)
        except (DockerException, requests.RequestException) as exc:
            raise BackendUnavailable(f"cannot reach the Docker engine: {exc}") from exc
        if self._settings.sweep_on_start:
            await asyncio.to_thread(self.sweep)

    def sweep(self) -> int:
        """Remove sandbox containers left by sandbox processes of this host that are gone, and
        any sandbox container older than `stale_container_s` (no run lives that long).

        Reads the container list in one call (no per-container inspect), so a container that
        another process removes meanwhile is simply skipped."""
        host = socket.gethostname()
        removed = 0
        owners: set[str] = set()
        listed = self.client.api.containers(all=True, filters={"label": f"{LABEL}=1"})
        for entry in listed:
            owner_host, _, rest = (entry.get("Labels") or {}).get(OWNER_LABEL, "").partition("/")
            pid = rest.partition("/")[0]
            dead = owner_host == host and pid.isdigit() and not _pid_alive(int(pid))
            stale = (
                time.time() - float(entry.get("Created") or 0) > self._settings.stale_container_s
            )
            if dead or stale:
                with contextlib.suppress(DockerException):
                    self.client.api.remove_container(entry["Id"], force=True, v=True)
                    removed += 1
                    owners.add(f"{owner_host}/{rest}" + ("" if dead else " (stale)"))
        if removed:
            log.warning("sandbox.swept", containers=removed, owners_gone=sorted(owners))
        return removed

    async def close(self) -> None:
        pools, self._pools = list(self._pools.values()), OrderedDict()
        await asyncio.gather(*(pool.close() for pool in pools), return_exceptions=True)
        await asyncio.to_thread(self._remove_own)
        self._readers.shutdown(wait=False, cancel_futures=True)

    def _remove_own(self) -> None:
        """Remove every container this backend made that is still there (those of runs in flight
        when the service stops), found by its owner label: none outlives the backend."""
        if self._client is None:
            return
        try:
            own = {"label": f"{OWNER_LABEL}={self._owner}"}
            listed = self.client.api.containers(all=True, filters=own)
        except (DockerException, requests.RequestException) as exc:
            log.warning("sandbox.close_list_failed", error=str(exc)[:200])
            return
        for entry in listed:
            self._remove(entry["Id"])
        if listed:
            log.info("sandbox.removed_at_close", containers=len(listed))

    # --- runs --------------------------------------------------------------------------------

    async def execute(self, plan: RunPlan, demotion: Demotion | None = None) -> Execution:
        async with self._slots:
            pool = await self._pool(plan)
            container_id = await pool.acquire()
            try:
                loop = asyncio.get_running_loop()
                return await loop.run_in_executor(
                    self._readers, self._run, container_id, plan, demotion
                )
            finally:
                pool.discard(container_id)

    async def _pool(self, plan: RunPlan) -> ContainerPool:
        """The pool of containers started for plans like this one (same image and command)."""
        key = (plan.image, plan.user, *plan.argv)
        pool = self._pools.get(key)
        if pool is None:
            runnable = await self._runnable_image(plan.image)
            options = self._confined(runnable, plan.argv, plan.user)
            pool = self._pools.get(key)
            if pool is None:
                pool = ContainerPool(
                    plan.image,
                    self._settings.pool_size,
                    create=lambda: asyncio.to_thread(self._create, options),
                    remove=lambda cid: asyncio.to_thread(self._remove, cid),
                )
                self._pools[key] = pool
                await self._evict_pools()
        self._pools.move_to_end(key)
        return pool

    async def _evict_pools(self) -> None:
        while len(self._pools) > self._settings.pooled_images:
            _, oldest = self._pools.popitem(last=False)
            await oldest.close()

    def _create(self, options: dict[str, Any]) -> str:
        image = options["image"]
        try:
            container = self.client.containers.create(**options)
        except ImageNotFound as exc:
            raise ImageMissing(f"image {image!r} is not on this Docker engine") from exc
        except (DockerException, requests.RequestException) as exc:
            raise ContainerFailed(f"cannot create a container of {image!r}: {exc}") from exc
        try:
            container.start()
        except (DockerException, requests.RequestException) as exc:
            self._remove(container.id)
            raise ContainerFailed(f"cannot start a container of {image!r}: {exc}") from exc
        return str(container.id)

    def _remove(self, container_id: str) -> None:
        with contextlib.suppress(NotFound):
            try:
                self.client.api.remove_container(container_id, force=True, v=True)
            except (DockerException, requests.RequestException) as exc:
                log.warning("sandbox.remove_failed", container=container_id[:12], error=str(exc))

    def _exchange(
        self,
        stream: Any,
        container_id: str,
        plan: RunPlan,
        started: float,
        demotion: Demotion | None = None,
    ) -> tuple[OutputCapture, Phase | None]:
        """Send the run its input on `stream` and read its output to the end or to a deadline
        (killing the container at the deadline; time in the background does not count, see
        `domain.deadlines`); (what was read, the deadline hit or None)."""
        raw = getattr(stream, "_sock", stream)
        capture = OutputCapture(
            plan.begin_marker,
            plan.split_marker,
            plan.end_marker,
            self._settings.log_head_bytes,
            self._settings.log_tail_bytes,
            self._settings.trailer_bytes,
        )
        try:
            raw.settimeout(plan.setup_timeout_s)
            raw.sendall(plan.stdin)
            timed_out = self._read(raw, capture, plan, started, demotion)
        except OSError as exc:
            raise ContainerFailed(f"lost the run's output stream: {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                raw.close()
        if timed_out is not None:
            with contextlib.suppress(DockerException, requests.RequestException):
                self.client.api.kill(container_id)
        return capture, timed_out

    def _run(self, container_id: str, plan: RunPlan, demotion: Demotion | None) -> Execution:
        """One run in a started container: attach, send its input, read its output to the end or
        to a deadline (blocking; runs in a worker thread)."""
        api = self.client.api
        started = time.monotonic()
        try:
            stream = api.attach_socket(
                container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
        except (DockerException, requests.RequestException) as exc:
            raise ContainerFailed(f"cannot attach to the run's container: {exc}") from exc
        weight = self._weigh(container_id, plan, demotion)
        try:
            capture, timed_out = self._exchange(stream, container_id, plan, started, demotion)
        finally:
            weight.stop()
        exit_code, oom = (0, False) if capture.finished else self._exit(container_id)
        return Execution(
            output=capture.result(),
            exit_code=exit_code,
            timed_out=timed_out,
            container_oom=oom,
            wall_s=time.monotonic() - started,
            background_s=background_s(demotion, started),
        )

    def _weigh(self, container_id: str, plan: RunPlan, demotion: Demotion | None) -> LongRunWeight:
        """What sets the CPU weight of the run starting now: low while the run slots hold it in
        the background (normal again when it returns to a slot), or low once it goes on long
        (`long_run_cpu_after_s`)."""
        limit = 2 * plan.setup_timeout_s + plan.test_timeout_s
        low, normal = self._weight.low_shares, self._weight.normal_shares
        weight = LongRunWeight(
            lambda: self._set_shares(container_id, low),
            self._weight.lower_in(0.0, limit),
            lambda: self._set_shares(container_id, normal),
        )
        if demotion is not None and low < normal:
            demotion.when_moved(weight.background)
        return weight

    def _set_shares(self, container_id: str, shares: int) -> bool:
        """Set a container's CPU weight; a failure is logged, never raised (a run does not
        depend on its weight)."""
        try:
            self.client.api.update_container(container_id, cpu_shares=shares)
        except Exception as exc:  # whatever fails here must not fail the run
            log.warning(
                "sandbox.cpu_shares_failed",
                container=container_id[:12],
                shares=shares,
                error=str(exc)[:200],
            )
            return False
        log.info("sandbox.cpu_shares", container=container_id[:12], shares=shares)
        return True

    def _read(
        self,
        raw: Any,
        capture: OutputCapture,
        plan: RunPlan,
        started: float,
        demotion: Demotion | None = None,
    ) -> Phase | None:
        """Feed the run's output to `capture` to its end or to the current phase's deadline,
        which moves by the time the run spends in the background (`domain.deadlines`); the
        phase whose deadline passed, or None."""
        decoder = FrameDecoder()
        phase = capture.phase
        deadline = PhaseDeadline(started, plan.setup_timeout_s)
        while not capture.finished:
            now = time.monotonic()
            if capture.phase is not phase:
                phase = capture.phase
                limit = plan.test_timeout_s if phase is Phase.TEST else plan.setup_timeout_s
                deadline = PhaseDeadline(now, limit)
            left = deadline.left(now, demotion.background() if demotion is not None else ())
            if left <= 0:
                return phase
            raw.settimeout(max(0.05, min(1.0, left)))
            try:
                data = raw.recv(_RECV)
            except TimeoutError:
                continue
            if not data:
                break
            for chunk in decoder.feed(data):
                capture.feed(chunk)
        return None

    def _exit(self, container_id: str) -> tuple[int | None, bool]:
        """(exit code, killed by the memory limit) of a run that ended without its end marker."""
        try:
            self.client.api.wait(container_id, timeout=5)
            state = self.client.api.inspect_container(container_id)["State"]
        except (DockerException, requests.RequestException):
            return None, False
        code = state.get("ExitCode")
        return (int(code) if code is not None else None), bool(state.get("OOMKilled"))

    # --- images ------------------------------------------------------------------------------

    async def _runnable_image(self, image: str) -> str:
        return await self._runnable.of(image)

    def _confined(self, runnable: str, argv: tuple[str, ...], user: str) -> dict[str, Any]:
        """The options of a run's container of the derived image `runnable`: read-only root,
        size-limited tmpfs writable places (`writable_places`), `argv` filling `/testbed`."""
        kb = self._testbed_kb.get(runnable)
        options = container_options(
            runnable, self._limits, self._owner, image_argv(argv, kb is not None), user
        )
        return confined_options(options, self._limits.memory_mb, self._max_write_mb, kb)

    def _adapt_image(self, image: str) -> str:
        """The derived image of `image` (`writable_places.recipe`): uid 1000 owns a pristine
        copy of /testbed, the wrapper's execute-only bash; built once, then reused."""
        try:
            details = self.client.images.get(image)
        except ImageNotFound as exc:
            raise ImageMissing(f"image {image!r} is not on this Docker engine") from exc
        except (DockerException, requests.RequestException) as exc:
            raise BackendUnavailable(f"cannot inspect image {image!r}: {exc}") from exc
        labels = details.labels or {}
        if labels.get(f"{LABEL}.runnable") == "1" and TESTBED_KB_LABEL in labels:
            self._testbed_kb[image] = recorded_testbed_kb(labels)
            return image
        template = recipe("IMAGE", details.id, 0)
        digest = hashlib.sha256(f"{details.id}\0{template}".encode()).hexdigest()[:16]
        derived = f"{DERIVED_REPOSITORY}:{digest}"
        with contextlib.suppress(ImageNotFound):
            self._testbed_kb[derived] = recorded_testbed_kb(self.client.images.get(derived).labels)
            return derived
        kb = self._testbed_size(image)
        log.info("sandbox.image.adapting", image=image, testbed_kb=kb, derived=derived)
        built = build_image(
            self.client,
            recipe(image, details.id, kb),
            derived,
            f"cannot adapt image {image!r} for uid 1000",
        )
        self._testbed_kb[derived] = kb
        return built

    def _testbed_size(self, image: str) -> int | None:
        """The size in KiB of /testbed in `image` as uid 1000 sees it (None when it has none)."""
        idle = ("sleep", "infinity")
        container_id = self._create(
            container_options(image, self._limits, self._owner, idle, PROBE_USER)
        )
        measure = "[ -d /testbed ] && du -sk /testbed 2>/dev/null | cut -f1"
        try:
            result = self.client.api.exec_create(
                container_id, ["/bin/sh", "-c", measure], user=RUNNER_UID
            )
            output = self.client.api.exec_start(result["Id"]).decode().strip()
        finally:
            self._remove(container_id)
        return int(output) if output.isdigit() else None
