"""The bus contract (docs/asyncapi.yaml) is current and complete; these tests are its CI check.

Regenerating the document from the code must give the checked-in file, and the checked-in file
must name every subject of `subjects.py`, every durable consumer with its dead-letter subject,
every subject a service's code sends or reads, and every bus message with its JSON schema, so a
new subject or a changed contract field that is not in the published document fails.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import typer
import yaml
from pydantic import BaseModel, create_model
from typer.testing import CliRunner

from hackaudit.cli import bus_contract
from hackaudit.cli.bus_contract import Format
from hackaudit.shared import subjects
from hackaudit.shared.contracts import TaskIngested

REPO_ROOT = Path(__file__).resolve().parents[3]
CHECKED_IN = REPO_ROOT / bus_contract.DOCUMENT
FIX = f"run `{bus_contract.REGENERATE}`"
CONSUMERS = [c for c in vars(subjects).values() if isinstance(c, subjects.Consumer)]


@pytest.fixture(scope="module")
def generated() -> dict[str, Any]:
    return bus_contract.document()


@pytest.fixture(scope="module")
def published() -> dict[str, Any]:
    assert CHECKED_IN.is_file(), f"{bus_contract.DOCUMENT} is missing: {FIX}"
    doc: dict[str, Any] = yaml.safe_load(CHECKED_IN.read_text(encoding="utf-8"))
    return doc


def _addresses(doc: dict[str, Any]) -> set[str]:
    return {channel["address"] for channel in doc["channels"].values()}


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(participant, action, channel address, operation) of every operation."""
    found = []
    for operation in doc["operations"].values():
        channel = doc["channels"][operation["channel"]["$ref"].rsplit("/", 1)[-1]]
        participant = operation["tags"][0]["name"]
        found.append((participant, operation["action"], channel["address"], operation))
    return found


def schema_drift(doc: dict[str, Any], name: str, model: type[BaseModel]) -> list[str]:
    """How the document's schema of contract `name` (and what it contains) differs from `model`."""
    schemas = doc["components"]["schemas"]
    problems = []
    for key, schema in bus_contract.payload_schemas({name: model}).items():
        if key not in schemas:
            problems.append(f"{key} is missing")
        elif schemas[key] != schema:
            problems.append(f"{key} differs from the contract")
    return problems


def test_the_checked_in_document_is_the_one_the_code_generates(generated: dict[str, Any]) -> None:
    expected = bus_contract.render(generated, Format.YAML)
    actual = CHECKED_IN.read_text(encoding="utf-8") if CHECKED_IN.is_file() else ""
    if actual != expected:
        diff = difflib.unified_diff(
            actual.splitlines(keepends=True),
            expected.splitlines(keepends=True),
            f"{bus_contract.DOCUMENT} (checked in)",
            "generated from the code",
            n=1,
        )
        pytest.fail(f"{bus_contract.DOCUMENT} is out of date: {FIX}\n{''.join(diff)[:4000]}")


@pytest.mark.parametrize("subject", bus_contract.named_subjects())
def test_every_subject_of_subjects_py_is_a_channel(published: dict[str, Any], subject: str) -> None:
    assert any(a == subject or a.startswith(f"{subject}.") for a in _addresses(published)), (
        f"{subject} (subjects.py) is not in {bus_contract.DOCUMENT}: {FIX}"
    )


@pytest.mark.parametrize("consumer", CONSUMERS, ids=lambda c: c.durable)
def test_every_consumer_reads_its_contract_and_has_a_dead_letter_subject(
    published: dict[str, Any], consumer: subjects.Consumer
) -> None:
    reads = [
        (who, op)
        for who, action, address, op in _operations(published)
        if action == "receive" and address == consumer.subject
        if op.get("x-durable") == consumer.durable
    ]
    assert len(reads) == 1, f"no receive operation through {consumer.durable}: {FIX}"
    who, _ = reads[0]
    dead = subjects.dead_letter_subject(consumer.subject)
    letters = [
        op
        for participant, action, address, op in _operations(published)
        if (participant, action, address) == (who, "send", dead)
    ]
    assert len(letters) == 1, f"{who} sends no dead letter of {consumer.durable} to {dead}: {FIX}"
    assert letters[0]["messages"][0]["$ref"].endswith("/messages/DeadLetter")


