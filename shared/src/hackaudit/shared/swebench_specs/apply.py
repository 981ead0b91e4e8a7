"""Fills a plain SWE-bench task's environment, test command and log parser from the table.

A plain row names only its repository and version; the table says how its image is made. The
lookup runs at ingestion, so the task travels over the bus self-describing, and again in the
environment builder for tasks that arrive without it. What the task states itself always wins:
each field of its own `environment` that it set, its `test_command`, its `log_parser`. A task
with a prebuilt `image` and no `environment` is left as it is.
"""

from __future__ import annotations

from hackaudit.shared.contracts.task import EnvironmentSpec, Task
from hackaudit.shared.swebench_specs.table import RepoVersionSpec, known_versions, spec_for


class SpecNotFound(LookupError):
    """The table has no row for the task's (repository, version) and the task names no source."""

    def __init__(self, task: Task) -> None:
        self.instance_id = task.instance_id
        self.repo = task.repo
        self.version = task.version
        versions = known_versions(task.repo)
        known = (
            f"known versions: {', '.join(versions)}" if versions else "the repository is unknown"
        )
        super().__init__(
            f"task {task.instance_id} has neither an image nor an environment.source, and there "
            f"is no SWE-bench environment spec for repo {task.repo} version "
            f"{task.version or '(none)'} ({known}); give the task an `image` or an `environment`"
        )


def spec_environment(spec: RepoVersionSpec, own: EnvironmentSpec | None = None) -> EnvironmentSpec:
    """The environment the table gives, with every field `own` set explicitly kept."""
    derived = {
        "python": spec.python,
        "pip_packages": (*spec.packages, *spec.pip_packages),
        "requirements_files": spec.requirement_files,
        "pre_install": spec.pre_install,
        "install": spec.install,
    }
    if own is not None:
        derived.update({name: getattr(own, name) for name in own.model_fields_set})
    return EnvironmentSpec.model_validate(derived)


def needs_spec(task: Task) -> bool:
    """True when the task's environment must come from the table.

    That is when it has neither an image nor an environment, or an environment that names no
    source, Python or base (only overrides of some fields).
    """
    if task.environment is None:
        return task.image is None
    environment = task.environment
    return environment.source is None and environment.python is None and environment.base is None


def with_spec(task: Task) -> Task:
    """The task with its environment, test command and log parser filled from the table.

    Unchanged when it needs nothing from the table or the table has no row for it.
    """
    if not needs_spec(task):
        return task
    spec = spec_for(task.repo, task.version)
    if spec is None:
        return task
    update: dict[str, object] = {"environment": spec_environment(spec, task.environment)}
    if task.test_command is None:
        update["test_command"] = spec.test_cmd
    if task.log_parser is None:
        update["log_parser"] = spec.log_parser
    return task.model_copy(update=update)


def require_spec(task: Task) -> Task:
    """`with_spec`, raising SpecNotFound when the task needs the table and it has no row."""
    filled = with_spec(task)
    if needs_spec(filled):
        raise SpecNotFound(task)
    return filled
