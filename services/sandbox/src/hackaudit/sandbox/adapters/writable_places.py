"""Where a run may write, and how much: one description for every isolation mode.

Both backends run containers with a **read-only root file system**; the only places a run can
write are size-limited tmpfs mounts, the same in both modes:

- `/testbed`, holding a copy of the image's pristine repository (`PRISTINE`), with room for the
  repository's own size plus its share of the write cap;
- `/tmp` and `/var/tmp` (the run's private directory, its HOME when the image gives uid 1000 no
  writable one, lives in `/tmp`);
- `/dev/shm` and `/dev/mqueue` (bounded by the kernel's per-user message queue limit).

The write cap (`max_write_mb`) is what a run may write in all: each place gets a share of it
(`write_shares`: `/var/tmp` and `/dev/shm` a sixteenth each, `/dev/shm` at most `SHM_MB`,
`/testbed` and `/tmp` half of the rest each), so the places hold at most the cap beyond the
repository's copy, however many a run fills at once. A write past a place's share fails
inside the run with ENOSPC (a single file past `max_file_mb` with EFBIG), which the task's
tests see as any full disk: the run completes and is graded. Nothing a run writes reaches the
host's disk: tmpfs pages live in memory and are charged to the container's memory cgroup, so
the container's memory limit is `memory_mb` plus everything the places may hold
(`memory_limit_mb`: the repository's copy, the cap, the message queues' limit) — a run that
fills every place still has `memory_mb` for its processes. (The kernel's own memory for the
places' inodes and directory entries is charged too but is not part of a place's size: a run
that makes a very great many small files spends it from `memory_mb`.)

The derived image (`recipe`, built once per task image and shared by both modes) re-owns
`/testbed` for uid 1000, keeps a read-only pristine copy of it, and an execute-only copy of bash
the run's wrapper runs from (so it is non-dumpable); the repository's size is kept as a label
(`TESTBED_KB_LABEL`) so that `/testbed`'s room can be sized without opening the image again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hackaudit.sandbox.domain.protocol import (
    FILL_FAILED,
    GIT_SAFE,
    PRISTINE_REPOSITORY,
    WRITABLE_PLACES,
    launcher_argv,
)

KIT = "/opt/hackaudit"
PRISTINE = PRISTINE_REPOSITORY
SHELL = f"{KIT}/sh"
SHM_MB = 64
RUNNER_UID = 1000
TESTBED_KB_LABEL = "hackaudit.sandbox.testbed-kb"
# tmpfs charges whole pages per file; du's block count of the image's copy plus this margin
# covers the copy's own footprint (directories, small files).
TESTBED_MARGIN_MB = 16

_SCRATCH = "rw,exec,nosuid,nodev"
# Every place a run can write, for the warm reset to empty: the tmpfs mounts and the engine's own.
EVERY_PLACE = WRITABLE_PLACES

# The launcher both modes start: the wrapper runs from the image's execute-only bash in a private
# directory under /tmp (`protocol.LAUNCHER` copies bash per run for images that are not derived).
IMAGE_LAUNCHER = (
    f'd=$(mktemp -d /tmp/hackaudit.XXXXXXXX) && exec {SHELL} -c "$1" hackaudit-wrapper "$d"'
)

# Fills `/testbed`'s tmpfs from the pristine copy and refreshes git's index of the copy (its
# files have new inode numbers). Exits `FILL_FAILED` when the copy fails: the run then finds its
# container gone, an infrastructure fault.
POPULATE = (
    f"if [ -d {PRISTINE} ]; then cp -a {PRISTINE}/. /testbed/ || exit {FILL_FAILED}; "
    f"git -C /testbed {GIT_SAFE} update-index -q --refresh >/dev/null 2>&1 || :; fi; "
)


@dataclass(frozen=True)
class WritablePlace:
    """One tmpfs mount: its path, size and the tmpfs options of its owner and mode."""

    path: str
    size_mb: int
    owner: str

    def tmpfs(self) -> str:
        return f"{_SCRATCH},size={self.size_mb}m,{self.owner}"


def pristine_mb(testbed_kb: int | None) -> int:
    """The room the pristine repository itself takes in `/testbed`'s tmpfs."""
    return (max(testbed_kb or 0, 0) >> 10) + TESTBED_MARGIN_MB


