"""The sandbox's settings, read once at start-up from `HACKAUDIT_SANDBOX_*` variables."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from hackaudit.sandbox.domain.cpu_weight import LEAST_SHARES, NORMAL_SHARES, CpuWeight
from hackaudit.sandbox.domain.fair_share import FairShare
from hackaudit.sandbox.domain.grading import GradingPolicy
from hackaudit.sandbox.domain.run_spec import RunOptions
from hackaudit.sandbox.domain.timeouts import TimeoutPolicy
from hackaudit.shared.settings import FileSettings


def _coverage_wheelhouse() -> Path:
    return Path.home() / ".cache" / "hackaudit" / "wheelhouse" / "coverage"


class Isolation(StrEnum):
    """How runs are kept apart: a fresh container per run (`container`), or warm containers
    reused by `docker exec` with a read-only root and their writable places wiped between runs
    (`warm`, see `adapters.warm_backend`)."""

    CONTAINER = "container"
    WARM = "warm"


class Scheduling(StrEnum):
    """Which run gets a free run slot: `fair` (per-task shares, shortest expected run first, a
    slot kept for short runs: `domain.fair_share`), or `fifo` (the order requests arrive in)."""

    FAIR = "fair"
    FIFO = "fifo"


class SandboxSettings(FileSettings):
    """Limits, timeouts, pool and artifact location of the sandbox."""

    config_section = "sandbox"
    model_config = SettingsConfigDict(env_prefix="HACKAUDIT_SANDBOX_", extra="ignore")

    # Docker engine (None: DOCKER_HOST or the local socket).
    docker_url: str | None = None

    # Per-container limits.
    memory_mb: int = Field(default=2048, ge=64)
    pids_limit: int = Field(default=512, ge=16)
    cpus: float = Field(default=1.0, gt=0)
    max_file_mb: int = Field(default=1024, ge=1)
    # What a run may write in all, over its writable places (size-limited tmpfs mounts, each a
    # share of it; `/testbed` gets the repository's own size on top): a write past a place's
    # share fails inside the run with ENOSPC. tmpfs pages count against the container's memory
    # limit, which is raised by this much (and by the repository's size), so `memory_mb` stays
    # the processes' own even with every place full (see `adapters.writable_places`).
    max_write_mb: int = Field(default=1024, ge=8)

    # Timeouts: run = clamp(factor x gold test duration, floor, cap); `default_timeout_s` when no
    # gold timing is known (the cap when unset); `setup_timeout_s` bounds preparing and reporting.
    timeout_factor: float = Field(default=3.0, gt=0)
    timeout_floor_s: float = Field(default=30.0, gt=0)
    timeout_cap_s: float = Field(default=1800.0, gt=0)
    default_timeout_s: float | None = Field(default=None, gt=0)
    setup_timeout_s: float = Field(default=120.0, gt=0)

    # Output: the runner's output kept per run (head + tail), the trailer, the tail in results.
    log_head_bytes: int = Field(default=512 * 1024, ge=1024)
    log_tail_bytes: int = Field(default=1536 * 1024, ge=1024)
    trailer_bytes: int = Field(default=16 << 20, ge=1024)
    log_tail_chars: int = Field(default=4000, ge=0)
    max_patch_bytes: int = Field(default=5 << 20, ge=1024)

    # Grading and protocol.
    grading_policy: GradingPolicy = GradingPolicy.SWEBENCH
    pytest_junit: bool = True
    strict_test_patch: bool = False
    gold_gate_repeats: int = Field(default=3, ge=1)

    # Isolation between runs (see `Isolation`).
    isolation: Isolation = Isolation.CONTAINER
    # Warm containers kept per concurrent run and image (2: a run need not wait for the reset
    # of the container the previous run used).
    warm_per_run: int = Field(default=2, ge=1)

    # Pool: idle started containers kept per image, images pooled, runs at once.
    pool_size: int = Field(default=2, ge=0)
    pooled_images: int = Field(default=8, ge=1)
    max_concurrent_runs: int = Field(default=2, ge=1)
    sweep_on_start: bool = True
    # Scheduling of runs across tasks (see `Scheduling`); with `fair`, run requests held beyond
    # the slots so the policy has several tasks' runs to choose from, and its thresholds: a run is
    # long when expected to take more than `long_run_factor` x the quickest active task's runs
    # and more than `long_run_floor_s`; long runs wait while a short task is active, and take
    # all but one slot once they waited `long_run_patience_s`.
    scheduling: Scheduling = Scheduling.FAIR
    waiting_requests: int = Field(default=6, ge=0)
    long_run_factor: float = Field(default=5.0, gt=1)
    long_run_floor_s: float = Field(default=10.0, ge=0)
    long_run_patience_s: float = Field(default=120.0, ge=0)
    # A long run in a slot while a short run waits gives its slot back and goes on in the
    # background with its container's CPU weight lowered to `long_run_cpu_shares` (of Docker's
    # 1024): at most `background_runs` at once (default: `max_concurrent_runs`; 0: a run keeps
    # its slot to its end; see `domain.fair_share`). It returns to a free slot and its weight
    # once no run waits; its time in the background does not count against its timeout (at
    # most 3x the timeout in all, `domain.deadlines`). A run going on longer than
    # `long_run_cpu_after_s` is lowered too (default: never under `fair` with a background,
    # else `long_run_floor_s`); alone a lowered run still gets all the CPU (see
    # `domain.cpu_weight`). `lower_long_runs` off: every run keeps the default weight and its
    # slot.
    lower_long_runs: bool = True
    background_runs: int | None = Field(default=None, ge=0)
    long_run_cpu_after_s: float | None = Field(default=None, ge=0)
    long_run_cpu_shares: int = Field(default=LEAST_SHARES, ge=LEAST_SHARES, le=NORMAL_SHARES)
    stale_container_s: float = Field(default=6 * 3600.0, gt=0)

    # Task images: build a task's image before its first run when it has an `environment` or no
    # `image` (off: such a task's runs are infra errors); a failed build is retried after this.
    build_images: bool = True
    image_retry_s: float = Field(default=300.0, ge=0)

    # The state folder (the bus's, HACKAUDIT_STATE_DIR: the service is built with it), and where
    # each run's artifacts are kept: `<state dir>/artifacts/sandbox` unless set.
    state_dir: Path = Field(default=Path(".hackaudit"), validation_alias="HACKAUDIT_STATE_DIR")
    artifacts_dir: Path = Field(
        default_factory=lambda given: Path(given["state_dir"]) / "artifacts" / "sandbox"
    )
    # Where coverage runs' coverage.py wheels are kept (downloaded by pip when missing), and the
    # CPython versions to keep a compiled wheel for (see `adapters.coverage_kit`).
    coverage_wheelhouse: Path = Field(default_factory=_coverage_wheelhouse)
    coverage_pythons: tuple[str, ...] = ("3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12")

    def run_options(self) -> RunOptions:
        return RunOptions(
            grading=self.grading_policy,
            junit=self.pytest_junit,
            strict_test_patch=self.strict_test_patch,
            setup_timeout_s=self.setup_timeout_s,
            log_tail_chars=self.log_tail_chars,
            max_patch_bytes=self.max_patch_bytes,
        )

    def requests_held(self) -> int:
        """Run requests handled at once: the slots, plus under `fair` the background (a
        request whose run moved there is still held) and the waiting ones."""
        if self.scheduling is Scheduling.FIFO:
            return self.max_concurrent_runs
        return self.runs_at_once() + self.waiting_requests

    def background(self) -> int:
        """Runs moved to the background at most (none under `fifo` or unlowered weights)."""
        lowers = self.lower_long_runs and self.long_run_cpu_shares < NORMAL_SHARES
        if self.scheduling is Scheduling.FIFO or not lowers:
            return 0
        chosen = self.background_runs
        return self.max_concurrent_runs if chosen is None else chosen

    def runs_at_once(self) -> int:
        """Containers running at most: the slots and the background."""
        return self.max_concurrent_runs + self.background()

    def fair_share(self) -> FairShare | None:
        """The slot policy, None under `fifo`."""
        if self.scheduling is Scheduling.FIFO:
            return None
        return FairShare(
            slots=self.max_concurrent_runs,
            long_factor=self.long_run_factor,
            long_floor_s=self.long_run_floor_s,
            patience_s=self.long_run_patience_s,
            background=self.background(),
        )

    def cpu_weight(self) -> CpuWeight:
        """When and how far a long run's CPU weight drops (never, with `lower_long_runs` off;
        on demotion only, by default, when runs can move to the background)."""
        if not self.lower_long_runs:
            return CpuWeight(after_s=None)
        after = self.long_run_cpu_after_s
        if after is None and not self.background():
            after = self.long_run_floor_s
        return CpuWeight(after_s=after, low_shares=self.long_run_cpu_shares)

    def timeout_policy(self) -> TimeoutPolicy:
        return TimeoutPolicy(
            factor=self.timeout_factor,
            floor_s=self.timeout_floor_s,
            cap_s=self.timeout_cap_s,
            default_s=self.default_timeout_s,
        )
