"""The ports the run logic needs: where runs execute, where logs go, where timings are kept,
where a task's image comes from, and where coverage runs get coverage.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.execution import Execution, RunPlan
from hackaudit.shared.contracts import Task


class ContainerBackend(Protocol):
    """Runs a plan in a fresh container and reports what it observed.

    Raises `BackendUnavailable` when the engine cannot be reached and `ContainerFailed` when one
    run's container fails; every other outcome (timeouts, output floods, killed processes) is
    part of the returned `Execution`.
    """

    async def start(self) -> None:
        """Connect, and remove containers that earlier sandbox processes left behind."""

    async def execute(self, plan: RunPlan, demotion: Demotion | None = None) -> Execution:
        """Run `plan`; while `demotion` says the run is in the background (it gave its slot
        back), it goes on at the low CPU weight, and that time does not count against its
        deadlines (`domain.deadlines`)."""
        ...

    async def close(self) -> None:
        """Remove every container this backend still holds."""


class ArtifactStore(Protocol):
    """Keeps full run logs; returns where each one went."""

    def write(self, key: str, text: str) -> str: ...


class TimingStore(Protocol):
    """Keeps the test durations of reference runs (gold, empty patch) per task."""

    def record(self, instance_id: str, kind: str, duration_s: float) -> None: ...

    def duration(self, instance_id: str, kind: str) -> float | None:
        """The duration to size timeouts from (the longest recorded), or None."""


class ImageSource(Protocol):
    """Gives a task's environment image, building it when it is missing (blocking; may take
    minutes). `EnvironmentBuilder` from `hackaudit.sandbox.envbuild` is the real one.

    Raises `EnvBuildError` (or another exception) with the reason when the image cannot be had.
    """

    def image_for(self, task: Task) -> tuple[str, object]:
        """The image's tag, and how it was had (built, cached, prebuilt)."""
        ...


class CoverageKit(Protocol):
    """coverage.py's wheels for coverage runs, as the run's stage files (`coverage-3.X.whl`,
    `coverage-any.whl`; see `domain.coverage_run`). Blocking (may download them once).

    Raises `CoverageKitMissing` with the reason when there is none.
    """

    def files(self) -> Mapping[str, bytes]: ...
