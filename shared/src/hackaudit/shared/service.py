"""How a service is started: on its own (`python -m hackaudit.<name>`), or beside the others in the
CLI's process. A service is a name, its durable consumers and a function that attaches its
handlers to a broker; everything else (connection, topology, shutdown) is the same for all.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from faststream.nats import NatsBroker

from hackaudit.shared import bus, ops_endpoint, subjects
from hackaudit.shared.logs import configure_logging, get_logger
from hackaudit.shared.ops_endpoint import OpsSettings
from hackaudit.shared.settings import BusSettings

log = get_logger("hackaudit.service")


@dataclass
class Service:
    name: str
    consumers: list[subjects.Consumer]
    attach: Callable[[NatsBroker], None]
    on_start: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    on_stop: list[Callable[[], Awaitable[None]]] = field(default_factory=list)


@contextlib.asynccontextmanager
async def running(
    url: str, service: Service, settings: BusSettings, ops: OpsSettings | None = None
) -> AsyncIterator[NatsBroker]:
    """The service connected to `url`, its topology declared and its handlers consuming; with a
    metrics port (`ops`, else HACKAUDIT_METRICS_*), reported by the process's ops endpoint."""
    broker = NatsBroker(url, logger=None)
    service.attach(broker)
    ops = ops or OpsSettings()
    async with ops_endpoint.registered(service.name, broker, ops, settings.state_dir) as probe:
        try:
            for start in service.on_start:
                await start()
            await broker.connect()
            stream = broker.config.connection_state.stream
            await bus.declare_topology(stream, settings, service.consumers)
            await broker.start()
            probe.started = True
            log.info("service started", service=service.name, consumers=len(service.consumers))
            yield broker
        finally:
            probe.started = False
            await bus.cancel_handlers(broker)
            await broker.stop()
            await bus.cancel_handlers(broker)  # any handler started while the broker stopped
            for stop in service.on_stop:
                await stop()
            log.info("service stopped", service=service.name)


def serve(build: Callable[[BusSettings], Service]) -> None:
    """Entry point of a standalone service process: runs until SIGINT or SIGTERM."""
    configure_logging()
    settings = BusSettings()
    url = settings.nats_url or "nats://127.0.0.1:4222"

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with running(url, build(settings), settings):
            await stop.wait()

    asyncio.run(main())