@pytest.mark.parametrize("name", sorted(bus_contract.bus_models()))
def test_every_bus_message_is_in_the_document_with_its_json_schema(
    published: dict[str, Any], name: str
) -> None:
    model = bus_contract.bus_models()[name]
    message = published["components"]["messages"].get(name)
    assert message is not None, f"message {name} is not in {bus_contract.DOCUMENT}: {FIX}"
    assert message["payload"] == {"$ref": f"#/components/schemas/{name}"}
    on_channels = [c for c in published["channels"].values() if name in c["messages"]]
    assert on_channels, f"{name} travels on no channel of {bus_contract.DOCUMENT}: {FIX}"
    drift = schema_drift(published, name, model)
    assert not drift, f"{name}'s JSON schema in {bus_contract.DOCUMENT}: {drift}; {FIX}"


def test_a_changed_contract_field_is_caught(published: dict[str, Any]) -> None:
    """The schema check can fail: a contract that grew a field no longer matches the document."""
    changed = create_model("TaskIngested", __base__=TaskIngested, priority=(int, 0))
    assert schema_drift(published, "TaskIngested", changed) == [
        "TaskIngested differs from the contract"
    ]
    assert schema_drift(published, "TaskIngested", TaskIngested) == []


def _subjects_named_in(path: Path) -> set[str]:
    """The subjects (and consumers' subjects) a service's source names through `subjects`."""
    source = path.read_text(encoding="utf-8")
    names: set[str] = set()
    for attribute in re.findall(r"\bsubjects\.([A-Za-z_]+)", source):
        value = getattr(subjects, attribute)
        if isinstance(value, subjects.Consumer):
            names.add(value.subject)
        elif attribute == "run_completed_subject":
            names.add(subjects.RUN_COMPLETED_FOR)
        elif isinstance(value, str) and value.startswith(f"{subjects.PREFIX}."):
            names.add(value)
    if "BusRunClient(" in source:  # it publishes run requests for the service
        names.add(subjects.RUN_REQUESTED)
    return names


SERVICES = sorted(p.name for p in (REPO_ROOT / "services").iterdir() if (p / "src").is_dir())


@pytest.mark.parametrize("service", SERVICES)
def test_every_subject_a_service_names_is_one_of_its_operations(
    published: dict[str, Any], service: str
) -> None:
    """A new `bus.publish` (or subscription) in a service's code that the document lacks fails."""
    mine = {address for who, _, address, _ in _operations(published) if who == service}
    assert mine, f"{service} has no operation in {bus_contract.DOCUMENT}: {FIX}"
    for path in sorted((REPO_ROOT / "services" / service / "src").rglob("*.py")):
        for subject in _subjects_named_in(path):
            assert subject in mine, (
                f"{path.name} of {service} names {subject}, which is no operation of {service} "
                f"in {bus_contract.DOCUMENT}: declare what it publishes with "
                f"`publishers.declare`, then {FIX}"
            )


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in _refs(value)]
    return []


def test_every_reference_in_the_document_resolves(published: dict[str, Any]) -> None:
    for ref in _refs(published):
        assert ref.startswith("#/"), ref
        node: Any = published
        for part in ref[2:].split("/"):
            key = unquote(part).replace("~1", "/").replace("~0", "~")
            assert isinstance(node, dict) and key in node, f"{ref} does not resolve"
            node = node[key]


def test_the_command_writes_the_document_as_json(generated: dict[str, Any], tmp_path: Path) -> None:
    app = typer.Typer()
    bus_contract.register(app)

    @app.callback()
    def root() -> None:
        """Test root so the command keeps its name."""

    out = tmp_path / "bus" / "asyncapi.json"
    result = CliRunner().invoke(app, ["asyncapi", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text(encoding="utf-8")) == generated


def test_the_html_page_embeds_the_document(generated: dict[str, Any]) -> None:
    page = bus_contract.render(generated, Format.HTML)
    assert '<meta charset="utf-8">' in page
    embedded = re.search(r"AsyncApiStandalone\.render\(\s*(\{.*?\}),\s*document", page, re.S)
    assert embedded is not None, "the page renders no document"
    assert json.loads(json.loads(embedded.group(1))["schema"]) == generated
