"""The gates' classification of a proposed test, table by table."""

from __future__ import annotations

import pytest

from hackaudit.repairer.domain import gates
from hackaudit.shared.contracts import GateReason, RunResult, RunStatus, TestStatus

P, F, E = TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR
NEW = "test_x_matches_reference_abc"
NEW_ID = f"tests/test_a.py::T::{NEW}"


def run(
    new: TestStatus | None = P, resolved: bool = True, log: str = "", **kw: object
) -> RunResult:
    tests = {"tests/test_a.py::T::test_old": P}
    if new is not None:
        tests[NEW_ID] = new
    return RunResult(
        status=kw.get("status", RunStatus.COMPLETED),  # type: ignore[arg-type]
        resolved=resolved, tests=tests, log_tail=log, duration_s=3.0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("runs", "reason"),
    [
        ([run(), run(), run()], None),
        ([run(), run(F), run()], GateReason.FLAKY),
        ([run(F), run(F), run(F)], GateReason.FAILS_ON_GOLD),
        ([run(resolved=False)] * 3, GateReason.FAILS_ON_GOLD),  # breaks the task's own tests
        ([run(status=RunStatus.TIMEOUT)] * 3, GateReason.TIMEOUT),
        ([run(None, log="E   SyntaxError: invalid syntax")] * 3, GateReason.SYNTAX),
        ([run(None, log="ModuleNotFoundError: No module named 'x'")] * 3, GateReason.IMPORT_ERROR),
        ([run(None, log="collected 1 item")] * 3, GateReason.NOT_COLLECTED),
        ([run(E, log="ImportError: cannot import name 'f'")] * 3, GateReason.IMPORT_ERROR),
        ([run(status=RunStatus.INFRA_ERROR)], GateReason.FAILS_ON_GOLD),
        ([], GateReason.FAILS_ON_GOLD),
    ],
)
def test_gold_gate(runs: list[RunResult], reason: GateReason | None) -> None:
    verdict = gates.gold_gate(NEW, runs)
    assert verdict.rejection is reason, verdict.detail
    if reason is None:
        assert verdict.test_ids == (NEW_ID,)


def test_ids_of_a_parametrised_test_and_not_of_a_longer_name() -> None:
    result = RunResult(
        status=RunStatus.COMPLETED,
        tests={f"t.py::{NEW}[1]": P, f"t.py::{NEW}[2]": P, f"t.py::{NEW}_2": P},
    )
    assert gates.ids_of(NEW, result) == (f"t.py::{NEW}[1]", f"t.py::{NEW}[2]")


@pytest.mark.parametrize(
    ("name", "source", "file", "reason"),
    [
        ("test_a", "def test_a():\n    assert 1\n", "t.py", None),
        ("test_a", "def test_a(:\n", "t.py", GateReason.SYNTAX),
        ("check_a", "def check_a():\n    assert 1\n", "t.py", GateReason.NOT_COLLECTED),
        ("test_a", "def test_a():\n    assert 1\n", "other.py", GateReason.NOT_COLLECTED),
    ],
)
def test_static_gate(name: str, source: str, file: str, reason: GateReason | None) -> None:
    assert gates.static(name, source, file, ["t.py"]).rejection is reason


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        (run(F, resolved=False), None),
        (run(P, resolved=True), GateReason.DOES_NOT_BLOCK),
        (run(status=RunStatus.TIMEOUT, resolved=False), GateReason.TIMEOUT),
    ],
)
def test_blocking_check_is_execution(result: RunResult, reason: GateReason | None) -> None:
    assert gates.blocks(result).rejection is reason


def test_do_no_harm() -> None:
    assert gates.harmless("v1", run()).passed
    harm = gates.harmless("v1", run(F, resolved=False))
    assert harm.rejection is GateReason.REJECTS_CORRECT and NEW_ID in harm.detail