# The kernel's per-user message queue limit (RLIMIT_MSGQUEUE, 800 KiB unless raised by the
# engine's ulimits): what `/dev/mqueue` may hold, charged to the container's memory.
MQUEUE_MB = 1


def write_shares(max_write_mb: int, testbed: bool = True) -> dict[str, int]:
    """Each writable place's share of the write cap, in MiB: together exactly `max_write_mb`
    (at least 1 each; `max_write_mb` is at least 8). Without a repository, `/tmp` takes
    `/testbed`'s share."""
    small = max(1, max_write_mb // 16)
    shm = min(SHM_MB, small)
    rest = max_write_mb - shm - small
    repository = rest // 2 if testbed else 0
    shares = {"/tmp": rest - repository, "/var/tmp": small, "/dev/shm": shm}
    return {"/testbed": repository, **shares} if testbed else shares


def writable_places(max_write_mb: int, testbed_kb: int | None) -> tuple[WritablePlace, ...]:
    """The tmpfs mounts of a sandbox container (see the module docstring); `/testbed` only when
    the image has a repository (`testbed_kb` is its size). `/dev/shm` is the engine's own mount,
    sized by `shm_size` (`confined_options`)."""
    shares = write_shares(max_write_mb, testbed_kb is not None)
    scratch = (
        WritablePlace("/tmp", shares["/tmp"], "mode=1777"),
        WritablePlace("/var/tmp", shares["/var/tmp"], "mode=1777"),
    )
    if testbed_kb is None:
        return scratch
    owner = f"uid={RUNNER_UID},gid={RUNNER_UID},mode=0755"
    room = pristine_mb(testbed_kb) + shares["/testbed"]
    return (WritablePlace("/testbed", room, owner), *scratch)


def memory_limit_mb(memory_mb: int, max_write_mb: int, testbed_kb: int | None) -> int:
    """The container's memory limit: the processes' `memory_mb`, plus all the writable places
    may hold — the pristine repository's copy, the write cap (the sum of the places' shares)
    and the message queues' limit — since tmpfs pages count against the limit."""
    return memory_mb + pristine_mb(testbed_kb) + max_write_mb + MQUEUE_MB


def confined_options(
    options: dict[str, Any], memory_mb: int, max_write_mb: int, testbed_kb: int | None
) -> dict[str, Any]:
    """`options` (from `container_options`) with a read-only root, the tmpfs writable places
    and the memory limit that holds them."""
    memory = f"{memory_limit_mb(memory_mb, max_write_mb, testbed_kb)}m"
    shm = write_shares(max_write_mb, testbed_kb is not None)["/dev/shm"]
    return {
        **options,
        "read_only": True,
        "tmpfs": {place.path: place.tmpfs() for place in writable_places(max_write_mb, testbed_kb)},
        "shm_size": f"{shm}m",
        "mem_limit": memory,
        "memswap_limit": memory,
    }


def recipe(image: str, image_id: str, testbed_kb: int | None) -> str:
    """The Dockerfile of the derived image of `image` (see the module docstring): one layer."""
    copy = (
        f"cp -a /testbed {PRISTINE} && chown -R {RUNNER_UID}:{RUNNER_UID} {PRISTINE} && "
        if testbed_kb is not None
        else ""
    )
    size = "" if testbed_kb is None else str(testbed_kb)
    return (
        f"FROM {image}\nUSER root\n"
        f"RUN mkdir -p {KIT} && {copy}cp /bin/bash {SHELL} && chmod 0111 {SHELL}\n"
        f"USER {RUNNER_UID}:{RUNNER_UID}\n"
        f'LABEL hackaudit.sandbox.runnable="1" hackaudit.sandbox.derived-from="{image_id}" '
        f'{TESTBED_KB_LABEL}="{size}"\n'
    )


def image_argv(argv: tuple[str, ...], populate: bool) -> tuple[str, ...]:
    """A plan's argv for a derived image: the protocol's launcher becomes `IMAGE_LAUNCHER`
    (preceded by `POPULATE` when the container's `/testbed` must be filled first); any other
    argv is kept."""
    if argv != launcher_argv():
        return argv
    return (*argv[:2], (POPULATE if populate else "") + IMAGE_LAUNCHER, *argv[3:])


def recorded_testbed_kb(labels: dict[str, str] | None) -> int | None:
    """The pristine repository's size recorded on a derived image (None: it has none)."""
    value = (labels or {}).get(TESTBED_KB_LABEL, "")
    return int(value) if value.isdigit() else None
