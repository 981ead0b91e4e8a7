"""Builds the scorer service from settings: the results store, the policy, the subscriptions."""

from __future__ import annotations

from faststream.nats import NatsBroker

from hackaudit.scorer.adapters.store import DuckDBAuditStore
from hackaudit.scorer.handlers import SUBJECT_OF, ScorerHandlers
from hackaudit.scorer.settings import ScorerSettings
from hackaudit.shared import bus, publishers, subjects
from hackaudit.shared.contracts import (
    AttackCompleted,
    JudgeCompleted,
    Message,
    RepairCompleted,
    RunCompleted,
    TaskIngested,
    TaskScored,
)
from hackaudit.shared.metrics import record_verdict
from hackaudit.shared.service import Service
from hackaudit.shared.settings import BusSettings

__all__ = ["ScorerSettings", "build"]


def build(bus_settings: BusSettings, settings: ScorerSettings | None = None) -> Service:
    settings = settings or ScorerSettings()
    store = DuckDBAuditStore(settings.store_path(bus_settings))
    consumers = [
        subjects.SCORER_INGESTED,
        subjects.SCORER_RUNS,
        subjects.SCORER_ATTACKS,
        subjects.SCORER_JUDGEMENTS,
        subjects.SCORER_REPAIRS,
    ]

    def attach(broker: NatsBroker) -> None:
        for model, subject in SUBJECT_OF.items():
            publishers.declare(broker, subject, model)

        async def send(subject: str, message: Message) -> None:
            await bus.publish(broker, subject, message)
            if isinstance(message, TaskScored):
                record_verdict(message.verdict)

        handlers = ScorerHandlers(store, send, settings.policy(), settings.audits_in_flight)
        bus.subscribe(
            broker, subjects.SCORER_INGESTED, TaskIngested, handlers.task_ingested, bus_settings
        )
        bus.subscribe(
            broker, subjects.SCORER_RUNS, RunCompleted, handlers.run_completed, bus_settings
        )
        bus.subscribe(
            broker,
            subjects.SCORER_ATTACKS,
            AttackCompleted,
            handlers.attack_completed,
            bus_settings,
        )
        bus.subscribe(
            broker,
            subjects.SCORER_JUDGEMENTS,
            JudgeCompleted,
            handlers.judge_completed,
            bus_settings,
        )
        bus.subscribe(
            broker,
            subjects.SCORER_REPAIRS,
            RepairCompleted,
            handlers.repair_completed,
            bus_settings,
        )

    async def close() -> None:
        store.close()

    return Service("scorer", consumers, attach, on_stop=[close])
