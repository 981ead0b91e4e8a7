"""Coverage runs without Docker: the rcfile and the command a `Coverage` invocation gets, the
files it sends, how coverage.py's JSON report becomes a `CoverageResult`, and a run through the
runner with the fake backend — measured, never graded."""

from __future__ import annotations

import configparser
import hashlib
import json
import subprocess
from typing import Any

import pytest

from hackaudit.sandbox.adapters.coverage_kit import (
    CoverageKitMissing,
    StaticCoverageKit,
    WheelhouseCoverageKit,
)
from hackaudit.sandbox.adapters.fake_backend import FakeBackend, FakeOutcome, FakeRun
from hackaudit.sandbox.adapters.timing_store import MemoryTimingStore
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.domain import coverage_run
from hackaudit.sandbox.domain.coverage_run import UnreadableReport, rcfile, wanted
from hackaudit.sandbox.domain.coverage_run import read_report as read_compact
from hackaudit.sandbox.domain.programs import coverage_compact_program as program
from hackaudit.sandbox.domain.protocol import decode_payload
from hackaudit.sandbox.domain.run_spec import RunOptions, RunSpec, prepare_run
from hackaudit.sandbox.domain.runners import command_for
from hackaudit.sandbox.handlers import handle_run_requested
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared.contracts import (
    Candidate,
    Coverage,
    CoverageResult,
    FileCoverage,
    Grade,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Suite,
    Task,
)

TESTS = (
    "diff --git a/tests/test_m.py b/tests/test_m.py\n--- a/tests/test_m.py\n+++ b/tests/test_m.py\n"
    "@@ -1 +1,2 @@\n x\n+y\n"
)
GOLD = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-bug\n+fix\n"
KIT = {"coverage-3.11.whl": b"cp311", "coverage-any.whl": b"pure"}
ADD = "tests.test_m.T.test_add"
MUL = "tests.test_m.T.test_mul"


def _task(**fields: Any) -> Task:
    base: dict[str, Any] = {
        "instance_id": "m__m-1",
        "repo": "example/m",
        "base_commit": "abc123",
        "patch": GOLD,
        "test_patch": TESTS,
        "FAIL_TO_PASS": ["tests/test_m.py::test_add"],
        "image": "example/m:1",
    }
    return Task.model_validate(base | fields)


def _report(files: dict[str, dict[str, Any]]) -> str:
    return json.dumps({"meta": {"version": "7.10.7", "show_contexts": True}, "files": files})


def _compact(full: str, invocation: Coverage, sources: dict[str, bytes] | None = None) -> str:
    """The compact report the in-container program makes of coverage.py's full one."""
    found = sources or {}
    return json.dumps(program.compact(json.loads(full), wanted(invocation), found.get))


def read_report(full: str, invocation: Coverage) -> CoverageResult:
    """coverage.py's full report as the run reads it: compacted in the container, then read."""
    return read_compact(_compact(full, invocation), invocation)


REPORT = _report(
    {
        "m.py": {
            "executed_lines": [1, 2, 5, 9],
            "missing_lines": [12],
            "contexts": {"1": [""], "2": [""], "5": [ADD, ADD], "9": [MUL, ADD]},
        },
        "other.py": {"executed_lines": [1], "missing_lines": [], "contexts": {"1": [""]}},
    }
)


# --- configuration and command ----------------------------------------------------------------


def test_the_rcfile_measures_only_the_files_of_interest_per_test_function() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(rcfile(Coverage(files=("pkg/a.py", "b.py"))))
    run = parser["run"]
    assert run["include"].split() == ["/testbed/pkg/a.py", "/testbed/b.py"]
    assert run["plugins"] == coverage_run.CONTEXTS, "test functions name contexts (the plugin)"
    assert "dynamic_context" not in run
    assert run["parallel"] == "True"
    assert run["data_file"].startswith("${HACKAUDIT_COVERAGE}/")


