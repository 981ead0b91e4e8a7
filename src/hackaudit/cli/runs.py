"""Sends run requests to the sandbox over the bus and collects their results, for CLI commands
(task validation, benchmarks) that need runs but no audit."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence

from nats.aio.msg import Msg

from hackaudit.cli import runtime
from hackaudit.shared import bus, subjects
from hackaudit.shared.contracts import RunCompleted, RunRequested
from hackaudit.shared.settings import BusSettings


async def run_requests(
    url: str,
    settings: BusSettings,
    requests: Sequence[RunRequested],
    *,
    requester: str,
    on_result: Callable[[RunCompleted], None] | None = None,
    limit_s: float = 3600.0,
) -> dict[str, RunCompleted]:
    """The result of every request, by the request's idempotency key (missing ones timed out)."""
    wanted = {r.idempotency_key for r in requests}
    results: dict[str, RunCompleted] = {}
    finished = asyncio.Event()

    async def collect(msg: Msg) -> None:
        done = RunCompleted.model_validate_json(msg.data)
        if done.request_key in wanted and done.request_key not in results:
            results[done.request_key] = done
            if on_result is not None:
                on_result(done)
            if len(results) == len(wanted):
                finished.set()

    nc = await runtime.connect(url)
    try:
        await nc.subscribe(subjects.run_completed_subject(requester), cb=collect)
        async with runtime.publisher(url, settings) as broker:
            for request in requests:
                await bus.publish(broker, subjects.RUN_REQUESTED, request)
            if wanted:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(finished.wait(), timeout=limit_s)
    finally:
        await nc.close()
    return results
