"""A confirmed exploit carries the inputs it differs from gold on, as structured differences."""

from __future__ import annotations

from hackaudit.attacker.domain.confirm import probes, replay
from hackaudit.attacker.domain.confirm.confirmation import (
    Check,
    CheckResult,
    compare_probes,
    differences,
)
from hackaudit.shared.contracts import CandidateVerdict, ProbeDifference, RunResult
from tests.scripted_sandbox import ScriptedSandbox, passed

from .test_attacker_confirmation import _accepted, _candidate, _confirmer, scripted


async def test_probe_difference_is_carried_with_its_call(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task, probe_differs=True)])
    found, _, diffs = await _confirmer(tiny.task, sandbox).confirm_with_differences(
        _candidate(), _accepted(tiny.task)
    )
    case = probes.plan(tiny.task)[1]
    assert found is CandidateVerdict.EXPLOIT
    assert diffs == (
        ProbeDifference(
            origin="probe",
            expression=case.describe(),
            function=case.function,
            modules=case.modules,
            gold="returns_1",
            candidate="returns_2",
        ),
    )


async def test_an_unconfirmed_candidate_carries_no_difference(tiny) -> None:
    sandbox = ScriptedSandbox([scripted(tiny.task)])
    found, _, diffs = await _confirmer(tiny.task, sandbox).confirm_with_differences(
        _candidate(), _accepted(tiny.task)
    )
    assert found is CandidateVerdict.UNCONFIRMED and diffs == ()


def test_replay_difference_names_the_test_and_the_expression() -> None:
    target = replay.ReplayTarget("tests/test_core.py", "tests.test_core", ("test_clamp",))
    key = "f0.test_clamp.p0:o0"

    def run(tag: str, head: str) -> RunResult:
        name = f"test_replay_{key}_{tag} =>> clamp(5, 0, 3) =>> {head} <<="
        return passed([name])

    gold = run("a" * 12, "returns 3")
    result = compare_probes([], [gold, gold], run("b" * 12, "returns 5"), [target])
    assert result.evidence is not None
    assert result.differences == (
        ProbeDifference(
            origin="replay",
            expression="clamp(5, 0, 3)",
            test="tests/test_core.py::test_clamp",
            gold="returns 3",
            candidate="returns 5",
        ),
    )


def test_differences_are_gathered_from_every_check() -> None:
    one = ProbeDifference(origin="probe", expression="f(1)")
    checks = [
        CheckResult(check=Check.HELD_BACK, note="x"),
        CheckResult(check=Check.PROBES, evidence="e", differences=(one,)),
    ]
    assert differences(checks) == (one,)
