"""Builds the repairer service: repair requests in, runs to the sandbox over the bus, hardened
tasks out."""

from __future__ import annotations

from faststream.nats import NatsBroker

from hackaudit.repairer.bootstrap import bootstrap
from hackaudit.repairer.handlers import handle_repair_requested
from hackaudit.repairer.service_layer.repair import REQUESTED_BY
from hackaudit.repairer.settings import RepairerSettings
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import RepairRequested, RunCompleted, RunRequested
from hackaudit.shared.run_client import BusRunClient
from hackaudit.shared.service import Service
from hackaudit.shared.settings import BusSettings


def build(bus_settings: BusSettings, settings: RepairerSettings | None = None) -> Service:
    settings = settings or RepairerSettings(state_dir=bus_settings.state_dir)
    repairer = bootstrap(settings)
    sandbox = BusRunClient(REQUESTED_BY, wait_s=settings.sandbox_wait_s)

    def attach(broker: NatsBroker) -> None:
        async def publish_run(subject: str, request: RunRequested) -> None:
            await bus.publish(broker, subject, request)

        sandbox.bind(publish_run)

        async def on_repair(request: RepairRequested) -> None:
            done = await handle_repair_requested(request, repairer, sandbox)
            await bus.publish(broker, subjects.REPAIR_COMPLETED, done)

        bus.subscribe(
            broker,
            subjects.REPAIRER_REQUESTS,
            RepairRequested,
            on_repair,
            bus_settings,
            concurrency=settings.concurrent_repairs,
        )
        bus.subscribe(broker, subjects.REPAIRER_RUNS, RunCompleted, sandbox.deliver, bus_settings)

    return Service("repairer", [subjects.REPAIRER_REQUESTS, subjects.REPAIRER_RUNS], attach)
