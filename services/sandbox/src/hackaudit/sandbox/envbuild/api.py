"""The builder's entry points, wired to the real Docker engine, pip and base image script.

`build_images` blocks; a caller with an event loop runs it in a thread. Tests pass their own
`EnvironmentBuilder` made of fakes.
"""

from __future__ import annotations

from collections.abc import Sequence

from hackaudit.sandbox.envbuild.base_image import base_image_source
from hackaudit.sandbox.envbuild.builder import BuildOutcome, EnvironmentBuilder, ProgressCallback
from hackaudit.sandbox.envbuild.docker_engine import DockerImageEngine
from hackaudit.sandbox.envbuild.pip_wheelhouse import PipWheelhouse
from hackaudit.sandbox.envbuild.settings import EnvBuildSettings
from hackaudit.shared.contracts.task import Task


def default_builder(settings: EnvBuildSettings | None = None) -> EnvironmentBuilder:
    settings = settings or EnvBuildSettings()
    return EnvironmentBuilder(
        engine=DockerImageEngine(timeout_s=settings.docker_timeout_s),
        base_images=base_image_source(settings),
        wheels=PipWheelhouse(settings),
        base_suite=settings.base_suite,
        repos=settings.repos,
        python_image=settings.python_image,
        python_image_glibc_minor=settings.python_image_glibc_minor,
    )


def build_images(
    tasks: Sequence[Task],
    *,
    progress: ProgressCallback | None = None,
    builder: EnvironmentBuilder | None = None,
) -> list[BuildOutcome]:
    """One outcome per task (built, cached, prebuilt or failed with its reason), in order."""
    return (builder or default_builder()).build(tasks, progress=progress)


def resolve_image(task: Task, *, builder: EnvironmentBuilder | None = None) -> Task:
    """The task with `image` set to its environment image; raises EnvBuildError if none."""
    tag, _ = (builder or default_builder()).image_for(task)
    return task if task.image == tag else task.model_copy(update={"image": tag})


def with_images(tasks: Sequence[Task], outcomes: Sequence[BuildOutcome]) -> list[Task]:
    """The tasks whose image could be had, each with `image` set (outcomes from build_images)."""
    by_id = {o.instance_id: o.image for o in outcomes if o.image}
    return [
        t
        if t.image == by_id[t.instance_id]
        else t.model_copy(update={"image": by_id[t.instance_id]})
        for t in tasks
        if t.instance_id in by_id
    ]
