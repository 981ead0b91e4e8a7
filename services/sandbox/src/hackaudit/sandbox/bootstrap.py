"""The composition root: a `Runner` wired to real adapters, or to the fakes a test passes in."""

from __future__ import annotations

from hackaudit.sandbox.adapters.artifact_store import FileArtifactStore
from hackaudit.sandbox.adapters.ports import ArtifactStore, ContainerBackend, TimingStore
from hackaudit.sandbox.adapters.timing_store import MemoryTimingStore
from hackaudit.sandbox.runner import Runner
from hackaudit.sandbox.settings import SandboxSettings


def bootstrap(
    settings: SandboxSettings | None = None,
    *,
    backend: ContainerBackend | None = None,
    artifacts: ArtifactStore | None = None,
    timings: TimingStore | None = None,
) -> Runner:
    """A runner from settings; the Docker backend and file artifacts unless others are given.

    Nothing connects here: `await runner.start()` reaches the engine and sweeps leftovers, and
    `await runner.close()` removes the containers still held.
    """
    settings = settings or SandboxSettings()
    if backend is None:
        from hackaudit.sandbox.adapters.docker_backend import DockerBackend

        backend = DockerBackend(settings)
    return Runner(
        backend=backend,
        artifacts=artifacts or FileArtifactStore(settings.artifacts_dir),
        timings=timings or MemoryTimingStore(),
        options=settings.run_options(),
        timeouts=settings.timeout_policy(),
        gold_gate_repeats=settings.gold_gate_repeats,
    )
