"""A coverage run's report cannot be steered by the code it measures, on a real engine, in both
isolation modes.

The measured tests run the candidate's code as the run's own uid, and coverage.py's kit lies in
the run's directory, which that uid can write. Each test plants, at import of `calc/ops.py`,
code that rewrites coverage.py's reports once they are written (so that only `test_mul` is
said to run `add`'s line): in the kit itself (a `sitecustomize.py` on the kit's path), or as a
module of the standard library's name in `/testbed` (`optparse`, which coverage.py's command
line imports and the tests do not). The report must still name the tests that ran each line.
A run that replaces the kit's wheels gets no report, and is told why.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sandbox_calc import TaskImage, calc_task, files_candidate, ops_with, sandbox_settings

from hackaudit.sandbox.adapters.coverage_kit import StaticCoverageKit
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.handlers import handle_run_requested
from hackaudit.sandbox.runner import Runner
from hackaudit.shared.contracts import Coverage, RunPurpose, RunRequested, RunStatus

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.asyncio(loop_scope="module")]

OPS = "calc/ops.py"
ADD_TEST = "tests.test_ops.OpsTest.test_add"
MUL_TEST = "tests.test_ops.OpsTest.test_mul"

# At the exit of any process that loads it: every line of every report found is said to be run
# by test_mul alone (coverage.py's full JSON report, and the compact one the run sends back).
FORGE = f"""
import atexit as _atexit


def _forge():
    import json, os
    stage = os.environ.get("HACKAUDIT_COVERAGE", "/nonexistent")
    for name in ("coverage-full.json", "coverage.json"):
        path = os.path.join(stage, name)
        if not os.path.isfile(path):
            continue
        with open(path) as handle:
            report = json.load(handle)
        if report.get("format") == "hackaudit-coverage-1":
            report["tests"], report["sets"] = [{MUL_TEST!r}], [[0]]
            for data in report["files"].values():
                data["executed"] = {{line: 0 for line in data["executed"]}}
        else:
            for data in report.get("files", {{}}).values():
                lines = data.get("executed_lines", [])
                data["contexts"] = {{str(line): [{MUL_TEST!r}] for line in lines}}
        with open(path, "w") as handle:
            json.dump(report, handle)


_atexit.register(_forge)
"""

# A stand-in for the standard library's optparse: the real module's names, plus the forgery.
SHADOW = (
    FORGE
    + """
import importlib.machinery as _machinery
import importlib.util as _util
import os as _os
import sys as _sys

_here = _os.path.dirname(_os.path.abspath(__file__))
_path = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
_spec = _machinery.PathFinder.find_spec("optparse", _path)
_real = _util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})
"""
)

IN_KIT = f"""
import os as _os
_stage = _os.environ.get("HACKAUDIT_COVERAGE")
if _stage:
    with open(_os.path.join(_stage, "coverage-lib", "sitecustomize.py"), "w") as _f:
        _f.write({FORGE!r})
"""

IN_TESTBED = f"""
with open("/testbed/optparse.py", "w") as _f:
    _f.write({SHADOW!r})
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=["container", "warm"])
async def measuring(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    calc_image: TaskImage,
    coverage_wheels: dict[str, bytes],
) -> AsyncIterator[Runner]:
    mode = str(request.param)
    settings = sandbox_settings(
        tmp_path_factory.mktemp(f"sandbox-coverage-hostile-{mode}"),
        isolation=mode,
        max_concurrent_runs=1,
    )
    runner = bootstrap(settings, coverage_kit=StaticCoverageKit(coverage_wheels))
    await runner.start()
    yield runner
    await runner.close()


@pytest.mark.parametrize("plant", [IN_KIT, IN_TESTBED], ids=["sitecustomize-in-kit", "shadow"])
async def test_code_planted_by_the_measured_tests_does_not_forge_the_report(
    measuring: Runner, calc_image: TaskImage, plant: str
) -> None:
    task = calc_task(calc_image, test_command="python -m pytest -rA")
    ops = ops_with(plant, fixed=True)
    add_line = 1 + str(ops[OPS]).splitlines().index("    return a + b")
    request = RunRequested(
        correlation_id="audit-coverage-hostile",
        task=task,
        purpose=RunPurpose.GOLD,
        candidate=files_candidate(ops),
        invocation=Coverage(files=(OPS,)),
    )
    result = (await handle_run_requested(request, measuring)).result

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.coverage is not None, f"{result.reason}\n{result.log_tail}"
    add_tests = result.coverage.tests_of(OPS, add_line)
    assert ADD_TEST in add_tests, f"the report was forged: {add_tests}"
    assert MUL_TEST not in add_tests


REPLACE_WHEELS = """
import glob as _glob, os as _os
_stage = _os.environ.get("HACKAUDIT_COVERAGE", "/nonexistent")
for _wheel in _glob.glob(_os.path.join(_stage, "*.whl")):
    with open(_wheel, "wb") as _f:
        _f.write(b"not coverage.py")
"""


async def test_a_wheel_replaced_during_the_run_gives_no_report_and_says_so(
    measuring: Runner, calc_image: TaskImage
) -> None:
    task = calc_task(calc_image, test_command="python -m pytest -rA")
    request = RunRequested(
        correlation_id="audit-coverage-hostile",
        task=task,
        purpose=RunPurpose.GOLD,
        candidate=files_candidate(ops_with(REPLACE_WHEELS, fixed=True)),
        invocation=Coverage(files=(OPS,)),
    )
    result = (await handle_run_requested(request, measuring)).result

    assert result.status is RunStatus.COMPLETED, result.reason
    assert result.coverage is None
    assert "wheel was changed during the run" in result.reason
