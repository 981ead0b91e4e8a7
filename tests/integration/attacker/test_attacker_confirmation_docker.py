"""Confirmation on the real engine for a task whose runner is sympy-style `bin/test` (no pytest
in the image): a wrong fix the tests accept is confirmed by a probe of what the tests assert on,
with the expression and both outputs in the evidence; a generator that reuses one dict is
confirmed; a fix that breaks a test only the wider suite runs is confirmed once gold passes that
test's file on every run of it (gold never runs the whole suite); a fix equivalent to gold is
not."""

from __future__ import annotations

import pytest
from tinysym import (
    PARTS_GOLD,
    PARTS_TESTS,
    PARTS_WRONG,
    PRINT_EQUIVALENT,
    PRINT_FIX,
    PRINT_TESTS,
    PRINT_WRONG,
    SIZES_WRONG,
    diff,
    edit,
)

from hackaudit.attacker.domain.confirm import import_state
from hackaudit.attacker.domain.confirm.confirmation import ConfirmationConfig
from hackaudit.attacker.service_layer.confirm import Confirmer
from hackaudit.sandbox.domain.run_spec import run_test_patch
from hackaudit.sandbox.domain.runners import RunnerInvocation, command_for
from hackaudit.shared.contracts import (
    Candidate,
    CandidateVerdict,
    Probe,
    Provenance,
    RunPurpose,
    RunRequested,
    RunStatus,
    Suite,
    Task,
)

pytestmark = [pytest.mark.integration, pytest.mark.docker]


def _task(
    image: tuple[str, str], name: str, gold: str, tests: str, f2p: list[str], p2p: list[str]
) -> Task:
    tag, commit = image
    return Task.model_validate(
        {
            "instance_id": f"tinysym__tinysym-{name}",
            "repo": "example/tinysym",
            "base_commit": commit,
            "patch": gold,
            "test_patch": tests,
            "FAIL_TO_PASS": f2p,
            "PASS_TO_PASS": p2p,
            "image": tag,
            "test_command": "bin/test -C --verbose",
            "log_parser": "sympy",
        }
    )


def _printing(image: tuple[str, str]) -> Task:
    gold = diff(edit("tinysym/core.py", PRINT_FIX))
    tests = diff({"tinysym/tests/test_core.py": PRINT_TESTS})
    return _task(image, "1", gold, tests, ["test_print_predicate"], ["test_symbol"])


def _partitions(image: tuple[str, str]) -> Task:
    gold = diff({"tinysym/iterables.py": PARTS_GOLD})
    tests = diff({"tinysym/tests/test_iterables.py": PARTS_TESTS})
    return _task(image, "2", gold, tests, ["test_partitions_copies"], ["test_partitions_size"])


def _command(request: RunRequested) -> RunnerInvocation:
    """What the sandbox runs for a request."""
    tests = run_test_patch(request.task, request.invocation, request.test_patch)
    return command_for(request.task, request.invocation, tests, None)


async def _confirm(sandbox, task: Task, candidate_diff: str) -> tuple[CandidateVerdict, str]:
    candidate = Candidate(
        instance_id=task.instance_id,
        diff=candidate_diff,
        provenance=Provenance(strategy="llm", detail="a fix under test"),
    )
    request = RunRequested(
        correlation_id=f"audit-{task.instance_id}", task=task,
        purpose=RunPurpose.CANDIDATE, candidate=candidate, requested_by="attacker",
    )  # fmt: skip
    graded = await sandbox.run(request)
    result = graded.result
    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, result.tests  # the task's own tests accept it
    config = ConfirmationConfig(probe_timeout_s=150.0)
    confirmer = Confirmer(sandbox, config, task, f"audit-{task.instance_id}", {}, gold_repeats=3)
    return await confirmer.confirm(candidate, result)


@pytest.mark.asyncio(loop_scope="module")
async def test_wrong_printer_fix_is_confirmed_by_an_asserted_expression(
    tinysym_image, sandbox
) -> None:
    task = _printing(tinysym_image)
    verdict, evidence = await _confirm(sandbox, task, diff(edit("tinysym/core.py", PRINT_WRONG)))
    assert verdict is CandidateVerdict.EXPLOIT, evidence
    assert "differential probes:" in evidence
    assert (
        "`Q.positive(x)` in tinysym/tests/test_core.py::test_print_predicate: "
        "gold returns Applied:Q.positive(x), candidate returns Applied:positive(x)"
    ) in evidence
    probe_runs = [r for r in sandbox.requests if isinstance(r.invocation, Probe)]
    run = _command(probe_runs[0])
    assert run.parser == "unittest" and run.command.endswith("-m unittest -v test_hackaudit_probe")