def test_coverage_of_the_graded_tests_runs_the_graded_command_behind_coverage_set_up() -> None:
    runner = command_for(_task(), Coverage(files=("m.py",)), TESTS, "/tmp/r.xml")
    graded = command_for(_task(), Grade(), TESTS, "/tmp/r.xml")
    assert runner.command == graded.command.replace(" --junitxml=/tmp/r.xml", "")
    assert runner.junit_path is None and runner.parser == "pytest"
    script = runner.shell()
    assert "export COVERAGE_PROCESS_START=" in script
    assert script.index("COVERAGE_PROCESS_START") < script.index(runner.command)
    assert "COVERAGE" not in graded.shell()


@pytest.mark.parametrize(
    ("fields", "tests", "directives"),
    [
        (
            {},
            ("tests/test_x.py", "tests/test_y.py::test_a"),
            ("tests/test_x.py", "tests/test_y.py::test_a"),
        ),
        (
            {"test_command": "python -m unittest -v", "log_parser": "unittest"},
            ("tests/test_x.py", "tests.test_y.T.test_a"),
            ("tests.test_x", "tests.test_y.T.test_a"),
        ),
        (
            {"repo": "sympy/sympy", "version": "1.1"},
            ("sympy/core/tests/test_basic.py",),
            ("sympy/core/tests/test_basic.py",),
        ),
    ],
)
def test_given_tests_replace_the_graded_ones_in_the_runners_form(
    fields: dict[str, Any], tests: tuple[str, ...], directives: tuple[str, ...]
) -> None:
    runner = command_for(_task(**fields), Coverage(files=("m.py",), tests=tests), TESTS, None)
    assert runner.directives == directives
    assert "tests/test_m.py" not in runner.command and "tests.test_m" not in runner.command


def test_a_coverage_run_sends_its_rcfile_script_and_wheels_and_is_marked_measured() -> None:
    spec = prepare_run(
        _task(),
        Candidate.gold(_task()),
        run_id="r",
        timeout_s=10,
        options=RunOptions(),
        invocation=Coverage(files=("m.py",)),
        coverage_kit=KIT,
    )
    assert isinstance(spec, RunSpec) and spec.measure == Coverage(files=("m.py",))
    _, files = decode_payload(spec.plan.stdin)
    sent = {"coverage.rc", "sitecustomize.py", "hackaudit_coverage_start.py", *KIT}
    assert sent | {"hackaudit-coverage.pth", "coverage-report.sh"} <= set(files)
    assert files["coverage-3.11.whl"] == b"cp311"
    assert b"--show-contexts" in files["coverage-report.sh"]


def test_a_coverage_run_without_wheels_is_refused_as_an_infrastructure_error() -> None:
    refused = prepare_run(
        _task(),
        Candidate.gold(_task()),
        run_id="r",
        timeout_s=10,
        options=RunOptions(),
        invocation=Coverage(files=("m.py",)),
    )
    assert isinstance(refused, RunResult) and refused.status is RunStatus.INFRA_ERROR


# --- reading the report -----------------------------------------------------------------------


def test_the_report_becomes_lines_with_the_tests_that_ran_them() -> None:
    result = read_report(REPORT, Coverage(files=("m.py",)))
    assert result.per_test and result.coverage_version == "7.10.7"
    assert set(result.files) == {"m.py"}
    assert result.tests_of("m.py", 5) == (ADD,)
    assert set(result.tests_of("m.py", 9)) == {ADD, MUL}
    assert result.tests_of("m.py", 1) == ("",)
    assert result.tests_of("m.py", 12) == ()
    assert result.files["m.py"].missing == (12,)
    assert len(result.tests) == len(set(result.tests)) == 3


@pytest.mark.parametrize(
    ("invocation", "executed", "missing"),
    [
        (Coverage(files=("m.py",), lines={"m.py": (5, 12, 40)}), {5}, (12,)),
        (Coverage(files=("/testbed/m.py",)), {1, 2, 5, 9}, (12,)),
        (Coverage(files=("m.py",), lines={"m.py": ()}), set(), ()),
    ],
)
def test_only_the_lines_of_interest_are_kept(
    invocation: Coverage, executed: set[int], missing: tuple[int, ...]
) -> None:
    result = read_report(REPORT, invocation)
    (measured,) = result.files.values()
    assert set(measured.executed) == executed and measured.missing == missing


