"""Diffs generated from file mappings apply with `git apply` and give back the exact new files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hackaudit.shared.ingest import FileChange, load_tasks, unified_diff
from hackaudit.shared.ingest.file_mapping import UnsafePath


def _apply(repo: Path, patch: str) -> None:
    (repo / "change.patch").write_text(patch)
    subprocess.run(["git", "apply", "change.patch"], cwd=repo, check=True, capture_output=True)
    (repo / "change.patch").unlink()


CASES = {
    "modified": FileChange("pkg/a.py", "x = 1\ny = 2\nz = 3\n", "x = 1\ny = 20\nz = 3\n"),
    "created": FileChange("pkg/new.py", None, "print('new')\n"),
    "deleted": FileChange("pkg/old.py", "gone = True\n", None),
    "old side lacks final newline": FileChange("a.txt", "one\ntwo", "one\ntwo\nthree\n"),
    "new side lacks final newline": FileChange("b.txt", "one\ntwo\n", "one\n2"),
    "created empty": FileChange("pkg/__init__.py", None, ""),
}


@pytest.mark.parametrize("change", CASES.values(), ids=CASES.keys())
def test_the_generated_diff_applies_and_gives_the_new_content(
    tmp_path: Path, change: FileChange
) -> None:
    target = tmp_path / change.path
    if change.old is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(change.old)

    _apply(tmp_path, unified_diff([change]))

    if change.new is None:
        assert not target.exists()
    else:
        assert target.read_text() == change.new


def test_unchanged_files_give_no_diff() -> None:
    assert unified_diff([FileChange("a.py", "same\n", "same\n")]) == ""


@pytest.mark.parametrize("path", ["/etc/passwd", "../up.py", "a/../../b.py", ""])
def test_paths_outside_the_repository_are_refused(path: str) -> None:
    with pytest.raises(UnsafePath):
        unified_diff([FileChange(path, None, "x\n")])


def test_a_mapping_task_diffs_against_its_environment_source(
    fixtures: Path, tmp_path: Path
) -> None:
    [task] = load_tasks([fixtures / "good" / "file_mapping.json"]).tasks
    assert task.environment is not None and task.environment.source is not None
    repo = tmp_path / "repo"
    subprocess.run(["cp", "-r", task.environment.source, str(repo)], check=True)

    _apply(repo, task.patch)
    _apply(repo, task.test_patch)

    assert (repo / "calc" / "ops.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (repo / "tests" / "test_ops.py").read_text().startswith("from calc.ops import add")


def test_a_mapping_may_state_both_sides_and_delete_with_null(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "dead.py").write_text("dead = 1\n")
    row = {
        "instance_id": "map-1",
        "repo": "m/m",
        "base_commit": "c" * 40,
        "FAIL_TO_PASS": ["t::x"],
        "environment": {"source": "src"},
        "patch": {"pkg/dead.py": None},
        "test_patch": {"t.py": {"old": None, "new": "def test_x():\n    pass\n"}},
    }
    (tmp_path / "task.json").write_text(json.dumps(row))

    [task] = load_tasks([tmp_path / "task.json"]).tasks

    assert "deleted file mode" in task.patch and "-dead = 1" in task.patch
    assert "new file mode" in task.test_patch and "+def test_x():" in task.test_patch
