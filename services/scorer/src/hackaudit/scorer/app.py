"""Builds the scorer service from settings: the results store, the policy, the subscriptions."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from faststream.nats import NatsBroker
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from hackaudit.scorer.adapters.store import DuckDBAuditStore
from hackaudit.scorer.domain.eqs import ScoringPolicy
from hackaudit.scorer.handlers import SUBJECT_OF, ScorerHandlers
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


class ScorerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HACKAUDIT_SCORER_", extra="ignore")

    results_db: Path | None = None  # default: <state dir>/results.duckdb
    # The policy's knobs, one setting each; their defaults are the policy's own.
    weight_v: float = ScoringPolicy.weight_v
    weight_h: float = ScoringPolicy.weight_h
    weight_f1: float = ScoringPolicy.weight_f1
    weight_d: float = ScoringPolicy.weight_d
    keep_above: float = ScoringPolicy.keep_above
    drop_below: float = ScoringPolicy.drop_below
    exploit_never_keep: bool = ScoringPolicy.exploit_never_keep  # false: thresholds only
    harness_caps: bool = ScoringPolicy.harness_caps  # true: harness exploits cap too
    # Audits started at most at once before their verdict (0: no limit). The others wait, in the
    # order they came, so each audit shares the sandbox with a few others and its verdict comes
    # minutes after its start, instead of every audit's coming at the end of a large batch.
    audits_in_flight: int = Field(default=4, ge=0)

    def store_path(self, bus_settings: BusSettings) -> Path:
        """The results store's file; readers (`hackaudit report`, `status`) use the same."""
        return self.results_db or bus_settings.state_dir / "results.duckdb"

    def policy(self) -> ScoringPolicy:
        knobs = {f.name for f in fields(ScoringPolicy)}
        return ScoringPolicy(**self.model_dump(include=knobs))


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
