"""The composition root: a `Runner` wired to real adapters, or to the fakes a test passes in."""

from __future__ import annotations

from hackaudit.sandbox.adapters.artifact_store import FileArtifactStore
from hackaudit.sandbox.adapters.coverage_kit import WheelhouseCoverageKit
from hackaudit.sandbox.adapters.ports import (
    ArtifactStore,
    ContainerBackend,
    CoverageKit,
    ImageSource,
    TimingStore,
)
from hackaudit.sandbox.adapters.timing_store import MemoryTimingStore
from hackaudit.sandbox.run_slots import RunSlots
from hackaudit.sandbox.runner import Runner
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.sandbox.task_images import TaskImages


def bootstrap(
    settings: SandboxSettings | None = None,
    *,
    backend: ContainerBackend | None = None,
    artifacts: ArtifactStore | None = None,
    timings: TimingStore | None = None,
    images: ImageSource | None = None,
    coverage_kit: CoverageKit | None = None,
) -> Runner:
    """A runner from settings; the Docker backend and file artifacts unless others are given.

    Nothing connects here: `await runner.start()` reaches the engine and sweeps leftovers, and
    `await runner.close()` removes the containers still held. Task images are built by the
    environment builder (made on first need) unless `images` is given, or not at all when
    `settings.build_images` is off.
    """
    settings = settings or SandboxSettings()
    if backend is None:
        backend = docker_backend(settings)
    return Runner(
        backend=backend,
        artifacts=artifacts or FileArtifactStore(settings.artifacts_dir),
        timings=timings or MemoryTimingStore(),
        options=settings.run_options(),
        timeouts=settings.timeout_policy(),
        gold_gate_repeats=settings.gold_gate_repeats,
        images=_task_images(settings, images),
        coverage_kit=coverage_kit
        or WheelhouseCoverageKit(settings.coverage_wheelhouse, settings.coverage_pythons),
        slots=_run_slots(settings),
    )


def _run_slots(settings: SandboxSettings) -> RunSlots | None:
    policy = settings.fair_share()
    return RunSlots(policy) if policy is not None else None


def docker_backend(settings: SandboxSettings) -> ContainerBackend:
    """The Docker backend the settings' `isolation` names."""
    from hackaudit.sandbox.adapters.docker_backend import DockerBackend
    from hackaudit.sandbox.adapters.warm_backend import WarmDockerBackend
    from hackaudit.sandbox.settings import Isolation

    if settings.isolation is Isolation.WARM:
        return WarmDockerBackend(settings)
    return DockerBackend(settings)


def _task_images(settings: SandboxSettings, source: ImageSource | None) -> TaskImages | None:
    if source is not None:
        return TaskImages(lambda: source, retry_after_s=settings.image_retry_s)
    if not settings.build_images:
        return None
    return TaskImages(_environment_builder, retry_after_s=settings.image_retry_s)


def _environment_builder() -> ImageSource:
    from hackaudit.sandbox.envbuild import EnvBuildSettings, default_builder

    return default_builder(EnvBuildSettings())
