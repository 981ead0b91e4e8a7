"""Builds the sandbox service: run requests from the durable `sandbox-runs` queue, results to
`run.completed.<requester>`. Several workers (processes, machines) on the same consumer share it.
With fair scheduling (the default) a worker holds more requests than it has run slots and
starts their runs in `RunSlots`' order. A worker builds the image of a task that brings only an
`environment` before running it (in a thread: the bus keeps acknowledging progress meanwhile);
see `task_images`."""

from __future__ import annotations

from faststream.nats import NatsBroker

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.errors import BackendUnavailable, InvalidRunRequest
from hackaudit.sandbox.handlers import handle_run_requested
from hackaudit.sandbox.runner import Runner
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared import bus, publishers, subjects
from hackaudit.shared.contracts import RunCompleted, RunRequested
from hackaudit.shared.errors import PermanentError, TransientError
from hackaudit.shared.metrics import record_run
from hackaudit.shared.service import Service
from hackaudit.shared.settings import BusSettings


def build(
    bus_settings: BusSettings, settings: SandboxSettings | None = None, runner: Runner | None = None
) -> Service:
    """The sandbox service; `runner` replaces the one built from settings (a fake engine)."""
    settings = settings or SandboxSettings(state_dir=bus_settings.state_dir)
    runner = runner or bootstrap(settings)

    def attach(broker: NatsBroker) -> None:
        publishers.declare(broker, subjects.RUN_COMPLETED_FOR, RunCompleted)

        async def on_run(request: RunRequested) -> None:
            if not request.requested_by:
                raise PermanentError("run request names no requester: nowhere to send the result")
            try:
                done = await handle_run_requested(request, runner)
            except InvalidRunRequest as exc:
                raise PermanentError(str(exc)) from exc
            except BackendUnavailable as exc:
                raise TransientError(str(exc)) from exc
            record_run(done)
            await bus.publish(broker, subjects.run_completed_subject(request.requested_by), done)

        bus.subscribe(
            broker,
            subjects.SANDBOX_RUNS,
            RunRequested,
            on_run,
            bus_settings,
            concurrency=settings.requests_held(),
        )

    return Service(
        "sandbox", [subjects.SANDBOX_RUNS], attach, on_start=[runner.start], on_stop=[runner.close]
    )
