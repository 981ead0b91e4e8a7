"""The bus contract: one AsyncAPI 3.0 document of every subject on the bus, which service sends and
which receives it, and the JSON schema of every message, so that a data platform can plug into the
subjects without reading the code (`hackaudit asyncapi`; checked in as `docs/asyncapi.yaml`).

It is generated from the code. Each service is built and attached to a broker that never
connects, and FastStream's AsyncAPI generator describes what the service declared there: its
durable subscribers (`bus.subscribe`, whose description names the contract), the subjects it
publishes to (`publishers.declare`, beside its `bus.publish` calls) and the dead-letter subject of
each of its consumers. The documents of the services (and of the CLI, which sends tasks and run
requests) are merged by subject, and the payload schemas come from the pydantic contracts. A
subject of `subjects.py` that nobody declares is listed too, without an operation, so the document
leaves no subject out.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote

import typer
import yaml
from faststream.nats import NatsBroker
from faststream.specification import AsyncAPI, get_asyncapi_html
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from hackaudit.cli import services
from hackaudit.shared import bus, contracts, publishers, subjects
from hackaudit.shared.contracts import DeadLetter, RunRequested, TaskIngested
from hackaudit.shared.contracts.messages import SCHEMA_VERSION, Message
from hackaudit.shared.errors import HackauditError
from hackaudit.shared.service import Service
from hackaudit.shared.settings import BusSettings

DOCUMENT = Path("docs/asyncapi.yaml")
REGENERATE = "hackaudit asyncapi --output docs/asyncapi.yaml"
SCHEMA_REF = "#/components/schemas/{model}"

Action = Literal["send", "receive"]


class ContractError(HackauditError):
    """The code declares something the document cannot describe (an unknown contract)."""


class Format(StrEnum):
    YAML = "yaml"
    JSON = "json"
    HTML = "html"  # a page that renders the document with AsyncAPI's viewer, loaded from unpkg


@dataclass(frozen=True)
class Endpoint:
    """One participant sending or receiving one contract on one subject."""

    participant: str
    action: Action
    address: str
    model: str
    durable: str = ""  # the durable consumer a receiving service reads through


# --- the contracts ---------------------------------------------------------------------------


def bus_models() -> dict[str, type[BaseModel]]:
    """Every contract that travels on the bus, by name: the messages `hackaudit.shared.contracts`
    exports, and the dead letter."""
    found: dict[str, type[BaseModel]] = {"DeadLetter": DeadLetter}
    for name in contracts.__all__:
        value = getattr(contracts, name)
        if isinstance(value, type) and issubclass(value, Message) and value is not Message:
            found[name] = value
    return dict(sorted(found.items()))


def payload_schemas(models: dict[str, type[BaseModel]]) -> dict[str, Any]:
    """The JSON schema of every model and of what it contains, as `components/schemas`."""
    _, top = models_json_schema(
        [(model, "validation") for model in models.values()], ref_template=SCHEMA_REF
    )
    defs: dict[str, Any] = top.get("$defs", {})
    return dict(sorted(defs.items()))


# --- what the code declares ------------------------------------------------------------------


def _declare_cli(broker: NatsBroker) -> None:
    """The CLI sends tasks (`audit`, `submit`) and run requests (`tasks validate`, `bench`); it
    reads results and progress without a durable consumer."""
    publishers.declare(broker, subjects.TASK_INGESTED, TaskIngested)
    publishers.declare(broker, subjects.RUN_REQUESTED, RunRequested)


async def _stop(service: Service) -> None:
    for stop in service.on_stop:
        await stop()


def _brokers() -> Iterator[tuple[str, NatsBroker]]:
    """Each participant's broker with everything it declares attached; nothing connects."""
    built, _missing = services.available()
    with tempfile.TemporaryDirectory(prefix="hackaudit-asyncapi-") as state_dir:
        settings = BusSettings(state_dir=Path(state_dir))
        for name, build in built.items():
            service = build(settings)
            broker = NatsBroker(logger=None)
            service.attach(broker)
            try:
                yield name, broker
            finally:
                asyncio.run(_stop(service))
    cli = NatsBroker(logger=None)
    _declare_cli(cli)
    yield "cli", cli


