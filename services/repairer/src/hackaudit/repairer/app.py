"""Builds the repairer service: repair requests in, runs to the sandbox over the bus, hardened
tasks out."""

from __future__ import annotations

import functools

from faststream.nats import NatsBroker

from hackaudit.repairer.adapters.judge_client import BusJudgeClient
from hackaudit.repairer.bootstrap import bootstrap
from hackaudit.repairer.handlers import handle_repair_requested
from hackaudit.repairer.service_layer.repair import REQUESTED_BY
from hackaudit.repairer.settings import RepairerSettings
from hackaudit.shared import bus, publishers, subjects
from hackaudit.shared.contracts import (
    JudgeCompleted,
    JudgeRequested,
    RepairCompleted,
    RepairRequested,
    RunCompleted,
    RunRequested,
)
from hackaudit.shared.run_client import BusRunClient
from hackaudit.shared.service import Service
from hackaudit.shared.settings import BusSettings


def build(bus_settings: BusSettings, settings: RepairerSettings | None = None) -> Service:
    settings = settings or RepairerSettings(state_dir=bus_settings.state_dir)
    repairer = bootstrap(settings)
    sandbox = BusRunClient(REQUESTED_BY, wait_s=settings.sandbox_wait_s)
    judge = BusJudgeClient(REQUESTED_BY, wait_s=settings.judge_wait_s)

    def attach(broker: NatsBroker) -> None:
        publishers.declare(broker, subjects.RUN_REQUESTED, RunRequested)
        publishers.declare(broker, subjects.REPAIR_COMPLETED, RepairCompleted)
        sandbox.bind(functools.partial(bus.publish, broker))
        publishers.declare(broker, subjects.JUDGE_REQUESTED, JudgeRequested)
        judge.bind(functools.partial(bus.publish, broker))

        async def on_repair(request: RepairRequested) -> None:
            done = await handle_repair_requested(request, repairer, sandbox, judge)
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
        bus.subscribe(
            broker, subjects.REPAIRER_JUDGEMENTS, JudgeCompleted, judge.deliver, bus_settings
        )

    consumers = [subjects.REPAIRER_REQUESTS, subjects.REPAIRER_RUNS, subjects.REPAIRER_JUDGEMENTS]
    return Service("repairer", consumers, attach)
