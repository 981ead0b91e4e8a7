"""Builds the attacker service: attack requests in, candidates to the sandbox over the bus,
attack results out."""

from __future__ import annotations

import functools

from faststream.nats import NatsBroker

from hackaudit.attacker.bootstrap import bootstrap
from hackaudit.attacker.handlers import handle_attack_requested
from hackaudit.attacker.settings import AttackerSettings
from hackaudit.shared import bus, publishers, subjects
from hackaudit.shared.contracts import AttackCompleted, AttackRequested, RunCompleted, RunRequested
from hackaudit.shared.run_client import BusRunClient
from hackaudit.shared.service import Service
from hackaudit.shared.settings import BusSettings

REQUESTER = "attacker"


def build(bus_settings: BusSettings, settings: AttackerSettings | None = None) -> Service:
    settings = settings or AttackerSettings(state_dir=bus_settings.state_dir)
    attacker = bootstrap(settings)
    sandbox = BusRunClient(REQUESTER, wait_s=settings.sandbox_wait_s)

    def attach(broker: NatsBroker) -> None:
        publishers.declare(broker, subjects.RUN_REQUESTED, RunRequested)
        publishers.declare(broker, subjects.ATTACK_COMPLETED, AttackCompleted)
        sandbox.bind(functools.partial(bus.publish, broker))

        async def on_attack(request: AttackRequested) -> None:
            done = await handle_attack_requested(request, attacker, sandbox)
            await bus.publish(broker, subjects.ATTACK_COMPLETED, done)

        bus.subscribe(
            broker,
            subjects.ATTACKER_REQUESTS,
            AttackRequested,
            on_attack,
            bus_settings,
            concurrency=settings.concurrent_attacks,
        )
        bus.subscribe(broker, subjects.ATTACKER_RUNS, RunCompleted, sandbox.deliver, bus_settings)

    return Service("attacker", [subjects.ATTACKER_REQUESTS, subjects.ATTACKER_RUNS], attach)
