"""The repair loop's decisions against a scripted sandbox: gate order and classification,
diversity after a rejection, blocking several exploits with one test, do no harm, the budget,
the final FAIL_TO_PASS / PASS_TO_PASS, and resuming a crashed repair without repeating a run."""

from __future__ import annotations

import ast
import binascii
import json
import re

import pytest

from hackaudit.repairer.domain import capture
from hackaudit.repairer.domain.ports import RepairState
from hackaudit.repairer.service_layer.repair import run_repair
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
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

TASK = example_task("mdtable__mdtable-2")
GOLD = TASK.patch
_DEF = re.compile(r"^\+\s*def (test_\w+_matches_reference_\w+)\(", re.MULTILINE)


def _exploit(name: str) -> Candidate:
    diff = f"--- a/mdtable/table.py\n+++ b/mdtable/table.py\n@@ -1 +1 @@\n-a\n+{name}\n"
    return Candidate(instance_id=TASK.instance_id, diff=diff, provenance=Provenance(strategy="llm"))


def _probe(expression: str) -> ProbeDifference:
    return ProbeDifference(
        origin="probe", expression=expression, function=expression.split("(")[0],
        modules=("mdtable",), gold="returns_x", candidate="returns_y",
    )  # fmt: skip


def _request(
    exploits: dict[str, list[str]], correct: tuple[Candidate, ...] = (), **options: object
) -> RepairRequested:
    candidates = tuple(_exploit(name) for name in exploits)
    outcomes = tuple(
        CandidateOutcome(
            candidate=c,
            verdict=CandidateVerdict.EXPLOIT,
            evidence="differential probes: ...",
            differences=tuple(_probe(e) for e in exprs),
        )
        for c, exprs in zip(candidates, exploits.values(), strict=True)
    )
    return RepairRequested(
        correlation_id="audit-1", task=TASK, exploits=candidates, outcomes=outcomes,
        correct_variants=correct, **options,  # type: ignore[arg-type]
    )  # fmt: skip


def _tests_of(patch: str) -> dict[str, str]:
    """New test name -> its text, from a test patch."""
    out: dict[str, str] = {}
    matches = list(_DEF.finditer(patch))
    for m, nxt in zip(matches, [*matches[1:], None], strict=True):
        out[m.group(1)] = patch[m.start() : nxt.start() if nxt else len(patch)]
    return out


def world(blocks: dict[str, set[str]], harms: set[str] = frozenset()):  # type: ignore[assignment]
    """A sandbox where an expression `fails_on_gold(...)` fails on gold, `flaky(...)` passes on
    gold once in three, `imports(...)` is never collected (import error), and a test on an
    expression named in `blocks[exploit]` fails on that exploit; `harms` names the expressions
    whose tests fail on correct variants. The empty patch fails every new test."""

    def rule(request: RunRequested):
        patch = added_tests(request)
        diff = request.candidate.diff if request.candidate else ""
        if request.purpose is RunPurpose.PROBE:
            return _capture(patch)
        tests = _tests_of(patch)
        graded = set(request.task.fail_to_pass) | set(request.task.pass_to_pass)
        ok = TestStatus.PASSED
        if request.purpose is RunPurpose.GOLD_GATE or diff == GOLD:
            if any("imports(" in t for t in tests.values()):
                return RunResult(status=RunStatus.COMPLETED, resolved=True, tests={},
                                 log_tail="ImportError: cannot import name 'imports'")  # fmt: skip
            runs = []
            for k in range(request.repeats):
                statuses = {
                    f"tests/test_table.py::TestRecords::{n}": (
                        TestStatus.FAILED
                        if "fails_on_gold(" in t or ("flaky(" in t and k != 1)
                        else ok
                    )
                    for n, t in tests.items()
                }
                runs.append(RunResult(status=RunStatus.COMPLETED, resolved=True, tests=statuses,
                                      duration_s=2.0))  # fmt: skip
            return runs
        statuses = {}
        for n, t in tests.items():
            failing = request.purpose is RunPurpose.EMPTY
            failing |= any(f"{e}(" in t for e in blocks.get(diff.split("+")[-1].strip(), ()))
            failing |= request.purpose is RunPurpose.REFERENCE and any(f"{e}(" in t for e in harms)
            statuses[f"tests/test_table.py::TestRecords::{n}"] = (
                TestStatus.FAILED if failing else ok
            )
        resolved = all(statuses.get(t, ok) is ok for t in graded)
        return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests=statuses,
                         duration_s=1.0)  # fmt: skip

    return rule


