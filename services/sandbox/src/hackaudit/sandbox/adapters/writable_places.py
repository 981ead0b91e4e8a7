"""Where a run may write, and how much: one description for every isolation mode.

Both backends run containers with a **read-only root file system**; the only places a run can
write are size-limited tmpfs mounts, the same in both modes:

- `/testbed`, holding a copy of the image's pristine repository (`PRISTINE`), with room for the
  repository's own size plus the write cap;
- `/tmp` and `/var/tmp`, with room for the write cap each (the run's private directory, its
  HOME when the image gives uid 1000 no writable one, lives in `/tmp`);
- `/dev/shm` (`SHM_MB`) and `/dev/mqueue` (bounded by the kernel's per-user message queue
  limit).

A write past a place's room fails inside the run with ENOSPC (a single file past
`max_file_mb` with EFBIG), which the task's tests see as any full disk: the run completes and
is graded. Nothing a run writes reaches the host's disk: tmpfs pages live in memory and are
charged to the container's memory cgroup, so the container's memory limit is raised by what its
writable places may hold (`memory_limit_mb`) — a run that fills one place to its cap still has
`memory_mb` for its processes, and a run that fills several at once is bounded by that limit
(the kernel's OOM killer then ends it: status `oom`, never resolved, never an infrastructure
fault).

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


def writable_places(max_write_mb: int, testbed_kb: int | None) -> tuple[WritablePlace, ...]:
    """The tmpfs mounts of a sandbox container (see the module docstring); `/testbed` only when
    the image has a repository (`testbed_kb` is its size)."""
    scratch = (
        WritablePlace("/tmp", max_write_mb, "mode=1777"),
        WritablePlace("/var/tmp", max_write_mb, "mode=1777"),
    )
    if testbed_kb is None:
        return scratch
    owner = f"uid={RUNNER_UID},gid={RUNNER_UID},mode=0755"
    return (WritablePlace("/testbed", pristine_mb(testbed_kb) + max_write_mb, owner), *scratch)


def memory_limit_mb(memory_mb: int, max_write_mb: int, testbed_kb: int | None) -> int:
    """The container's memory limit: the processes' `memory_mb`, plus the pristine repository's
    copy and one place filled to the write cap (tmpfs pages count against the limit)."""
    return memory_mb + pristine_mb(testbed_kb) + max_write_mb


def confined_options(
    options: dict[str, Any], memory_mb: int, max_write_mb: int, testbed_kb: int | None
) -> dict[str, Any]:
    """`options` (from `container_options`) with a read-only root, the tmpfs writable places
    and the memory limit that holds them."""
    memory = f"{memory_limit_mb(memory_mb, max_write_mb, testbed_kb)}m"
    return {
        **options,
        "read_only": True,
        "tmpfs": {place.path: place.tmpfs() for place in writable_places(max_write_mb, testbed_kb)},
        "shm_size": f"{min(SHM_MB, max_write_mb)}m",
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
