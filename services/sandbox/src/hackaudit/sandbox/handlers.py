"""The sandbox's message handler: one `RunRequested` in, one `RunCompleted` out.

Faults the caller must act on: `InvalidRunRequest` is permanent (dead-letter the message);
`BackendUnavailable` is transient (nack with a delay). Every other outcome of a run, including an
infrastructure failure of its container, is a `RunResult` inside the `RunCompleted`.
"""

from __future__ import annotations

from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import RunCompleted, RunRequested


async def handle_run_requested(request: RunRequested, runner: Runner) -> RunCompleted:
    """Grade the run(s) a request orders."""
    return await runner.complete(request)
