"""How the CLI stops on SIGINT (Ctrl-C) and SIGTERM (process managers, Kubernetes): cleanly.

A command that starts the embedded NATS server, the services or sandbox containers must not leave
any of them behind when it is stopped. Python's default SIGTERM ends the process without running
a single `finally`, and Ctrl-C inside a running event loop interrupts whatever line happens to run.
Here both signals become an orderly stop instead:

- inside `run(main)` the first signal cancels `main`, so every context it entered unwinds as on
  any other exit (services stop and remove their containers, the NATS server is stopped and
  waited for); further signals while it unwinds are reported and otherwise ignored;
- outside an event loop (`install`), the signal raises `Stopped` where the program is, which
  unwinds the same way.

`Stopped` is a `SystemExit` whose code is the shell's convention, 128 + the signal number: 130
after SIGINT, 143 after SIGTERM. SIGKILL cannot be caught; see `hackaudit.shared.nats_server`
(the server dies with its parent) and the sandbox's start-up sweep (containers of dead processes).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

from hackaudit.shared.logs import get_logger

log = get_logger("hackaudit.cli.stops")

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(SystemExit):
    """The command was stopped by a signal; it exits with 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name


def _raise_stopped(signum: int, _frame: FrameType | None) -> None:
    raise Stopped(signum)


def install() -> None:
    """From now on SIGINT and SIGTERM raise `Stopped` in the main thread (call it from there)."""
    for sig in SIGNALS:
        signal.signal(sig, _raise_stopped)


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, except that SIGINT and SIGTERM cancel `main` and, once it has
    unwound, raise `Stopped`. The signal handlers in place before are restored afterwards."""
    return asyncio.run(_until_signalled(main))


async def _until_signalled(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[int] = []

    def on_signal(signum: int) -> None:
        name = signal.Signals(signum).name
        if received:
            log.warning("stop.already_stopping", signal=name)
            return
        received.append(signum)
        log.warning("stop.requested", signal=name)
        task.cancel()

    previous = {sig: signal.getsignal(sig) for sig in SIGNALS}
    for sig in SIGNALS:
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        result = await main
    except asyncio.CancelledError:
        if not received:
            raise
    finally:
        for sig, handler in previous.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
    if received:
        raise Stopped(received[0])
    return result
