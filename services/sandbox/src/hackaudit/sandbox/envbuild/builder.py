"""From tasks to environment images: group tasks by what their image is made of, build each once.

Per group of tasks sharing repository, base commit, source and install spec:
1. the base image's tag and id, and the exact wheels for the pip packages (offline when cached);
2. the tag, a hash of those inputs; when an image with that tag exists, it is used as it is;
3. otherwise the source is committed on the host and checked against `base_commit`, packed with
   the Dockerfile and wheels, and built without network.

A failure is that group's outcome, never the others'. Tasks that carry an `image` and no
`environment` are checked to exist locally (nothing can be pulled) and otherwise left alone.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from hackaudit.sandbox.envbuild.context import build_context
from hackaudit.sandbox.envbuild.errors import (
    BaseImageUnavailable,
    EnvBuildError,
    ImageMissing,
    TaskNotBuildable,
)
from hackaudit.sandbox.envbuild.ports import BaseImageSource, ImageEngine, WheelSource
from hackaudit.sandbox.envbuild.recipe import (
    ImageInputs,
    WheelFile,
    dockerfile,
    image_labels,
    image_tag,
    with_build_tools,
)
from hackaudit.sandbox.envbuild.snapshot import checked_snapshot
from hackaudit.shared.contracts.task import Task
from hackaudit.shared.logs import get_logger

log = get_logger(__name__)


class BuildStatus(StrEnum):
    BUILT = "built"
    CACHED = "cached"
    PREBUILT = "prebuilt"
    FAILED = "failed"


@dataclass(frozen=True)
class BuildOutcome:
    """One task's image: `image` is its tag (None when failed), `reason` says why it failed."""

    instance_id: str
    status: BuildStatus
    image: str | None = None
    reason: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class BuildProgress:
    """Sent before each image is worked on (`outcome` None) and after each task's outcome."""

    done: int
    total: int
    instance_id: str
    message: str
    outcome: BuildOutcome | None = None


ProgressCallback = Callable[[BuildProgress], None]


@dataclass(frozen=True)
class _Spec:
    """What one image is made of, as far as the task says; tasks with equal specs share it."""

    repo: str
    base_commit: str
    source: Path
    pip_packages: tuple[str, ...]
    install: str | None


