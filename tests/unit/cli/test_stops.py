"""SIGINT and SIGTERM stop a CLI command in order: the running coroutine unwinds (its clean-up
runs, undisturbed by a second signal), then `Stopped` exits with 128 + the signal number. The
signals here are real, sent by the test process to itself."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import pytest

from hackaudit.cli import stops


@pytest.fixture(autouse=True)
def handlers_restored() -> Iterator[None]:
    before = {sig: signal.getsignal(sig) for sig in stops.SIGNALS}
    yield
    for sig, handler in before.items():
        signal.signal(sig, handler)


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"]
)
def test_a_signal_cancels_the_command_which_unwinds_then_exits_128_plus_signum(
    sig: signal.Signals, code: int
) -> None:
    steps: list[str] = []

    async def command() -> None:
        try:
            os.kill(os.getpid(), sig)
            await asyncio.sleep(10)
            steps.append("not cancelled")
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # a second signal during clean-up is ignored
            await asyncio.sleep(0.05)
            steps.append("cleaned up")

    before = signal.getsignal(sig)
    with pytest.raises(stops.Stopped) as stopped:
        stops.run(command())

    assert stopped.value.code == code and stopped.value.signal_name == sig.name
    assert steps == ["cleaned up"]
    assert signal.getsignal(sig) is before


def test_without_a_signal_the_result_comes_back() -> None:
    async def command() -> int:
        await asyncio.sleep(0)
        return 7

    assert stops.run(command()) == 7


def test_outside_an_event_loop_a_signal_raises_stopped_where_the_program_is() -> None:
    steps: list[str] = []

    def busy() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            signal.sigtimedwait([], 0)  # a system call: the handler runs on its return
            steps.append("not interrupted")
        finally:
            steps.append("cleaned up")

    stops.install()
    with pytest.raises(stops.Stopped) as stopped:
        busy()
    assert stopped.value.code == 143
    assert steps == ["cleaned up"]
