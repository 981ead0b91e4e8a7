"""Builds the judge service: judge requests in, judge answers out, over the bus."""

from __future__ import annotations

from faststream.nats import NatsBroker

from hackaudit.judge.bootstrap import bootstrap
from hackaudit.judge.handlers import handle_judge_requested
from hackaudit.judge.settings import JudgeSettings
from hackaudit.shared import bus, publishers, subjects
from hackaudit.shared.contracts import JudgeCompleted, JudgeRequested
from hackaudit.shared.logs import get_logger
from hackaudit.shared.metrics import record_llm_tokens
from hackaudit.shared.service import Service
from hackaudit.shared.settings import BusSettings

log = get_logger("hackaudit.judge")


def build(bus_settings: BusSettings, settings: JudgeSettings | None = None) -> Service:
    settings = settings or JudgeSettings()
    judge = bootstrap(settings, bus_settings.state_dir)

    def attach(broker: NatsBroker) -> None:
        publishers.declare(broker, subjects.JUDGE_COMPLETED, JudgeCompleted)

        async def on_request(request: JudgeRequested) -> None:
            done = await handle_judge_requested(request, judge)
            if done.usage is not None:
                record_llm_tokens("judge", done.usage.input_tokens, done.usage.output_tokens)
            await bus.publish(broker, subjects.JUDGE_COMPLETED, done)

        bus.subscribe(
            broker,
            subjects.JUDGE_REQUESTS,
            JudgeRequested,
            on_request,
            bus_settings,
            concurrency=2,  # model calls are bounded by the judge's own semaphore
        )

    async def start() -> None:
        log.info(
            "judge ready",
            backend=settings.backend or "none",
            model=settings.model_name if settings.backend else "",
        )

    async def stop() -> None:
        if judge.model is not None:
            await judge.model.close()

    return Service("judge", [subjects.JUDGE_REQUESTS], attach, on_start=[start], on_stop=[stop])