def _capture(patch: str) -> RunResult:
    data = patch.replace("\n+", "\n").split("# --- this run's cases ---", 1)[1]
    cases = ast.literal_eval(data.split("CASES = ", 1)[1].split("\nMAX_TEXT", 1)[0])
    names = []
    for i, case in enumerate(cases):
        expression = case[3]
        outcome = {"repr": f"'{expression}'", "str": expression, "type": "str", "module": "mdtable"}
        if "unstable(" in expression:
            return RunResult(status=RunStatus.COMPLETED, tests={})
        code = binascii.hexlify(json.dumps(outcome, sort_keys=True).encode()).decode()
        names.append(f"test_cap{i}_{code} ({capture.CLASS})")
    return RunResult(status=RunStatus.COMPLETED, resolved=True,
                     tests=dict.fromkeys(names, TestStatus.PASSED), duration_s=0.5)  # fmt: skip


async def test_a_test_failing_on_gold_is_rejected_and_the_next_uses_another_input() -> None:
    sandbox = ScriptedSandbox([world({"e1": {"good"}})])
    request = _request({"e1": ["fails_on_gold(1)", "good(2)"]})
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState))
    first, second = done.tests
    assert first.rejection is GateReason.FAILS_ON_GOLD and "fails_on_gold(1)" in first.source
    assert second.accepted and "good(2)" in second.source
    assert done.blocked == (request.exploits[0].candidate_id,) and done.unblocked == ()
    assert done.gate_rejections == {"fails_on_gold": 1}
    assert sandbox.count(RunPurpose.PROBE) == 1  # one capture run for every difference
    gate = next(r for r in sandbox.requests if r.purpose is RunPurpose.GOLD_GATE)
    assert gate.repeats == 3 and gate.candidate is not None and gate.candidate.diff == GOLD
    hardened = done.hardened_task
    assert hardened is not None and "good(2)" in hardened.test_patch
    new_id = f"tests/test_table.py::TestRecords::{second.name}"
    assert hardened.fail_to_pass == (*TASK.fail_to_pass, new_id)  # fails on the base commit
    assert hardened.pass_to_pass == TASK.pass_to_pass
    assert done.iterations == 2 and done.sandbox_seconds > 0  # one proposal per iteration


async def test_one_test_that_blocks_two_exploits_settles_both() -> None:
    sandbox = ScriptedSandbox([world({"e1": {"good"}, "e2": {"good"}})])
    request = _request({"e1": ["good(1)"], "e2": ["other(2)"]})
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState))
    assert len(done.tests) == 1 and set(done.tests[0].blocks) == {
        e.candidate_id for e in request.exploits
    }
    assert set(done.blocked) == {e.candidate_id for e in request.exploits}


async def test_flaky_import_error_and_not_blocking_are_classified() -> None:
    sandbox = ScriptedSandbox([world({"e1": {"last"}})])
    request = _request({"e1": ["flaky(1)", "imports(2)", "weak(3)", "last(4)"]}, max_iterations=9)
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState))
    reasons = [t.rejection for t in done.tests]
    dnb = GateReason.DOES_NOT_BLOCK
    assert reasons == [GateReason.FLAKY, GateReason.IMPORT_ERROR, dnb, dnb, dnb, None]
    # A test that does not block is followed by another view of the same input, not a new input.
    assert [t.origin.rsplit("(", 1)[-1] for t in done.tests[2:5]] == ["repr)", "str)", "type)"]
    # (no `state` form: the captured value, a str, has no attributes)
    assert done.gate_rejections == {"does_not_block": 3, "flaky": 1, "import_error": 1}
    assert done.iterations == 6


