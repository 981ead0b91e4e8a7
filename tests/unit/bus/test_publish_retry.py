"""`bus.publish` while a NATS cluster elects a stream leader: an unanswered publish is retried (the
Nats-Msg-Id makes that safe), a refusal is not."""

from __future__ import annotations

from typing import Any, cast

import pytest
from faststream.nats import NatsBroker
from nats.js.errors import APIError, NoStreamResponseError

from hackaudit.shared import bus
from hackaudit.shared.contracts import AttackCompleted

MESSAGE = AttackCompleted(correlation_id="audit-1", instance_id="task-1")


class FlakyBroker:
    """Fails the first publishes with the given errors, then stores."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.published: list[dict[str, Any]] = []
        self.attempts = 0

    async def publish(self, body: str, subject: str, **options: Any) -> None:
        self.attempts += 1
        if self.failures:
            raise self.failures.pop(0)
        self.published.append({"subject": subject, **options})


def in_flight() -> APIError:
    return APIError(code=409, err_code=bus.DUPLICATE_IN_FLIGHT, description="in process")


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    async def instant(delay: float) -> None:
        return None

    monkeypatch.setattr(bus.asyncio, "sleep", instant)


@pytest.mark.parametrize(
    "failures",
    [(NoStreamResponseError(),), (TimeoutError(), NoStreamResponseError()), (in_flight(),)],
)
async def test_an_unanswered_publish_is_retried_with_the_same_msg_id(
    failures: tuple[Exception, ...],
) -> None:
    broker = FlakyBroker(*failures)
    await bus.publish(cast(NatsBroker, broker), "hackaudit.attack.completed", MESSAGE)
    assert broker.attempts == len(failures) + 1
    (sent,) = broker.published
    assert sent["headers"] == {bus.MSG_ID_HEADER: MESSAGE.idempotency_key}


async def test_a_refused_publish_is_not_retried() -> None:
    broker = FlakyBroker(APIError(code=400, err_code=10060, description="bad subject"))
    with pytest.raises(APIError):
        await bus.publish(cast(NatsBroker, broker), "hackaudit.attack.completed", MESSAGE)
    assert broker.attempts == 1


async def test_a_bus_away_for_longer_than_the_retry_window_fails_the_handler(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bus, "PUBLISH_RETRY_S", 1.0)
    broker = FlakyBroker(*[NoStreamResponseError() for _ in range(100)])
    with pytest.raises(NoStreamResponseError):
        await bus.publish(cast(NatsBroker, broker), "hackaudit.attack.completed", MESSAGE)
    assert 1 < broker.attempts < 100
