"""From tasks to environment images: group tasks by what their image is made of, build each once.

Per group of tasks sharing repository, base commit, source and install spec:
1. the base image for the environment's Python (`bases`), and the exact wheels for the pip
   packages, the requirements read from the repository's files and, for an upstream repository,
   its build requirements — all chosen for that base (offline when cached);
   for an upstream repository, as in SWE-bench's harness, the requirement files, the pip
   packages and the install command are separate `pip install` stages, each resolved on its
   own, so a later stage's pin wins;
2. the tag, a hash of those inputs; when an image with that tag exists, it is used as it is;
3. otherwise the source is made: a source folder is committed on the host and checked against
   `base_commit`; an upstream repository is fetched at `base_commit` alone from the repos folder
   (`git_source`). It is packed with the Dockerfile and wheels, and built without network.

A plain SWE-bench task (no image, no environment source) gets its environment from the spec
table (`hackaudit.shared.swebench_specs`) when ingestion did not fill it already.

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

from hackaudit.sandbox.envbuild.bases import BaseTarget, base_target, missing_image_message
from hackaudit.sandbox.envbuild.context import build_context
from hackaudit.sandbox.envbuild.errors import (
    BaseImageUnavailable,
    EnvBuildError,
    ImageMissing,
    RepoNotFound,
    TaskNotBuildable,
    WheelhouseError,
)
from hackaudit.sandbox.envbuild.git_source import GitRepoDir, find_repo_dir, shallow_checkout
from hackaudit.sandbox.envbuild.ports import BaseImageSource, ImageEngine, WheelSource
from hackaudit.sandbox.envbuild.recipe import (
    LEGACY_EDITABLE_ENV,
    UPSTREAM_BUILD_TOOLS,
    ImageInputs,
    WheelFile,
    dockerfile,
    editable_build_tools,
    editable_install,
    image_labels,
    image_tag,
    is_editable_install,
    normalised_packages,
    offline_install,
    runnable_pre_install,
    with_build_tools,
)
from hackaudit.sandbox.envbuild.requirements import (
    ReadFile,
    apply_sed_edits,
    build_requirements,
    declared_requirements,
    install_extras,
    needs_compiler,
    project_name,
    read_requirements,
    setup_py_declared,
)
from hackaudit.sandbox.envbuild.snapshot import checked_snapshot
from hackaudit.shared.contracts.task import Task
from hackaudit.shared.logs import get_logger
from hackaudit.shared.swebench_specs import SpecNotFound, needs_spec, require_spec

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
    target: BaseTarget
    source: Path | None
    repo_dir: Path | None
    pip_packages: tuple[str, ...]
    requirements_files: tuple[str, ...]
    pre_install: tuple[str, ...]
    install: str | None
    version: str | None
    venv_for_tox: bool = False


class EnvironmentBuilder:
    def __init__(
        self,
        *,
        engine: ImageEngine,
        base_images: BaseImageSource,
        wheels: WheelSource,
        base_suite: str = "bookworm",
        work_dir: Path | None = None,
        repos: Path | None = None,
        python_image: str = "python:{version}-slim",
        python_image_glibc_minor: int = 28,
    ) -> None:
        self._engine = engine
        self._base_images = base_images
        self._wheels = wheels
        self._base_suite = base_suite
        self._work_dir = work_dir
        self._repos = repos
        self._python_image = python_image
        self._python_image_glibc_minor = python_image_glibc_minor
        self._bases: dict[str, tuple[str, str] | EnvBuildError] = {}

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
        if needs_spec(task):
            try:
                task = require_spec(task)
            except SpecNotFound as exc:
                raise TaskNotBuildable(str(exc)) from exc
        environment = task.environment
        if environment is None:
            return None
        python, base = environment.python, environment.base
        target = base_target(
            python,
            base if base is not None or python is not None else self._base_suite,
            python_image=self._python_image,
            python_image_glibc_minor=self._python_image_glibc_minor,
        )
        source = Path(environment.source) if environment.source else None
        repo_dir = None
        if source is None:
            if self._repos is None:
                raise TaskNotBuildable(
                    f"task {task.instance_id}: environment.source is not set and no repos folder "
                    "is configured to take the repository from: set HACKAUDIT_REPOS or pass "
                    "--repos DIR"
                )
            try:
                repo_dir = find_repo_dir(self._repos, task.repo)
            except RepoNotFound as exc:
                raise RepoNotFound(f"task {task.instance_id}: {exc}") from exc
            if environment.install and _compiles(repo_dir, task.base_commit):
                target = target.with_compiler()
        return _Spec(
            repo=task.repo,
            base_commit=task.base_commit,
            target=target,
            source=source,
            repo_dir=repo_dir,
            pip_packages=environment.pip_packages,
            requirements_files=environment.requirements_files,
            pre_install=environment.pre_install,
            install=environment.install,
            version=task.version,
            venv_for_tox="--current-env" in (task.test_command or ""),
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
        base_tag, base_id = self._base_image(spec.target)
        with tempfile.TemporaryDirectory(prefix="hackaudit-envbuild-", dir=self._work_dir) as tmp:
            work = Path(tmp)
            stages, packages = self._staged_packages(spec)
            wheels: list[Path] = []
            # Each stage is resolved on its own, as SWE-bench's harness runs one `pip install`
            # per stage (requirement file, pip packages, the install command): a later stage
            # may override an earlier one's pin.
            for number, stage in enumerate((*stages, packages)):
                if stage:
                    found = self._wheels_for(spec, stage, work / f"wheels-{number}")
                    wheels += _new_wheels(wheels, found)
            declared = self._declared(spec)
            if declared:
                found = self._declared_wheels(spec, declared, work / "wheels-install")
                wheels += _new_wheels(wheels, found)
            inputs = self._inputs(spec, base_tag, base_id, packages, wheels, stages)
            tag = image_tag(inputs)
            if self._engine.image_id(tag) is not None:
                return tag, BuildStatus.CACHED
            if inputs.skipped_pre_install:
                log.warning(
                    "envbuild.pre_install_skipped",
                    repo=spec.repo,
                    steps=len(inputs.skipped_pre_install),
                    reason="needs network or Debian packages",
                )
            testbed = work / "testbed"
            if spec.repo_dir is not None:
                shallow_checkout(spec.repo_dir, spec.base_commit, testbed, ids, self._repos)
            else:
                assert spec.source is not None
                checked_snapshot(spec.source, testbed, spec.base_commit, ids)
            with build_context(dockerfile(inputs), wheels, testbed) as context:
                self._engine.build(context, tag=tag, labels=image_labels(inputs))
            return tag, BuildStatus.BUILT

    def _staged_packages(self, spec: _Spec) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
        """(earlier stages, the environment's packages with, upstream, its build tools).

        An upstream repository's requirement files are installed as a stage of their own before
        the packages, as SWE-bench's harness does; a source folder's are merged into the packages.
        """
        read = self._reader(spec)
        required = read_requirements(spec.requirements_files, read)
        if spec.repo_dir is None or not required:
            return (), self._packages(spec, spec.pip_packages + required)
        return (normalised_packages(required),), self._packages(spec, spec.pip_packages)

    def _packages(self, spec: _Spec, packages: tuple[str, ...]) -> tuple[str, ...]:
        """The packages and, for an install command, the build tools it needs."""
        read = self._reader(spec)
        if spec.repo_dir is None:
            return with_build_tools(packages, spec.install)
        if not spec.install:
            return with_build_tools(packages, None)
        build = build_requirements(read("pyproject.toml"))
        if is_editable_install(editable_install(spec.install)) and read("setup.py") is None:
            build = editable_build_tools(build)
        return with_build_tools(packages, spec.install, (*UPSTREAM_BUILD_TOOLS, *build))

    def _wheels_for(self, spec: _Spec, packages: tuple[str, ...], into: Path) -> list[Path]:
        return self._wheels.wheels_for(
            packages,
            into,
            python_version=spec.target.python,
            glibc_minor=spec.target.glibc_minor,
        )

    def _declared_wheels(self, spec: _Spec, declared: tuple[str, ...], into: Path) -> list[Path]:
        """The install step's wheels, resolved as if the repository itself were installed.

        A dependency that needs the repository's own package (`sphinxcontrib-applehelp` 1.0.7
        needs Sphinx>=5) must be resolved against the version being installed, as pip does in
        the install step, or the image holds only a version that conflicts with it. The
        repository stands in as a constraint `<name>==<task version>.*`; when no release
        matches it, the requirements are resolved without it.
        """
        read = self._reader(spec)
        name = project_name(read("pyproject.toml"), read("setup.cfg"), read("setup.py"))
        if name and spec.version:
            try:
                return self._wheels.wheels_for(
                    declared,
                    into,
                    python_version=spec.target.python,
                    glibc_minor=spec.target.glibc_minor,
                    constraints=(f"{name}=={spec.version}.*",),
                )
            except WheelhouseError as exc:
                log.info("envbuild.self_constraint_dropped", repo=spec.repo, reason=str(exc)[:200])
                for stale in into.glob("*.whl"):
                    stale.unlink()
        return self._wheels_for(spec, declared, into)

    def _declared(self, spec: _Spec) -> tuple[str, ...]:
        """What an upstream repository's install step will ask for, read from its files."""
        if spec.repo_dir is None or not spec.install:
            return ()
        read = self._reader(spec)
        extras = install_extras(spec.install)
        declared = declared_requirements(read("pyproject.toml"), read("setup.cfg"), extras)
        setup_py = read("setup.py")
        if setup_py is not None:
            # Read as the pre-install steps (SWE-bench's pins by `sed`) leave it.
            edited = apply_sed_edits(setup_py, "setup.py", spec.pre_install)
            declared = tuple(dict.fromkeys(declared + setup_py_declared(edited, extras)))
        return declared

    def _reader(self, spec: _Spec) -> ReadFile:
        if spec.repo_dir is not None:
            repo = GitRepoDir(spec.repo_dir)
            return lambda path: repo.read(spec.base_commit, path)
        folder = spec.source
        assert folder is not None

        def read(path: str) -> str | None:
            file = (folder / path).resolve()
            if not file.is_relative_to(folder.resolve()):
                return None
            try:
                return file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None

        return read

    def _inputs(
        self,
        spec: _Spec,
        base_tag: str,
        base_id: str,
        packages: tuple[str, ...],
        wheels: Sequence[Path],
        stages: tuple[tuple[str, ...], ...] = (),
    ) -> ImageInputs:
        upstream = spec.repo_dir is not None
        pre_install, skipped = runnable_pre_install(spec.pre_install)
        install_env: tuple[tuple[str, str], ...] = ()
        install = editable_install(spec.install) if upstream else spec.install
        if upstream and install and spec.version:
            # setuptools_scm finds no tag in a one-commit history; the task's version stands in.
            install_env = (("SETUPTOOLS_SCM_PRETEND_VERSION", spec.version),)
        if (
            upstream
            and is_editable_install(install)
            and self._reader(spec)("pyproject.toml") is None
        ):
            # Without pyproject.toml, pip before 25.1 ran `setup.py develop`, which puts the
            # repository on sys.path; tools that look modules up by path (astroid) rely on it.
            install_env += (LEGACY_EDITABLE_ENV,)
        return ImageInputs(
            repo=spec.repo,
            base_image=base_tag,
            base_image_id=base_id,
            base_commit=spec.base_commit,
            pip_packages=packages,
            wheels=tuple(WheelFile(w.name, _sha256(w)) for w in wheels),
            install=offline_install(install) if upstream else install,
            pre_install=pre_install,
            skipped_pre_install=skipped,
            install_env=install_env,
            keep_wheels_for_install=upstream and bool(spec.install),
            create_runner=spec.target.image is not None,
            source="upstream" if upstream else "folder",
            earlier_stages=stages,
            system_python_sees_venv=spec.venv_for_tox,
        )

    def _base_image(self, target: BaseTarget) -> tuple[str, str]:
        """Looked up once per base; a failure is kept too, so it is not retried per group."""
        if target.key not in self._bases:
            try:
                tag = self._base_images.base_image(target)
                image_id = self._engine.image_id(tag)
                if image_id is None and target.image is not None:
                    raise BaseImageUnavailable(missing_image_message(target))
                if image_id is None:
                    raise BaseImageUnavailable(f"the base image {tag} is not present locally")
                self._bases[target.key] = (tag, image_id)
            except EnvBuildError as exc:
                self._bases[target.key] = exc
        found = self._bases[target.key]
        if isinstance(found, EnvBuildError):
            raise found
        return found


def _compiles(repo_dir: Path, commit: str) -> bool:
    """Does installing the repository at `commit` compile extensions?"""
    repo = GitRepoDir(repo_dir)
    return needs_compiler(repo.read(commit, "pyproject.toml"), repo.read(commit, "setup.py"))


def _finished(done: int, total: int, outcome: BuildOutcome) -> BuildProgress:
    message = f"{outcome.instance_id}: {outcome.status.value}"
    return BuildProgress(done, total, outcome.instance_id, message, outcome)


def _new_wheels(have: Sequence[Path], found: Sequence[Path]) -> list[Path]:
    """The wheels of `found` whose file is not among `have` already."""
    names = {w.name for w in have}
    return [w for w in found if w.name not in names]


def _names(ids: Sequence[str]) -> str:
    return ids[0] if len(ids) == 1 else f"{ids[0]} and {len(ids) - 1} more"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
