"""Neighbours of the evidence: the vocabulary an input's variants are drawn from (the reference
fix's own literals, the issue's code), the variants themselves, the graded tests' unchecked
calls, and how the offline augmenter asserts them beside the exact input — first widened, then,
after a rejection, the exact input alone."""

from __future__ import annotations

import ast
import binascii
import json
import re

import pytest

from hackaudit.repairer.domain import capture, neighbours
from hackaudit.repairer.domain.ports import RepairState
from hackaudit.repairer.service_layer.repair import RepairConfig, run_repair
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    Capture,
    GateReason,
    ProbeDifference,
    Provenance,
    RepairRequested,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    TestStatus,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox, added_tests

from .conftest import example_task

URLNORM = example_task("urlnorm__urlnorm-2")
INIKIT = example_task("inikit__inikit-2")
EXACT = "normalize('http://example.com:80/a')"


def test_the_vocabulary_is_the_fixes_literals_not_its_prose() -> None:
    vocab = neighbours.vocabulary(URLNORM)
    assert {"http", "https", "ws", "wss", "ftp", "80", "443", "21"} <= vocab.replaceable
    assert "0080" in vocab.digits  # from the code: a replacement, not replaceable
    assert "0080" not in vocab.replaceable
    # Docstrings and the words of messages are prose: ttlcache-2's and slugkit-1's are left out.
    assert "Separates" not in neighbours.vocabulary(example_task("ttlcache__ttlcache-2")).letters
    assert "least" not in neighbours.vocabulary(example_task("slugkit__slugkit-1")).replaceable


@pytest.mark.parametrize(
    ("expression", "expected", "absent"),
    [
        (EXACT, "normalize('https://example.com:80/a')", EXACT),
        (EXACT, "normalize('http://example.com:0080/a')", "normalize('http://example.com:81/a')"),
        ("normalize('HTTP://A.B:80/')", "normalize('HTTPS://A.B:80/')", "normalize('https:"),
        ("normalize('x', drop_fragment=True)", "normalize('x', drop_fragment=False)", ""),
        ("f(80)", "f(443)", "f(0080)"),  # an int takes no leading-zero spelling
        ("value + 1", None, ""),  # not a call: nothing
    ],
)
def test_variants_change_one_literal_to_another_of_its_kind(
    expression: str, expected: str | None, absent: str
) -> None:
    found = neighbours.variants(expression, neighbours.vocabulary(URLNORM))
    if expected is None:
        assert found == []
        return
    assert expected in found
    assert not absent or not any(absent in f for f in found)
    assert len(found) <= neighbours.MAX_VARIANTS


def test_a_private_helpers_inputs_get_no_variants() -> None:
    vocab = neighbours.vocabulary(URLNORM)
    public = ProbeDifference(origin="probe", expression=EXACT, function="normalize")
    private = ProbeDifference(origin="probe", expression="_port('80')", function="_port")
    found = neighbours.variant_differences([private, public], vocab)
    assert list(found) == [1] and all(d.function == "normalize" for d in found[1])


def test_unchecked_calls_are_the_graded_tests_calls_whose_value_nobody_checks() -> None:
    found = neighbours.unchecked_calls(INIKIT)
    assert [d.expression for d in found] == [
        "inikit.loads('[s]\\nempty =\\nafter = 1\\n')",
        "inikit.loads('[s]\\nempty:\\n')",
    ]
    assert all(d.origin == "replay" and d.test.startswith("tests/test_parser.py::") for d in found)
    # urlnorm-2's graded test asserts on its only call: nothing unchecked.
    assert neighbours.unchecked_calls(URLNORM) == []


# --- the augmenter, widened first -------------------------------------------------------------

_DEF = re.compile(r"^\+\s*def (test_\w+_matches_reference_\w+)\(", re.MULTILINE)


def _tests_of(patch: str) -> dict[str, str]:
    matches = list(_DEF.finditer(patch))
    return {
        m.group(1): patch[m.start() : nxt.start() if nxt else len(patch)]
        for m, nxt in zip(matches, [*matches[1:], None], strict=True)
    }


def _capture(patch: str) -> RunResult:
    data = patch.replace("\n+", "\n").split("# --- this run's cases ---", 1)[1]
    cases = ast.literal_eval(data.split("CASES = ", 1)[1].split("\nMAX_TEXT", 1)[0])
    names = []
    for i, case in enumerate(cases):
        outcome = {"repr": f"'{case[3]}'", "str": case[3], "type": "str", "module": "urlnorm"}
        code = binascii.hexlify(json.dumps(outcome, sort_keys=True).encode()).decode()
        names.append(f"test_cap{i}_{code} ({capture.CLASS})")
    return RunResult(status=RunStatus.COMPLETED, resolved=True,
                     tests=dict.fromkeys(names, TestStatus.PASSED))  # fmt: skip