def test_absolute_paths_in_the_report_are_read_as_repository_paths() -> None:
    report = _report({"/testbed/m.py": {"executed_lines": [3], "contexts": {"3": [ADD]}}})
    assert read_report(report, Coverage(files=("m.py",))).tests_of("m.py", 3) == (ADD,)


def test_a_run_without_test_functions_is_not_per_test_and_an_unimported_file_is_absent() -> None:
    report = _report({"m.py": {"executed_lines": [1], "contexts": {"1": [""]}}})
    result = read_report(report, Coverage(files=("m.py", "never.py")))
    assert not result.per_test and set(result.files) == {"m.py"}


COMPACT = _compact(REPORT, Coverage(files=("m.py",)))


@pytest.mark.parametrize(
    "text", ["", "{", '{"files": 3}', "[]", REPORT, COMPACT[: len(COMPACT) // 2]]
)
def test_a_report_cut_short_not_json_or_not_compacted_is_unreadable(text: str) -> None:
    with pytest.raises(UnreadableReport):
        read_compact(text, Coverage(files=("m.py",)))


def test_the_result_round_trips_through_json() -> None:
    result = CoverageResult(
        tests=("", ADD), files={"m.py": FileCoverage(executed={5: (1,), 1: (0,)})}, per_test=True
    )
    assert CoverageResult.model_validate_json(result.model_dump_json()) == result


# --- through the runner -----------------------------------------------------------------------


def _runner(respond: Any, kit: Any = None) -> tuple[Any, FakeBackend]:
    backend = FakeBackend(respond=respond)
    runner = bootstrap(
        SandboxSettings(), backend=backend, timings=MemoryTimingStore(), coverage_kit=kit
    )
    return runner, backend


def _request(invocation: Any) -> RunRequested:
    task = _task()
    return RunRequested(
        correlation_id="audit-1", task=task, purpose=RunPurpose.GOLD, invocation=invocation
    )


async def test_a_coverage_run_is_measured_and_never_graded() -> None:
    output = "PASSED tests/test_m.py::test_add\n"
    runner, backend = _runner(
        lambda run: FakeOutcome(runner_output=output, coverage=COMPACT), StaticCoverageKit(KIT)
    )
    done = await handle_run_requested(_request(Coverage(files=("m.py",))), runner)
    result = done.result
    assert result.status is RunStatus.COMPLETED and result.resolved is None
    assert result.coverage is not None and result.coverage.tests_of("m.py", 5) == (ADD,)
    assert backend.runs[0].files["coverage-any.whl"] == b"pure"


async def test_a_coverage_run_whose_report_failed_says_why() -> None:
    def respond(run: FakeRun) -> FakeOutcome:
        return FakeOutcome(coverage_failed="No data to report.")

    runner, _ = _runner(respond, StaticCoverageKit(KIT))
    result = (await handle_run_requested(_request(Coverage(files=("m.py",))), runner)).result
    assert result.coverage is None and result.resolved is None
    assert "No data to report." in result.reason


async def test_a_coverage_run_whose_processes_outlive_the_kill_has_no_report_and_says_so() -> None:
    def respond(run: FakeRun) -> FakeOutcome:
        return FakeOutcome(coverage=COMPACT, processes_left=True)

    runner, _ = _runner(respond, StaticCoverageKit(KIT))
    result = (await handle_run_requested(_request(Coverage(files=("m.py",))), runner)).result
    assert result.coverage is None and result.flags.processes_left is True
    assert "survived the kill" in result.reason and "outlived the final kill" in result.reason


async def test_without_wheels_a_coverage_run_is_an_infrastructure_error_naming_why() -> None:
    runner, backend = _runner(lambda run: FakeOutcome(), StaticCoverageKit({}))
    result = (await handle_run_requested(_request(Coverage(files=("m.py",))), runner)).result
    assert result.status is RunStatus.INFRA_ERROR and "no coverage.py wheels" in result.reason
    assert not backend.runs


def test_the_wheelhouse_kit_names_each_python_s_newest_wheel(tmp_path: Any) -> None:
    machine = __import__("platform").machine()
    for name in (
        f"coverage-7.2.7-cp37-cp37m-manylinux_2_17_{machine}.whl",
        f"coverage-7.10.7-cp311-cp311-manylinux_2_17_{machine}.whl",
        f"coverage-7.9.0-cp311-cp311-manylinux_2_17_{machine}.whl",
        "coverage-7.10.7-py3-none-any.whl",
    ):
        (tmp_path / name).write_bytes(name.encode())
    files = WheelhouseCoverageKit(tmp_path, pythons=("3.7", "3.11"), pip="/nonexistent").files()
    assert set(files) == {"coverage-3.7.whl", "coverage-3.11.whl", "coverage-any.whl"}
    assert b"7.10.7-cp311" in files["coverage-3.11.whl"]


def test_an_empty_wheelhouse_without_pip_has_no_kit(tmp_path: Any) -> None:
    with pytest.raises(CoverageKitMissing):
        WheelhouseCoverageKit(tmp_path, pythons=("3.11",), pip="/nonexistent").files()


def test_the_programs_sent_into_the_container_are_valid_python() -> None:
    compile(coverage_run.SITECUSTOMIZE_TEXT, "sitecustomize.py", "exec")
    compile(coverage_run.STARTER_TEXT, "hackaudit_coverage_start.py", "exec")
    compile(coverage_run.PTH_LINE, "hackaudit-coverage.pth", "exec")
    compile(coverage_run.contexts_plugin(), "hackaudit_coverage_contexts.py", "exec")


def test_the_plugin_travels_with_the_run_and_the_report_step_does_not_load_it() -> None:
    files = coverage_run.stage_files(Coverage(files=("m.py",)), {}, ())
    assert files[f"{coverage_run.CONTEXTS}.py"].decode() == coverage_run.contexts_plugin()
    assert "plugins" not in coverage_run.report_rcfile(Coverage(files=("m.py",)))


# --- compacted in the container ---------------------------------------------------------------


def test_the_compact_report_names_each_test_and_each_set_of_tests_once() -> None:
    lines = {str(n): [ADD, MUL] for n in range(20, 60)}
    full = _report({"m.py": {"executed_lines": list(range(20, 60)), "contexts": lines}})
    compact = json.loads(_compact(full, Coverage(files=("m.py",))))
    assert compact["tests"] == [ADD, MUL] and compact["sets"] == [[0, 1]]
    assert full.count(ADD) == 40 and json.dumps(compact).count(ADD) == 1


def test_past_its_budget_of_tests_a_line_is_listed_as_cut_not_as_run_by_no_test(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(coverage_run, "MAX_REFS", 3)
    result = read_report(REPORT, Coverage(files=("m.py",)))
    assert set(result.files["m.py"].executed) == {1, 2, 5}
    assert result.cut == {"m.py": (9,)}


def test_the_lines_asked_for_first_keep_their_tests_when_other_lines_are_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(coverage_run, "MAX_REFS", 3)
    # m.py's line 9 (2 tests) and other.py's line 1 first: they take the budget before m.py's
    # lines 1, 2 and 5, which file order would have kept
    asked = Coverage(files=("m.py", "other.py"), first={"m.py": (9,), "other.py": (1,)})
    result = read_report(REPORT, asked)
    assert set(result.tests_of("m.py", 9)) == {MUL, ADD}
    assert result.tests_of("other.py", 1) == ("",)
    assert result.cut == {"m.py": (1, 2, 5)}
    assert result.files["m.py"].missing == (12,)


def test_sources_are_sent_when_asked_and_a_file_over_its_cap_is_left_out_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = _report(
        {name: {"executed_lines": [1], "contexts": {"1": [ADD]}} for name in ("m.py", "big.py")}
    )
    monkeypatch.setattr(coverage_run, "SOURCE_CAP", 100)
    texts = {"m.py": b"def add(a, b):\n    return a + b\n", "big.py": b"x = 1\n" * 50}
    asked = Coverage(files=("m.py", "big.py"), with_source=True)
    result = read_compact(_compact(report, asked, texts), asked)
    assert result.sources == {"m.py": texts["m.py"].decode()}
    plain = Coverage(files=("m.py", "big.py"))
    assert read_compact(_compact(report, plain, texts), plain).sources == {}


def test_the_report_script_reads_the_combined_data_with_the_runs_request() -> None:
    """No full JSON report is written (a few thousand tests' names over a large module fill the
    run's writable space): the program reads the combined data through coverage.py's API, from
    the kit unpacked for the step (run for real by the sandbox's integration tests)."""
    invocation = Coverage(files=("m.py",), lines={"m.py": (5, 9)})
    source = coverage_run.compact_program(invocation)
    assert source.rstrip().endswith("main(sys.argv[1], sys.argv[2], sys.argv[3])")
    assert json.loads(source.split("WANTED = json.loads(", 1)[1].split(")\n", 1)[0][1:-1]) == (
        wanted(invocation)
    )
    script = coverage_run.report_script(("cd /testbed",), invocation, KIT)
    assert source.rstrip("\n") in script
    assert (
        "hackaudit_run - \"$PWD/coverage-lib\" report.rc coverage.json <<'HACKAUDIT_COMPACT'"
        in (script)
    )
    assert not any(line.startswith("hackaudit_coverage json") for line in script.splitlines())
    compile(source, "coverage-compact.py", "exec")


def test_the_report_step_runs_nothing_the_measured_run_could_write() -> None:
    invocation = Coverage(files=("m.py",))
    script = coverage_run.report_script(("cd /testbed",), invocation, KIT)
    steps = [line for line in script.splitlines() if '"$hackaudit_py" ' in line]
    assert steps and all(f'"$hackaudit_py" {coverage_run.ISOLATED} ' in s for s in steps)
    assert script.index('cd "$HACKAUDIT_REPORT"') < script.index("command -v python")
    # the kit, its configuration and the start-up hook are the script's own: of the run's
    # directory it reads only the wheel (checked by its hash) and the data files
    stage_kit = '"$HACKAUDIT_COVERAGE"/coverage-lib'
    for name in ("coverage.rc", "sitecustomize", "PYTHONPATH", stage_kit):
        assert name not in script
    read = [line for line in script.splitlines() if "$HACKAUDIT_COVERAGE" in line]
    assert len(read) == 2 and "kit.whl" in read[0] and "-type f -name '.coverage.*'" in read[1]
    assert hashlib.sha256(KIT["coverage-3.11.whl"]).hexdigest() in script
    assert "data_file = ${HACKAUDIT_REPORT}/coverage-data/.coverage" in script
    assert subprocess.run(["bash", "-n", "-c", script], check=False).returncode == 0


@pytest.mark.parametrize(
    ("found", "runs"),
    [
        ("/usr/bin/python3", "/usr/bin/python3"),
        ("/testbed/.venv/bin/python", "/opt/hackaudit/testbed/.venv/bin/python"),
        ("/tmp/home/bin/python", None),
    ],
)
def test_the_report_step_never_runs_an_interpreter_the_run_could_write(
    tmp_path: Any, found: str, runs: str | None
) -> None:
    lines = coverage_run._interpreter_lines()
    stub = (
        f"command() {{ echo {found}; }}\n"
        'realpath() { shift 2; echo "$1"; }\n' + "\n".join(lines) + '\necho "$hackaudit_py"\n'
    )
    done = subprocess.run(["bash", "-c", stub], capture_output=True, text=True, check=False)
    if runs is None:
        assert done.returncode != 0 and "could write" in done.stderr
    else:
        assert done.returncode == 0 and done.stdout.strip() == runs


def test_coverage_of_a_wider_suite_runs_the_suites_command_behind_coverage_set_up() -> None:
    suite = Suite(dirs=("tests",))
    measured = command_for(_task(), Coverage(files=("m.py",), suite=suite), TESTS, None)
    plain = command_for(_task(), suite, TESTS, None)
    assert measured.command == plain.command and "tests/test_m.py" in plain.command
    assert "export COVERAGE_PROCESS_START=" in measured.shell()


def test_a_suite_of_given_test_ids_runs_exactly_those() -> None:
    ids = ("tests/test_x.py::T::test_a", "tests/test_y.py::test_b")
    runner = command_for(_task(), Suite(dirs=("tests",), files=ids), TESTS, None)
    assert runner.command.endswith("pytest -rA tests/test_x.py::T::test_a tests/test_y.py::test_b")
