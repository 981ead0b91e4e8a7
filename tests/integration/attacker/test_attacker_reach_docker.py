"""Probes aimed at gold's lines no graded test executes, on the real engine (the `tinysym` image:
Python 3.9, sympy-style `bin/test`, no pytest): gold adds a printer with one method per type and
an `upper` setting honoured by two of them; the graded tests check the setting on a symbol only.
A fix that leaves the setting out of the other method passes them, and no other probe tells. The
reach probe keeps the values the repository's tests give that method and makes the graded call
`pstr(..., upper=True)` with them: the exploit is confirmed with that call and both outputs,
while gold itself (a fix equal to it) is not."""

from __future__ import annotations

import pytest
from tinysym import CORE, TEST_CORE, diff

from hackaudit.attacker.domain.confirm.confirmation import ConfirmationConfig, SuiteScope
from hackaudit.attacker.domain.confirm.coverage_map import GOLD_RUN_KEY
from hackaudit.attacker.service_layer.confirm import Confirmer
from hackaudit.shared.contracts import (
    Candidate,
    CandidateVerdict,
    CoverageResult,
    FileCoverage,
    Probe,
    Provenance,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
)

pytestmark = [pytest.mark.integration, pytest.mark.docker]

PRINTER = """

class StrPrinter(object):
    def __init__(self, upper=False):
        self.upper = upper

    def doprint(self, obj):
        return getattr(self, "_print_" + type(obj).__name__)(obj)

    def _print_Sym(self, sym):
        if self.upper:
            return sym.name.upper()
        return sym.name

    def _print_Applied(self, applied):
        name = applied.pred.name
        if self.upper:
            name = name.upper()
        return "Q.%s(%s)" % (name, self.doprint(applied.arg))


def pstr(obj, **settings):
    return StrPrinter(**settings).doprint(obj)
"""
GOLD = CORE + PRINTER
PARTIAL = CORE + PRINTER.replace("        if self.upper:\n            name = name.upper()\n", "")
TESTS = (
    TEST_CORE.replace("import Q, Sym, sstr", "import Q, Sym, pstr, sstr")
    + """

def test_print_applied():
    assert pstr(Q.positive(Sym("x"))) == "Q.positive(x)"


def test_print_upper():
    assert pstr(Sym("x"), upper=True) == "X"
"""
)
GRADED = ("test_print_applied", "test_print_upper")
UNEXECUTED = GOLD.splitlines().index("            name = name.upper()") + 1


def _task(image: tuple[str, str]) -> Task:
    tag, commit = image
    return Task.model_validate(
        {"instance_id": "tinysym__tinysym-reach", "repo": "example/tinysym",
         "base_commit": commit, "patch": diff({"tinysym/core.py": GOLD}),
         "test_patch": diff({"tinysym/tests/test_core.py": TESTS}),
         "FAIL_TO_PASS": list(GRADED), "PASS_TO_PASS": ["test_symbol"], "image": tag,
         "test_command": "bin/test -C --verbose", "log_parser": "sympy"}
    )  # fmt: skip


def _gold_coverage() -> RunResult:
    """Gold's coverage run of the graded tests as the sandbox reports it: every line of the
    printer executed but the `upper` branch of `_print_Applied`."""
    start = len(CORE.splitlines()) + 1
    lines = range(start, len(GOLD.splitlines()) + 1)
    executed = {n: (0,) for n in lines if n != UNEXECUTED and GOLD.splitlines()[n - 1].strip()}
    measured = FileCoverage(executed=executed, missing=(UNEXECUTED,))
    coverage = CoverageResult(
        tests=tuple(f"tinysym.tests.test_core.{t}" for t in GRADED),
        files={"tinysym/core.py": measured},
        per_test=True,
    )
    return RunResult(status=RunStatus.COMPLETED, coverage=coverage, duration_s=1.0)


async def _confirm(sandbox, task: Task, candidate_diff: str) -> tuple[CandidateVerdict, str]:
    candidate = Candidate(
        instance_id=task.instance_id,
        diff=candidate_diff,
        provenance=Provenance(strategy="partial_fix", detail="a fix under test"),
    )
    request = RunRequested(
        correlation_id=f"audit-{task.instance_id}", task=task,
        purpose=RunPurpose.CANDIDATE, candidate=candidate, requested_by="attacker",
    )  # fmt: skip
    graded = await sandbox.run(request)
    result = graded.result
    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is True, result.tests  # the task's own tests accept it
    config = ConfirmationConfig(probe_timeout_s=150.0, suite_scope=SuiteScope.OFF)
    confirmer = Confirmer(
        sandbox, config, task, f"audit-{task.instance_id}",
        {GOLD_RUN_KEY: (_gold_coverage(),)}, gold_repeats=3,
    )  # fmt: skip
    return await confirmer.confirm(candidate, result)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_fix_leaving_out_an_unexecuted_method_is_confirmed_by_a_reaching_call(
    tinysym_image, sandbox
) -> None:
    task = _task(tinysym_image)
    verdict, evidence = await _confirm(sandbox, task, diff({"tinysym/core.py": PARTIAL}))
    assert verdict is CandidateVerdict.EXPLOIT, evidence
    assert "calls reaching gold's lines no graded test runs" in evidence
    assert f"tinysym/core.py:{UNEXECUTED}" in evidence
    assert (
        "`pstr(positive(x), upper=True)`: gold returns 'Q.POSITIVE(X)',"
        " candidate returns 'Q.positive(X)'"
    ) in evidence
    probe = next(r.invocation for r in sandbox.requests if isinstance(r.invocation, Probe))
    assert "REACH_TARGETS" in probe.files["test_hackaudit_probe.py"]


@pytest.mark.asyncio(loop_scope="module")
async def test_gold_itself_is_not_confirmed(tinysym_image, sandbox) -> None:
    task = _task(tinysym_image)
    verdict, evidence = await _confirm(sandbox, task, diff({"tinysym/core.py": GOLD}))
    assert verdict is CandidateVerdict.UNCONFIRMED, evidence
    assert "calls reaching gold's lines no graded test runs" in evidence
    assert "agree with gold" in evidence