def _ref_name(ref: str) -> str:
    return unquote(ref.rsplit("/", 1)[-1])


def endpoints(participant: str, broker: NatsBroker, known: set[str]) -> list[Endpoint]:
    """What FastStream's AsyncAPI generator finds declared on `broker`."""
    spec: dict[str, Any] = AsyncAPI(broker, title=participant).to_specification().to_jsonable()
    messages = spec.get("components", {}).get("messages", {})
    found = []
    for key, operation in spec.get("operations", {}).items():
        channel = spec["channels"][_ref_name(operation["channel"]["$ref"])]
        action: Action = "send" if operation["action"] == "send" else "receive"
        if action == "receive":  # the subscriber's description names its contract
            model, durable = channel.get("description", ""), key
        else:
            message = messages[_ref_name(channel["messages"]["Message"]["$ref"])]
            model, durable = _ref_name(message["payload"]["$ref"]), ""
        if model not in known:
            raise ContractError(
                f"{participant} {action}s {model or 'an undescribed message'!r} on "
                f"{channel['address']}: not a bus contract of hackaudit.shared.contracts"
            )
        found.append(Endpoint(participant, action, channel["address"], model, durable))
    return found


def declared_endpoints(known: set[str]) -> list[Endpoint]:
    found: list[Endpoint] = []
    for name, broker in _brokers():
        found.extend(endpoints(name, broker, known))
    return found


def named_subjects() -> list[str]:
    """Every concrete or parameterised subject `subjects.py` names (not prefixes or wildcards)."""
    names = {
        value
        for name, value in vars(subjects).items()
        if name.isupper()
        and isinstance(value, str)
        and value.startswith(f"{subjects.PREFIX}.")
        and ">" not in value
    }
    return sorted(names)


def _covers(address: str, subject: str) -> bool:
    return address == subject or address.startswith(f"{subject}.")


def _model_by_convention(subject: str, known: set[str]) -> str:
    """`hackaudit.attack.requested` -> `AttackRequested`."""
    words = subject.removeprefix(f"{subjects.PREFIX}.").split(".")
    model = "".join(word.capitalize() for word in words)
    if model not in known:
        raise ContractError(f"subject {subject} is declared by no service and no contract {model}")
    return model


# --- the document ----------------------------------------------------------------------------

PARAMETERS = {
    "requester": "The service that asked for the run (`RunRequested.requested_by`): `attacker`, "
    "`scorer`, `repairer`, or a CLI command's own name. Each reads its own results."
}

DESCRIPTION = f"""\
Every subject of the hackaudit bus, the services that send and receive it, and the JSON
schema of every message. Generated from the code by `{REGENERATE}`;
CI fails when the checked-in copy is out of date.

- Messages live in the JetStream stream `{subjects.STREAM}` (subjects `{subjects.PREFIX}.>`),
  dead letters in `{subjects.DEAD_LETTER_STREAM}` (subjects `{subjects.DEAD_LETTER_PREFIX}.>`).
- Every message is JSON and carries `schema_version`, the `correlation_id` of the task audit
  it belongs to and an `idempotency_key` derived from its inputs, also sent as the
  `{bus.MSG_ID_HEADER}` header: JetStream drops a republished duplicate within its window.
  Within a schema version, fields are only ever added, and only as optional ones.
- A service reads a subject through a durable pull consumer, named in its operation
  (`x-durable`); the workers of a service share it. To read a subject yourself, create your
  own durable consumer on the stream (filter subject = the channel's address): reading
  through a service's consumer would take its messages away from it.
- The sandbox answers each run on `{subjects.RUN_COMPLETED_FOR}`, the requester
  being the run's `requested_by`; the CLI reads its own results and the audit progress
  without a durable consumer.
- A message that fails validation, that a handler rejects for good, or that keeps failing
  is sent whole, with the reason, to `{subjects.DEAD_LETTER_PREFIX}.<subject without the
  '{subjects.PREFIX}.' prefix>` as a `DeadLetter`.
"""

