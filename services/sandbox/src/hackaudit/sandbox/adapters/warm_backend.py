"""Runs plans in warm, reused containers whose only writable places are wiped between runs.

Creating, starting and removing a container costs the engine (dockerd, containerd, a shim and
runc, the layer's mount and unmount) as much CPU as a small test; `docker exec` in a running
container costs a fraction of it. This backend keeps a few started containers per concurrent run
and image, runs each plan in one of them with `docker exec`, and makes sure nothing of one run
reaches the next by construction rather than by enumeration:

- the container's root file system is **read-only**; the only writable places are the
  size-limited tmpfs mounts `/testbed`, `/tmp`, `/var/tmp` (and the engine's `/dev/shm` and
  `/dev/mqueue`), the same as in container mode (`writable_places`: a write past the cap fails
  with ENOSPC inside the run), so those are the only places a run can leave a file;
- the image is the derived image container mode uses (`writable_places.recipe`), with a copy
  of `/testbed` at `/opt/hackaudit/testbed` and an execute-only copy of bash for the run's
  wrapper, read-only like the rest of the image;
- after every run a reset, as uid 1000, kills every uid-1000 process (the container's init and
  its idle child run as another uid and are never touched), refuses the container when any
  process survives or any TCP or UDP socket is left in its network namespace (a connection in
  TIME_WAIT on a fixed loopback port would make the next run's `bind()` fail), empties every
  writable place, removes the System V IPC objects uid 1000 owns, copies the pristine
  `/testbed` back (and refreshes git's index of the copy, whose files have new inode numbers,
  with no global or system git configuration), checks that the places are empty, and reports
  the container's OOM-kill count. Only a reset that
  succeeded and saw no OOM kill returns the container to the idle set, with the next run's
  launcher already started in it (the reset's own process becomes it: one `docker exec` per run)
  and waiting for the run's input (so `docker exec`'s start-up is
  off the run's path too; the wrapper reads its nonce from that input, so nothing of the run
  exists in the container before the run sends it);
- a run that timed out, ended without its end marker, or whose reset failed takes its container
  with it (removed); the next run gets a new one.

The reset cannot be steered by a candidate process that is still alive when it starts: it runs
from the execute-only copy of bash, so it is non-dumpable (no same-uid `ptrace`, no
`/proc/<pid>/mem`), and the sandbox's seccomp profile refuses `ptrace` and
`process_vm_readv` / `process_vm_writev` to every process of the container (see
`seccomp_profile`); its first act, `kill(-1, SIGKILL)`, ends every other uid-1000 process at
once (a fork racing it is refused by the kernel). A signal can only end or pause the reset, and a
reset that does not report success discards its container. And nothing a candidate configures
runs between its run's final kill and the reset: the wrapper's last git calls run with the
repository's configuration as it was before the run (see `protocol`).

Everything else is what `DockerBackend` gives every container (no network, all capabilities
dropped, `no-new-privileges`, the sandbox's seccomp profile, memory / pids / CPU / file-size
limits, no log driver, labels); `docker exec` processes inherit all of it. The resets run off a
run's critical path, while the next run of another container proceeds.

As in container mode, HOME is not writable (the wrapper then points it at its private
directory), and an image whose tests must write outside `/testbed` and `/tmp` fails its runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

import requests
import structlog
from docker.errors import DockerException, NotFound

from hackaudit.sandbox.adapters.docker_backend import (
    LABEL,
    DockerBackend,
    background_s,
    container_options,
)
from hackaudit.sandbox.adapters.output_capture import FrameDecoder
from hackaudit.sandbox.adapters.writable_places import (
    EVERY_PLACE,
    IMAGE_LAUNCHER,
    PRISTINE,
    SHELL,
    confined_options,
)
from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.execution import Execution, RunPlan
from hackaudit.sandbox.domain.protocol import (
    GIT_SAFE,
    OOM_KILLS,
    OTHERS,
    RUN_USER,
    WRAPPER,
    launcher_argv,
)
from hackaudit.sandbox.errors import ContainerFailed
from hackaudit.sandbox.settings import SandboxSettings

log = structlog.get_logger(__name__)

KEEPER_USER = "65534:65534"
RESET_OK = "hackaudit-reset:ok:"
# The container's sockets (its own network namespace); only the header line may remain.
SOCKET_TABLES = ("/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6")

# The protocol's launcher without its per-run copy of bash: the derived image holds an
# execute-only copy (root's, on the read-only root), which the wrapper runs from, so it is
# non-dumpable as with the launcher's own copy.
WARM_LAUNCHER = IMAGE_LAUNCHER

# Runs as uid 1000 between runs (see the module docstring). Prints `RESET_OK<oom kills>` last.
# The copy's files have new inode numbers, so git's index is refreshed here rather than by the
# next run's first git command.
RESET = rf"""
{OTHERS}
n=0
while :; do
  kill -KILL -1 2>/dev/null
  others || break
  n=$((n + 1)); [ "$n" -ge 300 ] && {{ echo "processes survive"; exit 3; }}
  sleep 0.01
