"""Coverage runs on a real engine: the calc task's tests run under pytest, unittest and a
sympy-style `bin/test` with coverage.py brought by the run alone, and each line of `calc/ops.py`
is reported with the test functions that executed it — a test that calls `add` against the line
of `add`, a test that does not, not."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sandbox_calc import TaskImage, calc_task, sandbox_settings

from hackaudit.sandbox.adapters.coverage_kit import StaticCoverageKit
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.domain.added_modules import added_files_patch
from hackaudit.sandbox.domain.coverage_run import ANY_PYTHON, wheel_name
from hackaudit.sandbox.handlers import handle_run_requested
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import (
    Candidate,
    Coverage,
    CoverageResult,
    Grade,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Suite,
    Task,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "attacker"))
from tinysym import BIN_TEST

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

OPS = "calc/ops.py"
ADD_LINE = 5  # `return a - b` (gold: `a + b`)
MUL_LINE = 9  # `return a * b`
SYMPY_TESTS = """from calc.ops import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def measuring(
    tmp_path_factory: pytest.TempPathFactory,
    calc_image: TaskImage,
    coverage_wheels: dict[str, bytes],
) -> AsyncIterator[Runner]:
    settings = sandbox_settings(tmp_path_factory.mktemp("sandbox-coverage"))
    runner = bootstrap(settings, coverage_kit=StaticCoverageKit(coverage_wheels))
    await runner.start()
    yield runner
    await runner.close()


async def _measure(
    runner: Runner, task: Task, invocation: Coverage, test_patch: str | None = None
) -> tuple[RunResult, CoverageResult]:
    request = RunRequested(
        correlation_id="audit-coverage",
        task=task,
        purpose=RunPurpose.GOLD,
        candidate=Candidate.gold(task),
        invocation=invocation,
        test_patch=test_patch,
    )
    result = (await handle_run_requested(request, runner)).result
    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.resolved is None, "a coverage run grades nothing"
    assert result.coverage is not None, f"{result.reason}\n{result.log_tail}"
    return result, result.coverage


async def test_pytest_records_each_test_function_against_the_lines_it_ran(
    measuring: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image, test_command="python -m pytest -rA")
    result, coverage = await _measure(measuring, task, Coverage(files=(OPS,)))
    assert coverage.per_test
    add_tests = coverage.tests_of(OPS, ADD_LINE)
    assert "tests.test_ops.OpsTest.test_add" in add_tests
    assert "tests.test_ops.OpsTest.test_add_negative" in add_tests
    assert "tests.test_ops.OpsTest.test_mul" not in add_tests
    assert "tests.test_ops.OpsTest.test_mul" in coverage.tests_of(OPS, MUL_LINE)
    assert result.tests, "the runner's statuses are still read"


async def test_unittest_records_per_test_lines_and_keeps_only_the_lines_asked_for(
    measuring: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image, test_command="python -m unittest -v")
    invocation = Coverage(files=(OPS,), lines={OPS: (ADD_LINE,)})
    _, coverage = await _measure(measuring, task, invocation)
    assert set(coverage.files[OPS].executed) == {ADD_LINE}
    add_tests = coverage.tests_of(OPS, ADD_LINE)
    assert "tests.test_ops.OpsTest.test_add" in add_tests
    assert not any(name.endswith("test_mul") for name in add_tests)


def _sympy_style(calc_image: TaskImage) -> tuple[Task, str]:
    """The calc task run by a sympy-style `bin/test`, and the test patch that brings it."""
    runner = BIN_TEST.replace('os.walk("tinysym")', 'os.walk("calc")')
    tests = added_files_patch(
        {"bin/test": runner, "calc/tests/__init__.py": "", "calc/tests/test_fun.py": SYMPY_TESTS}
    )
    task = calc_task(calc_image, test_command="python bin/test -C --verbose", log_parser="sympy")
    return task, tests


async def test_a_sympy_style_runner_on_given_test_files_records_per_test_lines(
    measuring: Runner, calc_image: TaskImage
) -> None:
    task, tests = _sympy_style(calc_image)
    invocation = Coverage(files=(OPS,), tests=("calc/tests/test_fun.py",))
    result, coverage = await _measure(measuring, task, invocation, test_patch=tests)
    assert coverage.tests_of(OPS, ADD_LINE) == ("calc.tests.test_fun.test_add",)
    assert coverage.tests_of(OPS, MUL_LINE) == ("calc.tests.test_fun.test_mul",)
    assert set(result.tests) >= {"test_add", "test_mul"}


async def test_the_pure_python_wheel_serves_a_python_without_its_own(
    tmp_path_factory: pytest.TempPathFactory,
    calc_image: TaskImage,
    coverage_wheels: dict[str, bytes],
) -> None:
    pure = {wheel_name(ANY_PYTHON): coverage_wheels[wheel_name(ANY_PYTHON)]}
    runner = bootstrap(
        sandbox_settings(tmp_path_factory.mktemp("sandbox-pure")),
        coverage_kit=StaticCoverageKit(pure),
    )
    await runner.start()
    try:
        task = calc_task(calc_image, test_command="python -m pytest -rA")
        _, coverage = await _measure(runner, task, Coverage(files=(OPS,)))
        assert "tests.test_ops.OpsTest.test_add" in coverage.tests_of(OPS, ADD_LINE)
    finally:
        await runner.close()