DEAD_LETTER_NOTE = (
    "A message of the consumer that no worker could handle, with the reason; "
    f"`{bus.MSG_ID_HEADER}` is `deadletter:<subject>:<stream sequence>`."
)


def _channel_id(address: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", address).strip("_")


def _message(name: str, model: type[BaseModel]) -> dict[str, Any]:
    is_message = issubclass(model, Message)
    key = "the message's `idempotency_key`" if is_message else "a key of the dead-lettered copy"
    message: dict[str, Any] = {
        "name": name,
        "title": name,
        "summary": publishers.summary(model),
        "contentType": "application/json",
        "headers": {
            "type": "object",
            "properties": {bus.MSG_ID_HEADER: {"type": "string", "description": key}},
        },
        "payload": {"$ref": SCHEMA_REF.format(model=name)},
    }
    if is_message:
        message["correlationId"] = {"location": "$message.payload#/correlation_id"}
    return message


def _instance_of(template: str, address: str) -> bool:
    """`hackaudit.run.completed.{requester}` has `hackaudit.run.completed.scorer` as instance."""
    parts, given = template.split("."), address.split(".")
    return (
        template != address
        and len(parts) == len(given)
        and all(p == g or re.fullmatch(r"\{\w+\}", p) for p, g in zip(parts, given, strict=True))
    )


def _who(address: str, found: list[Endpoint], action: Action) -> str:
    """Who sends (receives) on `address`, itself or through a subject it is an instance of."""
    names = set()
    for e in found:
        if e.action != action:
            continue
        names.add(e.participant if e.address == address else f"{e.participant} (on {e.address})")
    return ", ".join(sorted(names)) or "no service"


def _channel(address: str, found: list[Endpoint], models: list[str]) -> dict[str, Any]:
    dead = address.startswith(f"{subjects.DEAD_LETTER_PREFIX}.")
    stream = subjects.DEAD_LETTER_STREAM if dead else subjects.STREAM
    if found:
        senders, receivers = _who(address, found, "send"), _who(address, found, "receive")
        text = f"Sent by: {senders}. Received by: {receivers}."
    else:
        text = "Named in `subjects.py` with its contract; no service sends or receives it yet."
    channel: dict[str, Any] = {
        "address": address,
        "title": address,
        "description": f"Stream `{stream}`. {text}" + (f" {DEAD_LETTER_NOTE}" if dead else ""),
        "messages": {m: {"$ref": f"#/components/messages/{m}"} for m in models},
        "x-stream": stream,
    }
    parameters = re.findall(r"\{(\w+)\}", address)
    if parameters:
        channel["parameters"] = {
            p: {"description": PARAMETERS.get(p, "A part of the subject.")} for p in parameters
        }
    return channel


def _operation(endpoint: Endpoint, channel_id: str) -> dict[str, Any]:
    model = endpoint.model
    if endpoint.action == "receive":
        summary = (
            f"{endpoint.participant} receives {model} through the durable consumer "
            f"`{endpoint.durable}`."
        )
    elif model == "DeadLetter":
        summary = f"{endpoint.participant} dead-letters what its consumer cannot handle."
    else:
        summary = f"{endpoint.participant} publishes {model}."
    operation: dict[str, Any] = {
        "action": endpoint.action,
        "channel": {"$ref": f"#/channels/{channel_id}"},
        "messages": [{"$ref": f"#/channels/{channel_id}/messages/{model}"}],
        "summary": summary,
        "tags": [{"name": endpoint.participant}],
    }
    if endpoint.durable:
        operation["x-durable"] = endpoint.durable
    return operation


def document() -> dict[str, Any]:
    """The AsyncAPI 3.0 document of the whole bus, in a stable order."""
    models = bus_models()
    known = set(models)
    found = declared_endpoints(known)
    by_address: dict[str, list[Endpoint]] = {}
    for endpoint in found:
        by_address.setdefault(endpoint.address, []).append(endpoint)
    channel_models = {a: sorted({e.model for e in es}) for a, es in by_address.items()}
    for subject in named_subjects():
        if not any(_covers(address, subject) for address in by_address):
            by_address[subject] = []
            channel_models[subject] = [_model_by_convention(subject, known)]
    addresses = sorted(by_address, key=lambda a: (a.startswith(subjects.DEAD_LETTER_PREFIX), a))
    channels = {}
    for a in addresses:
        related = [e for e in found if _instance_of(e.address, a) or _instance_of(a, e.address)]
        channels[_channel_id(a)] = _channel(a, by_address[a] + related, channel_models[a])
    operations = {}
    for address in addresses:
        cid = _channel_id(address)
        for endpoint in sorted(by_address[address], key=lambda e: (e.action, e.participant)):
            operations[f"{endpoint.participant}_{endpoint.action}_{cid}"] = _operation(
                endpoint, cid
            )
    used = sorted({m for ms in channel_models.values() for m in ms})
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "hackaudit bus",
            "version": str(SCHEMA_VERSION),
            "description": DESCRIPTION,
        },
        "defaultContentType": "application/json",
        "servers": {
            "nats": {
                "host": "localhost:4222",
                "protocol": "nats",
                "description": "Any NATS server with JetStream: the one NATS_URL names, or the "
                "embedded server `hackaudit up` starts.",
            }
        },
        "channels": channels,
        "operations": operations,
        "components": {
            "messages": {name: _message(name, models[name]) for name in used},
            "schemas": payload_schemas({name: models[name] for name in used}),
        },
    }


