"""Builds each task's Docker image from its source folder and install spec, without network.

The image holds the repository at `/testbed` as a git repository whose HEAD is the task's
`base_commit`, a venv at `/opt/venv` (first on PATH) with the task's pip packages from the host
wheelhouse, and the result of the task's install command; it runs as user `runner`. Images are
tagged `hackaudit-env/<repo>:<hash of inputs>`, so an unchanged task is never rebuilt.
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
    EngineError,
    EnvBuildError,
    ImageBuildFailed,
    ImageMissing,
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
    "EngineError",
    "EnvBuildError",
    "EnvBuildSettings",
    "EnvironmentBuilder",
    "ImageBuildFailed",
    "ImageMissing",
    "ProgressCallback",
    "SourceError",
    "TaskNotBuildable",
    "WheelhouseError",
    "build_images",
    "default_builder",
    "resolve_image",
    "with_images",
]