async def test_a_graded_run_gets_no_coverage(measuring: Runner, calc_image: TaskImage) -> None:
    task = calc_task(calc_image, test_command="python -m pytest -rA")
    request = RunRequested(
        correlation_id="audit-coverage",
        task=task,
        purpose=RunPurpose.GOLD,
        invocation=Grade(),
    )
    result = (await handle_run_requested(request, measuring)).result
    assert result.resolved is True, result.reason
    assert result.coverage is None
    log = Path(result.log_artifact or "").read_text()
    assert "COVERAGE_PROCESS_START" not in log and "HACKAUDIT_COVERAGE" not in log


async def test_warm_containers_measure_too(
    tmp_path_factory: pytest.TempPathFactory,
    calc_image: TaskImage,
    coverage_wheels: dict[str, bytes],
) -> None:
    settings = sandbox_settings(
        tmp_path_factory.mktemp("sandbox-warm"), isolation="warm", max_concurrent_runs=1
    )
    runner = bootstrap(settings, coverage_kit=StaticCoverageKit(coverage_wheels))
    await runner.start()
    try:
        task = calc_task(calc_image, test_command="python -m pytest -rA")
        for _ in range(2):  # the second run reuses the container the first one left
            _, coverage = await _measure(runner, task, Coverage(files=(OPS,)))
            assert "tests.test_ops.OpsTest.test_add" in coverage.tests_of(OPS, ADD_LINE)
            assert "tests.test_ops.OpsTest.test_mul" not in coverage.tests_of(OPS, ADD_LINE)
    finally:
        await runner.close()


async def test_a_command_that_sets_pythonpath_itself_is_measured_through_the_user_site(
    measuring: Runner, calc_image: TaskImage
) -> None:
    # The image's own interpreter (no virtualenv: it reads user sites); the command's PYTHONPATH
    # replaces the one the coverage run exports.
    task = calc_task(calc_image, test_command="PYTHONPATH=. /usr/bin/python3 -m unittest -v")
    _, coverage = await _measure(measuring, task, Coverage(files=(OPS,)))
    assert "tests.test_ops.OpsTest.test_add" in coverage.tests_of(OPS, ADD_LINE)
    assert "tests.test_ops.OpsTest.test_mul" not in coverage.tests_of(OPS, ADD_LINE)


async def test_the_report_is_cut_down_in_the_container_and_brings_the_files_text(
    measuring: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image, test_command="python -m pytest -rA")
    invocation = Coverage(files=(OPS,), lines={OPS: (ADD_LINE, MUL_LINE)}, with_source=True)
    _, coverage = await _measure(measuring, task, invocation)
    assert set(coverage.files[OPS].executed) == {ADD_LINE, MUL_LINE}
    assert "tests.test_ops.OpsTest.test_add" in coverage.tests_of(OPS, ADD_LINE)
    text = coverage.sources[OPS]
    assert text.splitlines()[ADD_LINE - 1].strip() == "return a + b", "gold's file, as run"
    assert "def mul" in text and not coverage.cut
    plain = Coverage(files=(OPS,), lines={OPS: (ADD_LINE,)})
    _, without = await _measure(measuring, task, plain)
    assert without.sources == {} and set(without.files[OPS].executed) == {ADD_LINE}


async def test_a_wider_suite_is_measured_with_the_tests_its_runner_reported(
    measuring: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image, test_command="python -m pytest -rA")
    suite = Suite(dirs=("tests",))
    invocation = Coverage(files=(OPS,), with_source=True, suite=suite)
    result, coverage = await _measure(measuring, task, invocation)
    assert "tests.test_ops.OpsTest.test_add" in coverage.tests_of(OPS, ADD_LINE)
    assert "tests.test_ops.OpsTest.test_mul" not in coverage.tests_of(OPS, ADD_LINE)
    assert "tests/test_ops.py::OpsTest::test_add" in result.tests, "node ids to select from"
    assert OPS in coverage.sources


async def test_a_wider_suite_narrowed_by_keywords_measures_only_the_tests_named_so(
    measuring: Runner, calc_image: TaskImage
) -> None:
    task, tests = _sympy_style(calc_image)
    suite = Suite(dirs=("calc/tests",), keywords=("add",))
    invocation = Coverage(files=(OPS,), with_source=True, suite=suite)
    result, coverage = await _measure(measuring, task, invocation, test_patch=tests)
    assert coverage.tests_of(OPS, ADD_LINE) == ("calc.tests.test_fun.test_add",)
    assert coverage.tests_of(OPS, MUL_LINE) == (), "test_mul is not named after the word"
    assert set(result.tests) == {"test_add"}
