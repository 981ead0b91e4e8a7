"""Builds each task's Docker image from its source folder or a local mirror, without network.

The image holds the repository at `/testbed` as a git repository whose HEAD is the task's
`base_commit` (taken from a local clone or mirror, that commit alone, for upstream tasks; plain
SWE-bench rows get their environment from the spec table), on the base of the task's Python,
a venv at `/opt/venv` (first on PATH) with the task's pip packages from the host wheelhouse,
and the result of the task's install command; it runs as user `runner`. Images are tagged
`hackaudit-env/<repo>:<hash of inputs>`, so an unchanged task is never rebuilt.
"""

from hackaudit.sandbox.envbuild.api import build_images, default_builder, resolve_image, with_images
from hackaudit.sandbox.envbuild.builder import (
    BuildOutcome,
    BuildProgress,
    BuildStatus,
    EnvironmentBuilder,
    ProgressCallback,
)
from hackaudit.sandbox.envbuild.errors import (
    BaseCommitMismatch,
    BaseImageUnavailable,
    CommitMissing,
    EngineError,
    EnvBuildError,
    ImageBuildFailed,
    ImageMissing,
    RepoNotFound,
    SourceError,
    TaskNotBuildable,
    WheelhouseError,
)
from hackaudit.sandbox.envbuild.settings import EnvBuildSettings

__all__ = [
    "BaseCommitMismatch",
    "BaseImageUnavailable",
    "BuildOutcome",
    "BuildProgress",
    "BuildStatus",
    "CommitMissing",
    "EngineError",
    "EnvBuildError",
    "EnvBuildSettings",
    "EnvironmentBuilder",
    "ImageBuildFailed",
    "ImageMissing",
    "ProgressCallback",
    "RepoNotFound",
    "SourceError",
    "TaskNotBuildable",
    "WheelhouseError",
    "build_images",
    "default_builder",
    "resolve_image",
    "with_images",
]