done
for f in {" ".join(SOCKET_TABLES)}; do
  [ -r "$f" ] || continue
  {{ read -r _ && ! read -r _; }} < "$f" || {{ echo "sockets left in $f"; exit 7; }}
done
for d in {" ".join(EVERY_PLACE)}; do
  [ -d "$d" ] || continue
  [ -O "$d" ] && chmod u+rwx "$d"
  find "$d" -mindepth 1 -type d ! -perm -u=rwx -exec chmod u+rwx {{}} \; 2>/dev/null
  find "$d" -mindepth 1 -maxdepth 1 -exec rm -rf {{}} + 2>/dev/null
  [ -z "$(find "$d" -mindepth 1 -print -quit 2>/dev/null)" ] || {{ echo "$d not empty"; exit 4; }}
done
if command -v ipcrm >/dev/null 2>&1; then ipcrm --all 2>/dev/null || :; fi
if [ -d {PRISTINE} ]; then
  cp -a {PRISTINE}/. /testbed/ || {{ echo "testbed copy failed"; exit 5; }}
  env HOME=/nonexistent XDG_CONFIG_HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 \
    git -C /testbed {GIT_SAFE} update-index -q --refresh >/dev/null 2>&1 || :
fi
{OOM_KILLS}
echo "{RESET_OK}$oom"
"""

# The reset, then the run's launcher in the same process (`$1`: the launcher, `$2`: the wrapper).
ARM = RESET + '[ "$oom" = 0 ] || exit 6\nexec /bin/sh -c "$1" hackaudit "$2"\n'


@dataclass
class _Ready:
    """A reset warm container; when the run's launcher could be started ahead, its wrapper is
    already running in it (`exec_id`), blocked reading the run's input from `stream`."""

    container_id: str
    exec_id: str | None = None
    stream: Any = None

    def disarm(self) -> None:
        """Close the waiting wrapper's input (it then exits: no nonce) and forget it."""
        if self.stream is not None:
            with contextlib.suppress(OSError):
                getattr(self.stream, "_sock", self.stream).close()
        self.exec_id, self.stream = None, None


@dataclass
class _Warm:
    """The warm containers of one image: the idle (reset) ones, and how many exist at all.

    A `None` in `idle` tells a waiting run that a container was lost and it may make one."""

    idle: asyncio.Queue[_Ready | None] = field(default_factory=asyncio.Queue)
    alive: int = 0
    chores: set[asyncio.Task[None]] = field(default_factory=set)