def _world(harm: str = "", blocking: str = ""):  # type: ignore[no-untyped-def]
    """Gold passes every new test; the exploit fails a test asserting the exact input (in the
    form `blocking` when given); a correct variant fails a test that asserts an input
    containing `harm`."""

    def rule(request: RunRequested) -> RunResult:
        patch = added_tests(request)
        if request.purpose is RunPurpose.PROBE:
            return _capture(patch)
        tests = _tests_of(patch)
        diff = request.candidate.diff if request.candidate else ""
        statuses = {}
        for name, text in tests.items():
            failing = request.purpose is RunPurpose.EMPTY
            failing |= diff == "wrong" and f"{blocking}({EXACT})" in text
            failing |= request.purpose is RunPurpose.REFERENCE and bool(harm) and harm in text
            statuses[f"tests/test_normalize.py::TestPort::{name}"] = (
                TestStatus.FAILED if failing else TestStatus.PASSED
            )
        graded = set(request.task.fail_to_pass)
        resolved = all(statuses.get(t, TestStatus.PASSED) is TestStatus.PASSED for t in graded)
        return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests=statuses)

    return rule


def _request(correct: tuple[Candidate, ...] = ()) -> RepairRequested:
    exploit = Candidate(instance_id=URLNORM.instance_id, diff="wrong",
                        provenance=Provenance(strategy="mutation"))  # fmt: skip
    difference = ProbeDifference(origin="probe", expression=EXACT, function="normalize",
                                 modules=("urlnorm",), gold="a", candidate="b")  # fmt: skip
    outcome = CandidateOutcome(candidate=exploit, verdict=CandidateVerdict.EXPLOIT,
                               differences=(difference,))  # fmt: skip
    return RepairRequested(correlation_id="a/1", task=URLNORM, exploits=(exploit,),
                           outcomes=(outcome,), correct_variants=correct)  # fmt: skip


async def test_the_first_test_asserts_gold_beside_the_exact_input_too() -> None:
    sandbox = ScriptedSandbox([_world()])
    done = await run_repair(_request(), sandbox, None, InMemoryStateStore(RepairState))
    (test,) = done.tests
    assert test.accepted and "inputs beside it" in test.origin
    assert f"assert repr({EXACT}) == " in test.source
    assert "assert repr(normalize('https://example.com:80/a')) == " in test.source
    assert "assert repr(normalize('http://example.com:0080/a')) == " in test.source
    assert test.source.count("from urlnorm import normalize") == 1
    capture = next(r for r in sandbox.requests if r.purpose is RunPurpose.PROBE)
    assert isinstance(capture.invocation, Capture) and capture.test_patch is None
    assert "https://example.com:80/a" in capture.invocation.files[capture.invocation.test]


async def test_a_widened_test_that_harms_a_correct_variant_falls_back_to_the_exact_input() -> None:
    correct = Candidate(instance_id=URLNORM.instance_id, diff="rewrite",
                        provenance=Provenance(strategy="rename-locals"))  # fmt: skip
    sandbox = ScriptedSandbox([_world(harm="https://")])
    done = await run_repair(_request((correct,)), sandbox, None, InMemoryStateStore(RepairState))
    wide, exact = done.tests
    assert wide.rejection is GateReason.REJECTS_CORRECT and "https://" in wide.source
    assert exact.accepted and "inputs beside it" not in exact.origin
    assert "https://" not in exact.source and f"assert repr({EXACT}) == " in exact.source


async def test_without_neighbours_only_the_exact_input_is_asserted() -> None:
    sandbox = ScriptedSandbox([_world()])
    config = RepairConfig(neighbours=False)
    done = await run_repair(_request(), sandbox, None, InMemoryStateStore(RepairState), config)
    (test,) = done.tests
    assert test.accepted and "https://" not in test.source


async def test_a_widened_test_that_does_not_block_is_followed_by_another_widened_form() -> None:
    sandbox = ScriptedSandbox([_world(blocking="str")])
    done = await run_repair(_request(), sandbox, None, InMemoryStateStore(RepairState))
    weak, kept = done.tests
    assert weak.rejection is GateReason.DOES_NOT_BLOCK and weak.origin.startswith("probe")
    assert "(repr) and" in weak.origin and "(str) and" in kept.origin  # both widened
    assert kept.accepted and f"assert str({EXACT}) == " in kept.source
    assert "normalize('https://example.com:80/a')" in kept.source