class _Dumper(yaml.SafeDumper):
    """Writes text of several lines as a literal block, so the document reads as it was written."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


@dataclass(frozen=True)
class _Specification:
    """The merged document as FastStream's `Specification`, which its HTML page is made from."""

    doc: dict[str, Any]

    @property
    def title(self) -> str:
        return str(self.doc["info"]["title"])

    def to_json(self) -> str:
        return json.dumps(self.doc, ensure_ascii=False)

    def to_jsonable(self) -> Any:
        return self.doc

    def to_yaml(self) -> str:
        return render(self.doc, Format.YAML)


def render(doc: dict[str, Any], fmt: Format) -> str:
    if fmt is Format.JSON:
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt is Format.HTML:
        page = get_asyncapi_html(_Specification(doc), try_it_out_path=None)
        # Without a declared charset a browser may read the viewer's script (opened from a file,
        # or served without one) in another encoding, and the page stays blank.
        return page.replace("<head>", '<head>\n        <meta charset="utf-8">', 1) + "\n"
    text: str = yaml.dump(
        doc,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return text


# --- the command -----------------------------------------------------------------------------


def register(app: typer.Typer) -> None:
    @app.command("asyncapi")
    def asyncapi(
        out: Annotated[
            Path | None,
            typer.Option("--output", "-o", help="Write the document here (default: stdout)."),
        ] = None,
        fmt: Annotated[
            Format | None,
            typer.Option(
                "--format",
                help="yaml, json, or html: a page that renders the document with AsyncAPI's "
                "viewer, which the browser loads from unpkg (default: from --out's suffix, or "
                "yaml).",
            ),
        ] = None,
    ) -> None:
        """Write the AsyncAPI document of the bus: every subject, who sends and receives it, and
        every message's JSON schema (checked in as docs/asyncapi.yaml)."""
        by_suffix = {".json": Format.JSON, ".html": Format.HTML}
        chosen = fmt or by_suffix.get(out.suffix if out else "", Format.YAML)
        try:
            text = render(document(), chosen)
        except ContractError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(1) from exc
        if out is None:
            typer.echo(text, nl=False)
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
            typer.echo(f"wrote {out}", err=True)
