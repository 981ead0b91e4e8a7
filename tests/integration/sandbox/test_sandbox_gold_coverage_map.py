"""The attacker's coverage step on the real engine: for the calc task (pytest runner), gold's
coverage run of the graded tests records the line gold changes in `calc/ops.py` as executed by
a named graded test, and the run is kept with gold's runs (asked again, it is not run again)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sandbox_calc import TaskImage, calc_task, sandbox_settings

from hackaudit.attacker.domain.confirm import coverage_map
from hackaudit.attacker.domain.confirm.confirmation import ConfirmationConfig
from hackaudit.attacker.service_layer.confirm import Confirmer
from hackaudit.sandbox.adapters.coverage_kit import StaticCoverageKit
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import Coverage, RunCompleted, RunPurpose, RunRequested

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]


class _Sandbox:
    """The attacker's sandbox port served by the sandbox's runner, in process."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.requests: list[RunRequested] = []

    async def run(self, request: RunRequested) -> RunCompleted:
        self.requests.append(request)
        return await self.runner.complete(request)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def measuring(
    tmp_path_factory: pytest.TempPathFactory, coverage_wheels: dict[str, bytes]
) -> AsyncIterator[_Sandbox]:
    settings = sandbox_settings(tmp_path_factory.mktemp("sandbox-gold-coverage"))
    runner = bootstrap(settings, coverage_kit=StaticCoverageKit(coverage_wheels))
    await runner.start()
    yield _Sandbox(runner)
    await runner.close()


async def test_gold_coverage_names_the_graded_test_that_runs_the_changed_line(
    calc_image: TaskImage, measuring: _Sandbox
) -> None:
    task = calc_task(calc_image, test_command="python -m pytest -rA")
    config = ConfirmationConfig(probe_timeout_s=150.0)
    confirmer = Confirmer(measuring, config, task, "audit-coverage", {}, gold_repeats=1)
    await confirmer.gold_coverage()
    (request,) = measuring.requests
    assert request.purpose is RunPurpose.PROBE and isinstance(request.invocation, Coverage)
    assert request.invocation.files == ("calc/ops.py",) and request.invocation.tests is None
    found = coverage_map.of_gold(task.gold_diff.applied(), confirmer.gold_runs)
    assert found.measured, found.reason
    assert found.changed_lines >= 1 and found.executed_lines >= 1, found
    named = {t for h in found.hunks for tests in h.executed.values() for t in tests if t}
    assert any("test_add" in t for t in named), found
    await confirmer.gold_coverage()  # kept with gold's runs: not run again
    assert len(measuring.requests) == 1
