"""Finding the shared data folder for the command's defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.analysis.shared_data import (
    ENV_VAR,
    SUBMISSIONS_FILE,
    default_file,
    locate_shared_data,
)


def _dataset(root: Path) -> Path:
    folder = root / "swebench-verified"
    folder.mkdir(parents=True)
    (folder / SUBMISSIONS_FILE).write_text("{}", encoding="utf-8")
    return folder


@pytest.mark.parametrize("env_points_at", ["folder", "parent", "grandparent"])
def test_environment_variable_may_name_the_folder_or_a_parent(
    tmp_path: Path, env_points_at: str
) -> None:
    folder = _dataset(tmp_path / "shared" / "data")
    target = {"folder": folder, "parent": folder.parent, "grandparent": folder.parent.parent}
    cwd = tmp_path / "elsewhere"
    assert locate_shared_data(cwd, {ENV_VAR: str(target[env_points_at])}) == folder


def test_sibling_shared_folder_of_the_working_directory(tmp_path: Path) -> None:
    folder = _dataset(tmp_path / "shared" / "data")
    assert locate_shared_data(tmp_path / "main", {}) == folder
    assert default_file(tmp_path / "main", {}, SUBMISSIONS_FILE) == folder / SUBMISSIONS_FILE


def test_nothing_found(tmp_path: Path) -> None:
    assert locate_shared_data(tmp_path / "main", {ENV_VAR: str(tmp_path / "nope")}) is None
    assert default_file(tmp_path / "main", {}, SUBMISSIONS_FILE) is None