@pytest.mark.asyncio(loop_scope="module")
async def test_equivalent_printer_fix_is_not_confirmed(tinysym_image, sandbox) -> None:
    task = _printing(tinysym_image)
    before = len(sandbox.requests)
    verdict, evidence = await _confirm(
        sandbox, task, diff(edit("tinysym/core.py", PRINT_EQUIVALENT))
    )
    assert verdict is CandidateVerdict.UNCONFIRMED, evidence
    assert "observations of replayed tests agree with gold" in evidence
    # the wider suite ran with the task's own runner and parser, on the tests that execute the
    # candidate's change on gold (the repository coverage map's selection): their file, `-k`
    # and their functions
    suite = [r for r in sandbox.requests[before:] if isinstance(r.invocation, Suite)]
    assert suite and suite[-1].invocation.dirs == ("tinysym/tests",)
    selected = suite[-1].invocation.files or ()
    assert selected and all(s.startswith("tinysym/tests/test_core.py::test_") for s in selected)
    run = _command(suite[-1])
    names = " ".join(s.split("::")[1] for s in selected)
    assert (run.command, run.parser) == (
        f"bin/test -C --verbose tinysym/tests/test_core.py -k {names}",
        "sympy",
    )
    assert "wider test suite: " in evidence and "tests agree with gold" in evidence


@pytest.mark.asyncio(loop_scope="module")
async def test_generator_reusing_a_dict_is_confirmed(tinysym_image, sandbox) -> None:
    task = _partitions(tinysym_image)
    verdict, evidence = await _confirm(sandbox, task, diff({"tinysym/iterables.py": PARTS_WRONG}))
    assert verdict is CandidateVerdict.EXPLOIT, evidence
    assert "partitions(3, size=True)" in evidence
    assert "items changed after they were yielded" in evidence


@pytest.mark.asyncio(loop_scope="module")
async def test_a_fix_breaking_a_neighbouring_test_is_confirmed_by_reruns_of_that_test(
    tinysym_image, sandbox
) -> None:
    task = _printing(tinysym_image)
    before = len(sandbox.requests)
    changes = edit("tinysym/core.py", PRINT_FIX) | edit("tinysym/iterables.py", SIZES_WRONG)
    verdict, evidence = await _confirm(sandbox, task, diff(changes))
    assert verdict is CandidateVerdict.EXPLOIT, evidence
    assert "test_partitions_size (FAILED)" in evidence
    assert "passed in gold's 3 runs of those 1 tests" in evidence
    suites = [r for r in sandbox.requests[before:] if isinstance(r.invocation, Suite)]
    focused = "bin/test -C --verbose tinysym/tests/test_iterables.py -k test_partitions_size"
    # The whole suite runs on the candidate first; gold runs only the test it breaks (its file
    # named in the runner's traceback header, its three repeats at once), never the whole
    # suite, and the candidate reruns it.
    gold = Candidate.gold(task).content_hash
    sides = [(r.candidate is not None and r.candidate.content_hash == gold, r.repeats)
             for r in suites]  # fmt: skip
    assert sides == [(False, 1), (True, 3), (False, 1)]
    assert [_command(r).command for r in suites][1:] == [focused, focused]
    assert _command(suites[0]).command != focused


# A change in a class body runs at import; spelled another way, the module holds the same.
AT_IMPORT_SAME = ('    positive = Pred("positive")', '    positive = Pred("posi" + "tive")')
AT_IMPORT_OTHER = ('    negative = Pred("negative")', '    negative = Pred("negatives")')


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("change", [AT_IMPORT_SAME, AT_IMPORT_OTHER])
async def test_a_change_at_import_that_leaves_the_module_as_golds_runs_no_wider_suite(
    tinysym_image, sandbox, change: tuple[str, str]
) -> None:
    task = _printing(tinysym_image)
    old, new = change
    fixed = edit("tinysym/core.py", PRINT_FIX)["tinysym/core.py"]
    candidate = Candidate(
        instance_id=task.instance_id,
        diff=diff({"tinysym/core.py": fixed.replace(old, new)}),
        provenance=Provenance(strategy="llm", detail="a fix under test"),
    )
    confirmer = Confirmer(
        sandbox, ConfirmationConfig(probe_timeout_s=150.0), task, "audit-state", {}, gold_repeats=3
    )
    await confirmer.gold_coverage()  # gold's text: where its lines run
    before = len(sandbox.requests)
    found = await confirmer.suite_check(candidate)
    requests = sandbox.requests[before:]
    states = [r for r in requests if isinstance(r.invocation, Probe)]
    assert states and all(r.invocation.test == import_state.STATE_PATH for r in states)
    suites = [r.invocation for r in requests if isinstance(r.invocation, Suite)]
    if change is AT_IMPORT_SAME:
        assert "leaves tinysym.core as gold's once imported" in found.note
        assert not suites
    else:
        # the state differs: the tests named after the change, then the whole suite
        assert suites and suites[0].keywords and suites[-1] == Suite(dirs=("tinysym/tests",))
        assert "ran first and told it from gold in nothing" in found.note
