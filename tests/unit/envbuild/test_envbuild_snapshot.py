"""The host snapshot reproduces the corpus's base commit and refuses a wrong one by name."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import BaseCommitMismatch, SourceError
from hackaudit.sandbox.envbuild.snapshot import checked_snapshot, commit_source


def test_the_commit_matches_the_corpus_recipe(
    tiny_repo: Path, tmp_path: Path, corpus_commit: Callable[[Path], str]
) -> None:
    expected = corpus_commit(tiny_repo)

    assert commit_source(tiny_repo, tmp_path / "snap") == expected


def test_caches_and_an_old_git_folder_are_left_out(tiny_repo: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tiny_repo, check=True)

    commit_source(tiny_repo, tmp_path / "snap")

    files = subprocess.run(
        ["git", "ls-files"], cwd=tmp_path / "snap", capture_output=True, text=True, check=True
    ).stdout.split()
    assert files == ["run.sh", "tests/test_core.py", "tinylib/__init__.py", "tinylib/core.py"]
    assert not (tmp_path / "snap" / ".pytest_cache").exists()


def test_the_executable_bit_is_part_of_the_commit(tiny_repo: Path, tmp_path: Path) -> None:
    with_exec = commit_source(tiny_repo, tmp_path / "a")
    (tiny_repo / "run.sh").chmod(0o644)

    assert commit_source(tiny_repo, tmp_path / "b") != with_exec


def test_host_git_settings_cannot_change_the_commit(
    tiny_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = commit_source(tiny_repo, tmp_path / "a")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Someone Else")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00+0000")

    assert commit_source(tiny_repo, tmp_path / "b") == expected


def test_a_wrong_base_commit_names_the_task_and_both_hashes(
    tiny_repo: Path, tmp_path: Path, corpus_commit: Callable[[Path], str]
) -> None:
    actual = corpus_commit(tiny_repo)

    with pytest.raises(BaseCommitMismatch) as caught:
        checked_snapshot(tiny_repo, tmp_path / "snap", "f" * 40, ["tiny__tiny-1"])

    message = str(caught.value)
    assert "tiny__tiny-1" in message and "f" * 40 in message and actual in message


def test_a_missing_or_empty_source_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not a folder"):
        commit_source(tmp_path / "absent", tmp_path / "a")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="git commit failed"):
        commit_source(tmp_path / "empty", tmp_path / "b")