class EnvironmentBuilder:
    def __init__(
        self,
        *,
        engine: ImageEngine,
        base_images: BaseImageSource,
        wheels: WheelSource,
        base_suite: str = "bookworm",
        work_dir: Path | None = None,
    ) -> None:
        self._engine = engine
        self._base_images = base_images
        self._wheels = wheels
        self._base_suite = base_suite
        self._work_dir = work_dir
        self._base: tuple[str, str] | EnvBuildError | None = None

    def build(
        self, tasks: Sequence[Task], *, progress: ProgressCallback | None = None
    ) -> list[BuildOutcome]:
        """One outcome per task, in the order given."""
        notify = progress or (lambda _: None)
        outcomes: dict[int, BuildOutcome] = {}
        groups: dict[_Spec, list[int]] = {}
        total = len(tasks)
        for index, task in enumerate(tasks):
            try:
                spec = self._spec(task)
            except EnvBuildError as exc:
                outcomes[index] = BuildOutcome(
                    task.instance_id, BuildStatus.FAILED, reason=str(exc)
                )
                notify(_finished(len(outcomes), total, outcomes[index]))
                continue
            if spec is None:
                outcomes[index] = self._prebuilt(task)
                notify(_finished(len(outcomes), total, outcomes[index]))
            else:
                groups.setdefault(spec, []).append(index)
        for spec, indices in groups.items():
            ids = [tasks[i].instance_id for i in indices]
            notify(BuildProgress(len(outcomes), total, ids[0], f"image for {_names(ids)}"))
            for i, outcome in zip(indices, self._group_outcomes(spec, ids), strict=True):
                outcomes[i] = outcome
                notify(_finished(len(outcomes), total, outcome))
        return [outcomes[i] for i in range(total)]

    def image_for(self, task: Task) -> tuple[str, BuildStatus]:
        """The task's image tag and how it was had; raises EnvBuildError when it cannot be."""
        spec = self._spec(task)
        if spec is None:
            outcome = self._prebuilt(task)
            if outcome.image is None:
                raise ImageMissing(outcome.reason)
            return outcome.image, outcome.status
        return self._image(spec, [task.instance_id])

    def _spec(self, task: Task) -> _Spec | None:
        environment = task.environment
        if environment is None:
            if task.image:
                return None
            raise TaskNotBuildable("the task has neither an image nor an environment to build")
        if environment.source is None:
            raise TaskNotBuildable("environment.source is not set: there is nothing to build")
        if environment.base != self._base_suite:
            raise TaskNotBuildable(
                f"environment.base {environment.base!r} is not supported; "
                f"only {self._base_suite!r} is"
            )
        return _Spec(
            repo=task.repo,
            base_commit=task.base_commit,
            source=Path(environment.source),
            pip_packages=with_build_tools(environment.pip_packages, environment.install),
            install=environment.install,
        )

    def _prebuilt(self, task: Task) -> BuildOutcome:
        image = task.image or ""
        try:
            found = self._engine.image_id(image)
        except EnvBuildError as exc:
            return BuildOutcome(task.instance_id, BuildStatus.FAILED, reason=str(exc))
        if found is None:
            reason = f"image {image} is not present locally, and no registry can be reached"
            return BuildOutcome(task.instance_id, BuildStatus.FAILED, reason=reason)
        return BuildOutcome(task.instance_id, BuildStatus.PREBUILT, image=image)

    def _group_outcomes(self, spec: _Spec, ids: list[str]) -> list[BuildOutcome]:
        started = time.monotonic()
        try:
            tag, status = self._image(spec, ids)
        except EnvBuildError as exc:
            seconds = time.monotonic() - started
            log.warning("envbuild.failed", tasks=len(ids), repo=spec.repo, reason=str(exc)[:300])
            return [
                BuildOutcome(i, BuildStatus.FAILED, reason=str(exc), seconds=seconds) for i in ids
            ]
        seconds = time.monotonic() - started
        log.info("envbuild.image", status=status.value, tag=tag, tasks=len(ids), seconds=seconds)
        first = BuildOutcome(ids[0], status, image=tag, seconds=seconds)
        rest = [BuildOutcome(i, BuildStatus.CACHED, image=tag) for i in ids[1:]]
        return [first, *rest]

    def _image(self, spec: _Spec, ids: Sequence[str]) -> tuple[str, BuildStatus]:
        base_tag, base_id = self._base_image()
        with tempfile.TemporaryDirectory(prefix="hackaudit-envbuild-", dir=self._work_dir) as tmp:
            work = Path(tmp)
            wheels = self._wheels.wheels_for(spec.pip_packages, work / "wheels")
            inputs = ImageInputs(
                repo=spec.repo,
                base_image=base_tag,
                base_image_id=base_id,
                base_commit=spec.base_commit,
                pip_packages=spec.pip_packages,
                wheels=tuple(WheelFile(w.name, _sha256(w)) for w in wheels),
                install=spec.install,
            )
            tag = image_tag(inputs)
            if self._engine.image_id(tag) is not None:
                return tag, BuildStatus.CACHED
            testbed = work / "testbed"
            checked_snapshot(spec.source, testbed, spec.base_commit, ids)
            with build_context(dockerfile(inputs), wheels, testbed) as context:
                self._engine.build(context, tag=tag, labels=image_labels(inputs))
            return tag, BuildStatus.BUILT

    def _base_image(self) -> tuple[str, str]:
        """Looked up once per builder; a failure is kept too, so it is not retried per group."""
        if self._base is None:
            try:
                tag = self._base_images.base_image()
                image_id = self._engine.image_id(tag)
                if image_id is None:
                    raise BaseImageUnavailable(f"the base image {tag} is not present locally")
                self._base = (tag, image_id)
            except EnvBuildError as exc:
                self._base = exc
        if isinstance(self._base, EnvBuildError):
            raise self._base
        return self._base


def _finished(done: int, total: int, outcome: BuildOutcome) -> BuildProgress:
    message = f"{outcome.instance_id}: {outcome.status.value}"
    return BuildProgress(done, total, outcome.instance_id, message, outcome)


def _names(ids: Sequence[str]) -> str:
    return ids[0] if len(ids) == 1 else f"{ids[0]} and {len(ids) - 1} more"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