class WarmDockerBackend(DockerBackend):
    """The `ContainerBackend` on a Docker engine with warm containers (see the module docstring).

    Up to `warm_per_run` containers per concurrent run are kept per image (with two, a run need
    not wait for the reset of the container the previous run used); the `pooled_images` most
    recently used images keep theirs. `counts` says how many containers were created, how many
    runs reused one, and how many containers were removed instead of reset."""

    def __init__(self, settings: SandboxSettings, client: Any | None = None) -> None:
        super().__init__(settings, client)
        self._warm: OrderedDict[str, _Warm] = OrderedDict()
        self._closing = False
        self.counts = {"created": 0, "reused": 0, "discarded": 0}

    @property
    def _per_image(self) -> int:
        return self._settings.warm_per_run * self._settings.max_concurrent_runs

    async def close(self) -> None:
        self._closing = True
        entries, self._warm = list(self._warm.values()), OrderedDict()
        await asyncio.gather(*(self._drop(entry) for entry in entries), return_exceptions=True)
        await super().close()

    async def _drop(self, entry: _Warm) -> None:
        while entry.chores:
            await asyncio.gather(*list(entry.chores), return_exceptions=True)
        held = []
        while not entry.idle.empty():
            ready = entry.idle.get_nowait()
            if ready is not None:
                ready.disarm()
                held.append(ready.container_id)
        await asyncio.gather(
            *(asyncio.to_thread(self._remove, c) for c in held), return_exceptions=True
        )

    # --- runs --------------------------------------------------------------------------------

    async def execute(self, plan: RunPlan, demotion: Demotion | None = None) -> Execution:
        async with self._slots:
            warm = await self._warm_image(plan.image)
            entry = await self._entry(warm)
            ready = await self._acquire(warm, entry)
            reusable = False
            try:
                loop = asyncio.get_running_loop()
                execution, reusable = await loop.run_in_executor(
                    self._readers, self._run_exec, ready, plan, demotion
                )
                return execution
            finally:
                ready.disarm()
                self._spawn(entry, self._release(entry, ready.container_id, reusable))

    async def _entry(self, warm: str) -> _Warm:
        entry = self._warm.get(warm)
        if entry is None:
            entry = self._warm[warm] = _Warm()
            while len(self._warm) > self._settings.pooled_images:
                _, oldest = self._warm.popitem(last=False)
                self._spawn(oldest, self._drop(oldest))
        self._warm.move_to_end(warm)
        return entry

    async def _acquire(self, warm: str, entry: _Warm) -> _Ready:
        """An idle reset container, a new one while fewer than `_per_image` exist, else the next
        one whose reset completes."""
        while True:
            if entry.idle.empty() and entry.alive < self._per_image:
                entry.alive += 1
                try:
                    created = await asyncio.to_thread(self._create_warm, warm)
                except BaseException:
                    entry.alive -= 1
                    raise
                self.counts["created"] += 1
                return created
            ready = await entry.idle.get()
            if ready is not None:
                self.counts["reused"] += 1
                return ready

    async def _release(self, entry: _Warm, container_id: str, reusable: bool) -> None:
        """Reset a used container and return it to the idle set, or remove it (also when its
        image's set was evicted meanwhile)."""
        current = any(e is entry for e in self._warm.values())
        if reusable and current and not self._closing:
            ready = await asyncio.to_thread(self._reset_and_arm, container_id)
            if ready is not None:
                entry.idle.put_nowait(ready)
                return
        await asyncio.to_thread(self._remove, container_id)
        self.counts["discarded"] += 1
        entry.alive -= 1
        entry.idle.put_nowait(None)

    @staticmethod
    def _spawn(entry: _Warm, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        entry.chores.add(task)
        task.add_done_callback(entry.chores.discard)

    def _reset_and_arm(self, container_id: str) -> _Ready | None:
        """Reset a container and start the next run's launcher in it, in one `docker exec`: the
        reset reports `RESET_OK<oom kills>`, then (only when it succeeded and saw no OOM kill)
        becomes the launcher, whose wrapper waits for the run's input. None: remove it."""
        argv = [SHELL, "-c", ARM, "hackaudit-reset", WARM_LAUNCHER, WRAPPER]
        try:
            exec_id, stream = self._start_launcher(container_id, argv, RUN_USER)
        except (DockerException, requests.RequestException) as exc:
            log.warning("sandbox.warm.reset_failed", container=container_id[:12], error=str(exc))
            return None
        ready = _Ready(container_id, exec_id, stream)
        report = self._reset_report(getattr(stream, "_sock", stream))
        if report != f"{RESET_OK}0":
            log.warning("sandbox.warm.reset_refused", container=container_id[:12], last=report)
            ready.disarm()
            return None
        return ready

    def _reset_report(self, raw: Any) -> str:
        """The reset's last line, read from its stream up to `RESET_OK…` (or to its end)."""
        decoder = FrameDecoder()
        seen = b""
        deadline = time.monotonic() + self._settings.setup_timeout_s
        try:
            while RESET_OK.encode() not in seen or not seen.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    return "reset timed out"
                raw.settimeout(left)
                data = raw.recv(65536)
                if not data:
                    break
                seen = (seen + b"".join(decoder.feed(data)))[-4096:]
        except OSError as exc:
            return f"reset stream lost: {exc}"
        return seen.decode(errors="replace").strip().rsplit("\n", 1)[-1]

    def _start_launcher(self, container_id: str, argv: list[str], user: str) -> tuple[str, Any]:
        """`argv` started by `docker exec` as `user` with its input open: (exec id, stream)."""
        if argv == list(launcher_argv()):
            argv[2] = WARM_LAUNCHER
        api = self.client.api
        exec_id = str(api.exec_create(container_id, argv, stdin=True, user=user, workdir="/")["Id"])
        return exec_id, api.exec_start(exec_id, socket=True)

    def _run_exec(
        self, ready: _Ready, plan: RunPlan, demotion: Demotion | None
    ) -> tuple[Execution, bool]:
        """One run by `docker exec` in a warm container, in the wrapper started ahead when it is
        the plan's; (what was observed, reusable)."""
        container_id = ready.container_id
        started = time.monotonic()
        armed = plan.argv == launcher_argv() and plan.user == RUN_USER
        if armed and ready.exec_id is not None:
            exec_id, stream = ready.exec_id, ready.stream
            ready.exec_id, ready.stream = None, None
        else:
            ready.disarm()
            try:
                exec_id, stream = self._start_launcher(container_id, list(plan.argv), plan.user)
            except (DockerException, requests.RequestException) as exc:
                raise ContainerFailed(f"cannot start the run in its container: {exc}") from exc
        weight = self._weigh(container_id, plan, demotion)
        try:
            capture, timed_out = self._exchange(stream, container_id, plan, started, demotion)
        finally:
            lowered = weight.stop()
        exit_code = 0 if capture.finished else self._exec_exit(exec_id)
        execution = Execution(
            output=capture.result(),
            exit_code=exit_code,
            timed_out=timed_out,
            container_oom=False,
            wall_s=time.monotonic() - started,
            background_s=background_s(demotion, started),
        )
        reusable = capture.finished and timed_out is None
        if reusable and lowered:
            # The next run starts at the normal weight, or in another container.
            reusable = self._set_shares(container_id, self._weight.normal_shares)
        return execution, reusable

    def _exec_exit(self, exec_id: str) -> int | None:
        """The exit code of a run that ended without its end marker (waits for it briefly)."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                state = self.client.api.exec_inspect(exec_id)
            except (DockerException, requests.RequestException):
                return None
            if not state.get("Running"):
                code = state.get("ExitCode")
                return int(code) if code is not None else None
            time.sleep(0.05)
        return None

    # --- containers and images ---------------------------------------------------------------

    def _create_warm(self, warm: str) -> _Ready:
        """A started warm container: read-only root, tmpfs writable places, an idle keeper."""
        options = confined_options(
            container_options(warm, self._limits, self._owner, ("sleep", "infinity"), KEEPER_USER),
            self._limits.memory_mb,
            self._max_write_mb,
            self._testbed_kb.get(warm),
        )
        options.update(stdin_open=False)
        options["labels"] = {**options.get("labels", {}), f"{LABEL}.warm": "1"}
        container_id = self._create(options)
        ready = self._reset_and_arm(container_id)
        if ready is None:
            self._remove(container_id)
            raise ContainerFailed(f"a new warm container of {warm!r} could not be prepared")
        return ready

    async def _warm_image(self, image: str) -> str:
        """The derived image (the same as in container mode: `writable_places.recipe`)."""
        return await self._runnable_image(image)

    def _remove(self, container_id: str) -> None:
        with contextlib.suppress(NotFound):
            super()._remove(container_id)
