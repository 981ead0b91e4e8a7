"""What a service sends, declared on its broker so that the bus contract can list it.

FastStream describes a subscriber from its registration, but a `bus.publish` call is invisible to
it. Each service therefore declares, beside the calls, every subject it publishes to and the
contract it publishes there; `hackaudit asyncapi` reads these declarations (through FastStream's
AsyncAPI generator) into the document of the bus. A declaration sends nothing and connects nothing.
"""

from __future__ import annotations

from faststream.nats import NatsBroker
from pydantic import BaseModel


def summary(model: type[BaseModel]) -> str:
    """The first line of a contract's docstring, or its name when it has none."""
    doc = (model.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else model.__name__


def declare(broker: NatsBroker, subject: str, model: type[BaseModel]) -> None:
    """`broker`'s service publishes `model` messages on `subject` (which may name a parameter,
    e.g. `hackaudit.run.completed.{requester}`)."""
    broker.publisher(subject, schema=model, title=f"{subject}:{model.__name__}")