async def test_a_test_that_rejects_a_correct_variant_retries_a_looser_form() -> None:
    correct = Candidate(
        instance_id=TASK.instance_id, diff="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+c\n",
        provenance=Provenance(strategy="rename-locals"),
    )  # fmt: skip
    sandbox = ScriptedSandbox([world({"e1": {"strict"}}, harms={"strict"})])
    request = _request({"e1": ["strict(1)"]}, correct=(correct,), max_iterations=5)
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState))
    assert [t.rejection for t in done.tests] == [GateReason.REJECTS_CORRECT] * 3
    forms = [t.origin.rsplit("(", 1)[-1] for t in done.tests]
    assert forms == ["repr)", "str)", "type)"]  # the same input, looser each time
    assert done.unblocked and done.hardened_task is None
    assert "nothing new to propose" in done.reason


async def test_the_iteration_budget_stops_the_loop() -> None:
    sandbox = ScriptedSandbox([world({"e1": {"never"}})])
    request = _request({"e1": ["a(1)", "b(2)", "c(3)"]}, max_iterations=2)
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState))
    assert done.iterations == 2 and len(done.tests) == 2
    assert done.reason.startswith("iteration budget spent")


async def test_the_sandbox_budget_stops_the_loop() -> None:
    sandbox = ScriptedSandbox([world({"e1": {"never"}})])
    request = _request({"e1": ["a(1)", "b(2)", "c(3)"]}, max_iterations=9, budget_seconds=5)
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState))
    assert done.reason.startswith("sandbox budget spent") and len(done.tests) == 1


async def test_no_usable_difference_means_nothing_to_propose() -> None:
    sandbox = ScriptedSandbox([world({})])
    request = _request({"e1": ["the test body (x)"]})
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState))
    assert done.tests == () and done.hardened_task is None
    assert sandbox.requests == []  # nothing to capture: no run at all
    # the reason says what the evidence lacks and that no model is set for the LLM augmenter
    assert "nothing new to propose for 1 exploit(s)" in done.reason
    assert "no model is configured" in done.reason


# capture, gold gate (rejected), gold gate, the exploit, the base commit, gold at the end
RUNS = 6


class Crash(Exception):
    pass


async def test_a_crashed_repair_resumes_without_repeating_a_run() -> None:
    store = InMemoryStateStore(RepairState)
    request = _request({"e1": ["fails_on_gold(1)", "good(2)"]})
    rule = world({"e1": {"good"}})
    calls = {"n": 0}

    def crashing(request: RunRequested):
        calls["n"] += 1
        if calls["n"] == 3:
            raise Crash
        return

    first = ScriptedSandbox([crashing, rule])
    with pytest.raises(Crash):
        await run_repair(request, first, None, store)
    second = ScriptedSandbox([rule])
    done = await run_repair(request, second, None, store)
    keys = [r.idempotency_key for r in first.requests[:2]]
    assert all(r.idempotency_key not in keys for r in second.requests)
    assert done.blocked and len(first.requests) - 1 + len(second.requests) == RUNS
    third = ScriptedSandbox([rule])
    assert await run_repair(request, third, None, store) == done and third.requests == []


async def test_a_public_call_is_tried_before_a_private_helper() -> None:
    sandbox = ScriptedSandbox([world({"e1": {"_helper", "public"}})])
    request = _request({"e1": ["_helper(1)", "public(2)"]})
    done = await run_repair(request, sandbox, None, InMemoryStateStore(RepairState))
    (only,) = done.tests
    assert only.accepted and "public(2)" in only.source
