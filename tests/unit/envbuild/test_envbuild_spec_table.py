"""The SWE-bench spec table: plain rows get their environment from it, and own fields win."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hackaudit.shared.contracts.task import EnvironmentSpec, Task
from hackaudit.shared.ingest import load_tasks
from hackaudit.shared.swebench_specs import (
    SpecNotFound,
    needs_spec,
    require_spec,
    spec_for,
    with_spec,
)
from hackaudit.shared.swebench_specs.generate import converted_spec

# The shared data folder lies beside the repository (here and in CI).
SHARED_SPECS = (
    Path(__file__).resolve().parents[3].parent
    / "shared/data/swebench-verified/swebench_verified_specs_by_repo_version.json"
)


def _row(**fields: object) -> dict[str, object]:
    row: dict[str, object] = {
        "instance_id": "sympy__sympy-20590",
        "repo": "sympy/sympy",
        "version": "1.7",
        "base_commit": "cffd4e0f86fefd4802349a9f9b19ed70934ea354",
        "patch": "",
        "test_patch": "",
        "FAIL_TO_PASS": ["test_x"],
    }
    row.update(fields)
    return row


def _task(**fields: object) -> Task:
    return Task.model_validate(_row(**fields))


def test_a_plain_row_gets_python_packages_install_test_command_and_parser() -> None:
    task = with_spec(_task())

    env = task.environment
    assert env is not None
    assert env.python == "3.9"
    assert env.source is None
    assert set(env.pip_packages) == {"mpmath", "flake8", "mpmath==1.3.0", "flake8-comprehensions"}
    assert env.install == "python -m pip install -e ."
    assert task.test_command is not None and "bin/test -C --verbose" in task.test_command
    assert task.log_parser == "sympy"


def test_requirement_files_are_named_when_the_spec_says_requirements_txt() -> None:
    task = with_spec(_task(repo="pylint-dev/pylint", version="2.15"))

    assert task.environment is not None
    assert task.environment.requirements_files == ("requirements_test.txt",)
    assert task.log_parser == "pytest"


def test_pre_install_steps_travel_with_the_environment() -> None:
    task = with_spec(_task(repo="pytest-dev/pytest", version="6.3"))

    assert task.environment is not None
    assert task.environment.pre_install == ("sed -i 's/>=>=/>=/' setup.cfg",)


def test_the_tasks_own_fields_win() -> None:
    task = with_spec(
        _task(
            environment={"pip_packages": ["mpmath==1.2.1"], "install": "pip install ."},
            test_command="bin/test -C",
            log_parser="pytest",
        )
    )

    env = task.environment
    assert env is not None
    assert env.pip_packages == ("mpmath==1.2.1",)
    assert env.install == "pip install ."
    assert env.python == "3.9"
    assert (task.test_command, task.log_parser) == ("bin/test -C", "pytest")


@pytest.mark.parametrize(
    "fields",
    [
        {"image": "sweb.eval.x86_64.sympy:latest"},
        {"environment": {"source": "/somewhere"}},
        {"environment": {"python": "3.11"}},
        {"environment": {"base": "bookworm"}},
    ],
)
def test_tasks_that_say_how_their_image_is_made_are_left_alone(fields: dict[str, object]) -> None:
    task = _task(**fields)

    assert not needs_spec(task)
    assert with_spec(task) == task


def test_an_unknown_repo_or_version_is_an_error_naming_both() -> None:
    with pytest.raises(SpecNotFound) as caught:
        require_spec(_task(version="0.1"))
    message = str(caught.value)
    assert "sympy__sympy-20590" in message
    assert "sympy/sympy" in message and "version 0.1" in message
    assert "1.7" in message  # the known versions are listed

    with pytest.raises(SpecNotFound, match="acme/widget"):
        require_spec(_task(repo="acme/widget"))
    assert with_spec(_task(repo="acme/widget")).environment is None


def test_ingestion_fills_plain_rows_and_keeps_example_rows(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    rows = [
        _row(),
        _row(instance_id="ex-1", repo="acme/widget", environment={"source": "src"}),
        _row(instance_id="ex-2", repo="acme/widget"),
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(rows))

    report = load_tasks([path])

    assert not report.problems
    plain, example, unknown = report.tasks
    assert plain.environment is not None and plain.environment.python == "3.9"
    assert example.environment == EnvironmentSpec(source=str(source))
    assert example.test_command is None and example.log_parser is None
    assert unknown.environment is None


def test_the_table_is_the_conversion_of_the_shared_file() -> None:
    if not SHARED_SPECS.is_file():
        pytest.skip("the shared specs file is not here")
    shared = json.loads(SHARED_SPECS.read_text())["specs_by_repo_version"]
    for repo, versions in shared.items():
        for version, entry in versions.items():
            spec = spec_for(repo, version)
            assert spec is not None, (repo, version)
            converted = converted_spec(entry["spec"])
            assert spec.python == converted["python"]
            assert spec.install == converted["install"]
            assert spec.test_cmd == converted["test_cmd"]
            assert list(spec.pip_packages) == converted.get("pip_packages", [])


def test_packages_become_a_list_or_a_file_reference() -> None:
    quoted = converted_spec(
        {"python": "3.9", "install": "i", "test_cmd": "pytest", "packages": "'numpy==1.19.2' scipy"}
    )
    assert quoted["packages"] == ["numpy==1.19.2", "scipy"]
    from_file = converted_spec(
        {"python": "3.9", "install": "i", "test_cmd": "t", "packages": "requirements.txt"}
    )
    assert from_file["packages_from"] == "requirements.txt" and "packages" not in from_file
    assert converted_spec({"test_cmd": "./tests/runtests.py"})["log_parser"] == "django"
