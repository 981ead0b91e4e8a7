"""Faults of the sandbox. Expected outcomes (a patch that does not apply, a timeout) are results,
not exceptions; these are for what stops a run from being attempted at all.

    SandboxError
    ├── InvalidRunRequest      permanent: the request cannot be served (dead-letter it)
    └── BackendError           a container could not be run
        ├── BackendUnavailable transient: the engine is unreachable (retry later)
        └── ContainerFailed    one run's container failed; reported as infra_error
            └── ImageMissing   the task's image is not on this engine
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base of every sandbox fault."""


class InvalidRunRequest(SandboxError):
    """The request cannot be served as sent (e.g. a candidate run without a candidate)."""


class BackendError(SandboxError):
    """A container could not be run."""


class BackendUnavailable(BackendError):
    """The container engine cannot be reached; retrying later may succeed."""


class ContainerFailed(BackendError):
    """One run's container could not be created, started or read."""


class ImageMissing(ContainerFailed):
    """The task's image does not exist on the engine (nothing can be pulled)."""
