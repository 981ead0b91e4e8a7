"""Contracts: round-trips, SWE-bench's encodings, derived idempotency keys, and schema snapshots."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from hackaudit.shared import contracts
from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    CandidateKind,
    CandidateOutcome,
    CandidateVerdict,
    Capture,
    Grade,
    Invocation,
    Probe,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Suite,
    Task,
    TaskIngested,
    TestStatus,
)

SNAPSHOTS = Path(__file__).parent / "schemas"
MESSAGE_TYPES = sorted(
    (
        getattr(contracts, name)
        for name in contracts.__all__
        if isinstance(getattr(contracts, name), type)
        and issubclass(getattr(contracts, name), BaseModel)
    ),
    key=lambda cls: cls.__name__,
)

ROW = {
    "instance_id": "astropy__astropy-12907",
    "repo": "astropy/astropy",
    "base_commit": "d16bfe05a744909de4b27f5875fe0d4ed41ce607",
    "patch": "diff --git a/x.py b/x.py\n",
    "test_patch": "diff --git a/tests/test_x.py b/tests/test_x.py\n",
    "FAIL_TO_PASS": '["tests/test_x.py::test_a", "tests/test_x.py::test_b"]',
    "PASS_TO_PASS": "[]",
    "version": 4.3,
    "environment_setup_commit": "298ccb478e6bf092953bca67a3d29dc6c35f6752",
    "problem_statement": "Nested compound models break separability.",
    "hints_text": "",
    "created_at": "2022-03-03T15:14:54Z",
}


def task(**changes: object) -> Task:
    return Task.model_validate(ROW | changes)


def test_swebench_row_validates_with_json_encoded_test_lists() -> None:
    t = task()
    assert t.fail_to_pass == ("tests/test_x.py::test_a", "tests/test_x.py::test_b")
    assert t.pass_to_pass == ()
    assert t.version == "4.3"


def test_test_lists_are_accepted_as_lists_too() -> None:
    assert task(FAIL_TO_PASS=["t::a"], PASS_TO_PASS=["t::b"]).pass_to_pass == ("t::b",)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("FAIL_TO_PASS", "[not json", "FAIL_TO_PASS is a string but not a JSON list"),
        ("FAIL_TO_PASS", "[]", "FAIL_TO_PASS is empty"),
        ("PASS_TO_PASS", '{"a": 1}', "PASS_TO_PASS must be a list"),
        ("instance_id", "", "instance_id"),
        ("instance_id", "../escape", "instance_id"),
    ],
)
def test_bad_task_fields_are_named(field: str, value: object, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        task(**{field: value})
    assert message in str(info.value)


def test_swebench_row_round_trips_in_swebench_format() -> None:
    row = task().swebench_row()
    assert json.loads(row["FAIL_TO_PASS"]) == ["tests/test_x.py::test_a", "tests/test_x.py::test_b"]
    assert Task.model_validate(row) == task()


def test_candidate_hash_ignores_formatting_noise_but_not_content() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    same = "index 123..456 100644\r\n" + diff.replace("\n", "  \r\n")
    other = diff.replace("+b", "+c")
    assert (
        Candidate(instance_id="t", diff=diff).content_hash
        == Candidate(instance_id="t", diff=same).content_hash
    )
    assert (
        Candidate(instance_id="t", diff=diff).content_hash
        != Candidate(instance_id="t", diff=other).content_hash
    )


def test_candidate_carries_one_body() -> None:
    with pytest.raises(ValidationError):
        Candidate(instance_id="t", kind=CandidateKind.FILES, diff="x", files={"a.py": "1"})
    mapping = Candidate(
        instance_id="t", kind=CandidateKind.FILES, files={"a.py": "1", "b.py": None}
    )
    assert not mapping.is_empty
    assert Candidate(instance_id="t").is_empty


def test_idempotency_key_is_derived_from_inputs() -> None:
    a = TaskIngested(correlation_id="audit-1", task=task())
    assert a.idempotency_key == TaskIngested(correlation_id="audit-1", task=task()).idempotency_key
    assert a.idempotency_key != TaskIngested(correlation_id="audit-2", task=task()).idempotency_key
    assert a.idempotency_key.startswith("TaskIngested:")
    # a message read back keeps the key it was sent with
    assert (
        TaskIngested.model_validate_json(a.model_dump_json()).idempotency_key == a.idempotency_key
    )


def test_messages_round_trip_through_json() -> None:
    t = task()
    candidate = Candidate(instance_id=t.instance_id, diff="--- a/x\n+++ b/x\n")
    messages = [
        TaskIngested(correlation_id="c", task=t),
        RunRequested(correlation_id="c", task=t, purpose=RunPurpose.CANDIDATE, candidate=candidate),
        RunCompleted(
            correlation_id="c",
            instance_id=t.instance_id,
            purpose=RunPurpose.GOLD,
            request_key="k",
            results=(
                RunResult(
                    status=RunStatus.COMPLETED, resolved=True, tests={"a": TestStatus.PASSED}
                ),
            ),
        ),
        AttackCompleted(
            correlation_id="c",
            instance_id=t.instance_id,
            outcomes=(CandidateOutcome(candidate=candidate, verdict=CandidateVerdict.EXPLOIT),),
        ),
    ]
    for message in messages:
        assert type(message).model_validate_json(message.model_dump_json()) == message


@pytest.mark.parametrize("model", MESSAGE_TYPES, ids=lambda m: m.__name__)
def test_json_schema_matches_snapshot(model: type[BaseModel]) -> None:
    """A schema change must be deliberate: rerun with HACKAUDIT_UPDATE_SNAPSHOTS=1 to accept it."""
    schema = json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n"
    path = SNAPSHOTS / f"{model.__name__}.json"
    if os.environ.get("HACKAUDIT_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(schema)
    assert path.exists(), f"no snapshot for {model.__name__}: run with HACKAUDIT_UPDATE_SNAPSHOTS=1"
    assert path.read_text() == schema


def test_a_run_request_grades_by_default_and_keeps_its_key() -> None:
    t = Task(
        instance_id="i-1",
        repo="o/r",
        base_commit="abc",
        patch="",
        test_patch="",
        FAIL_TO_PASS=["t"],
    )
    request = RunRequested(correlation_id="c", task=t, purpose=RunPurpose.GOLD)
    assert request.invocation == Grade()
    # the key a request without an invocation had before invocations existed
    assert request.idempotency_key == "RunRequested:a04eba0f63e3becfb770469e7692a61b"
    stored = json.loads(request.model_dump_json())
    del stored["invocation"]
    assert RunRequested.model_validate(stored).invocation == Grade()


@pytest.mark.parametrize(
    "invocation",
    [
        Probe(files={"test_p.py": "x = 1\n", "m.py": ""}, test="test_p.py", loaded="C.t"),
        Capture(files={"test_c.py": "y = 2\n"}, test="test_c.py", loaded="C.t"),
        Suite(dirs=("tests", "tests/sub")),
        Suite(files=("tests/test_a.py",)),
    ],
    ids=lambda i: i.kind,
)
def test_an_invocation_travels_typed_and_keys_the_request(invocation: Invocation) -> None:
    t = task()
    request = RunRequested(
        correlation_id="c", task=t, purpose=RunPurpose.PROBE, invocation=invocation
    )
    back = RunRequested.model_validate_json(request.model_dump_json())
    assert back.invocation == invocation
    assert type(back.invocation) is type(invocation)
    graded = RunRequested(correlation_id="c", task=t, purpose=RunPurpose.PROBE)
    assert request.idempotency_key != graded.idempotency_key


def test_an_unknown_invocation_is_refused() -> None:
    with pytest.raises(ValidationError):
        RunRequested.model_validate(
            {
                "correlation_id": "c",
                "task": task().model_dump(by_alias=True),
                "purpose": "probe",
                "invocation": {"kind": "coverage"},
            }
        )
