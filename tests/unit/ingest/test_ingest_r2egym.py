"""R2E-Gym rows (whole files before/after, hidden tests, expected statuses) become tasks."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hackaudit.shared.contracts.task import Task
from hackaudit.shared.ingest import load_tasks
from hackaudit.shared.ingest.r2egym import is_test_path


@pytest.fixture
def r2e_task(fixtures: Path) -> Task:
    report = load_tasks([fixtures / "good" / "r2egym_row.jsonl"])
    assert report.problems == []
    [task] = report.tasks
    return task


def test_ids_commit_and_image_come_from_the_row(r2e_task: Task) -> None:
    assert r2e_task.instance_id == "calc__calc-" + "2" * 40
    assert r2e_task.repo == "calc"
    assert r2e_task.base_commit == "1" * 40
    assert r2e_task.image == "example/calc_final:" + "2" * 40
    assert r2e_task.problem_statement == "add() subtracts instead of adding"


def test_expected_passes_become_node_ids_and_expected_failures_are_dropped(
    r2e_task: Task,
) -> None:
    assert r2e_task.fail_to_pass == (
        "r2e_tests/test_1.py::TestAdd::test_small",
        "r2e_tests/test_1.py::TestAdd::test_negative",
        "r2e_tests/test_2.py::test_zero[0.5]",
        "r2e_tests/test_2.py::test_zero[2]",
    )
    assert r2e_task.pass_to_pass == ()


def test_the_patches_rebuild_the_gold_commit_from_the_old_files(
    r2e_task: Task, fixtures: Path, tmp_path: Path
) -> None:
    row = json.loads((fixtures / "good" / "r2egym_row.jsonl").read_text())
    commit = json.loads(row["parsed_commit_content"])
    for diff in commit["file_diffs"]:
        if diff["minus_file"]["path"] != "/dev/null":
            path = tmp_path / diff["header"]["file"]["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(diff["old_file_content"])
    for patch in (r2e_task.patch, r2e_task.test_patch):
        (tmp_path / "p.diff").write_text(patch)
        subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)

    assert "return a + b" in (tmp_path / "calc" / "ops.py").read_text()
    assert not (tmp_path / "NOTES.txt").exists()
    assert (tmp_path / "tests" / "test_ops.py").exists()
    assert "class TestAdd" in (tmp_path / "r2e_tests" / "test_1.py").read_text()
    assert "r2e_tests/" not in r2e_task.patch and "calc/ops.py" not in r2e_task.test_patch


def test_explicit_test_lists_in_the_row_are_kept(fixtures: Path, tmp_path: Path) -> None:
    row = json.loads((fixtures / "good" / "r2egym_row.jsonl").read_text())
    row["FAIL_TO_PASS"] = ["r2e_tests/test_1.py::TestAdd::test_small"]
    row["PASS_TO_PASS"] = ["r2e_tests/test_2.py::test_zero[2]"]
    (tmp_path / "row.json").write_text(json.dumps(row))

    [task] = load_tasks([tmp_path / "row.json"]).tasks

    assert task.fail_to_pass == ("r2e_tests/test_1.py::TestAdd::test_small",)
    assert task.pass_to_pass == ("r2e_tests/test_2.py::test_zero[2]",)


def test_a_binary_file_in_the_commit_is_refused_with_the_field(
    fixtures: Path, tmp_path: Path
) -> None:
    row = json.loads((fixtures / "good" / "r2egym_row.jsonl").read_text())
    commit = json.loads(row["parsed_commit_content"])
    commit["file_diffs"][0]["is_binary_file"] = True
    row["parsed_commit_content"] = json.dumps(commit)
    (tmp_path / "row.json").write_text(json.dumps(row))

    report = load_tasks([tmp_path / "row.json"])

    assert report.tasks == []
    [problem] = report.problems
    assert problem.field == "parsed_commit_content.file_diffs[0]"
    assert problem.instance_id == "calc__calc-" + "2" * 40


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_a.py", True),
        ("pkg/testing/util.py", True),
        ("test_top.py", True),
        ("pkg/a_test.py", True),
        ("pkg/contest.py", False),
        ("pkg/tests_helper.py", False),
        ("src/attest/core.py", False),
    ],
)
def test_test_paths_are_told_from_code_paths(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test
