"""Why an environment image could not be had. Each is a fault of one task's build, never of others.

EnvBuildError
├── TaskNotBuildable      the task names neither an image nor a buildable environment
├── SourceError           the environment's source cannot be copied, committed or fetched
│   ├── BaseCommitMismatch   committing the source gives another commit than base_commit
│   ├── RepoNotFound         no local clone or mirror of the repository in the repos folder
│   └── CommitMissing        the repository there does not hold base_commit
├── WheelhouseError       pip cannot provide wheels for the environment's packages
├── BaseImageUnavailable  the base image cannot be found or made
├── ImageMissing          a task's prebuilt image is not present locally (nothing is pulled)
└── EngineError           the Docker engine refused or failed
    └── ImageBuildFailed     the image build itself failed (its log tail is kept)
"""

from __future__ import annotations

from collections.abc import Sequence


class EnvBuildError(Exception):
    """An environment image could not be produced for one task (or one group sharing an image)."""


class TaskNotBuildable(EnvBuildError):
    pass


class SourceError(EnvBuildError):
    pass


class BaseCommitMismatch(SourceError):
    def __init__(self, instance_ids: Sequence[str], expected: str, actual: str) -> None:
        self.instance_ids = tuple(instance_ids)
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"task {', '.join(self.instance_ids)}: committing environment.source gives "
            f"{actual}, but base_commit is {expected}; the source folder is not the repository "
            "at base_commit"
        )


class RepoNotFound(SourceError):
    pass


class CommitMissing(SourceError):
    def __init__(self, instance_ids: Sequence[str], repo_dir: str, commit: str) -> None:
        self.instance_ids = tuple(instance_ids)
        self.repo_dir = repo_dir
        self.commit = commit
        super().__init__(
            f"task {', '.join(self.instance_ids)}: the repository {repo_dir} has no commit "
            f"{commit}; update the clone or mirror, or check base_commit"
        )


class WheelhouseError(EnvBuildError):
    pass


class BaseImageUnavailable(EnvBuildError):
    pass


class ImageMissing(EnvBuildError):
    pass


class EngineError(EnvBuildError):
    pass


class ImageBuildFailed(EngineError):
    def __init__(self, tag: str, error: str, log_tail: Sequence[str] = ()) -> None:
        self.tag = tag
        self.error = error
        self.log_tail = tuple(log_tail)
        tail = "\n".join(self.log_tail[-15:])
        super().__init__(f"building {tag} failed: {error}" + (f"\n{tail}" if tail else ""))
