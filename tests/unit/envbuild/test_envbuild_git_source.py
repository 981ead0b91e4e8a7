"""Repositories are found in the repos folder and written with base_commit as the only commit."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild.errors import CommitMissing, RepoNotFound
from hackaudit.sandbox.envbuild.git_source import GitRepoDir, find_repo_dir, shallow_checkout
from tests.gitrepo import git_output as _git


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[str]]:
    """A work tree with three commits and a tag on the last one."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    commits = []
    for n in range(3):
        (repo / "VERSION").write_text(f"{n}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"commit {n}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    _git(repo, "tag", "v1")
    return repo, commits


@pytest.mark.parametrize("layout", ["owner/name", "owner+name/repo", "owner+name"])
def test_each_layout_is_found_bare_or_not(
    tmp_path: Path, history: tuple[Path, list[str]], layout: str
) -> None:
    upstream, _ = history
    repos = tmp_path / "repos"
    where = repos / layout.replace("owner", "acme").replace("name", "widget")
    where.parent.mkdir(parents=True)
    bare = layout == "owner+name/repo"
    _git(tmp_path, "clone", "-q", *(["--bare"] if bare else []), str(upstream), str(where))

    assert find_repo_dir(repos, "acme/widget") == where


def test_a_missing_repository_names_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(RepoNotFound) as caught:
        find_repo_dir(tmp_path, "acme/widget")
    assert "acme/widget" in str(caught.value)
    assert str(tmp_path / "acme+widget" / "repo") in str(caught.value)


def test_only_base_commit_is_reachable(tmp_path: Path, history: tuple[Path, list[str]]) -> None:
    upstream, commits = history
    dest = tmp_path / "testbed"

    head = shallow_checkout(upstream, commits[1], dest, ["acme__widget-1"])

    assert head == commits[1]
    assert _git(dest, "rev-list", "--count", "HEAD") == "1"
    assert _git(dest, "log", "--format=%H") == commits[1]
    assert _git(dest, "for-each-ref", "--format=%(refname)") == "refs/heads/main"
    assert _git(dest, "remote") == ""
    assert (dest / "VERSION").read_text() == "1\n"
    later = subprocess.run(["git", "cat-file", "-e", commits[2]], cwd=dest, check=False)
    assert later.returncode != 0
    assert not (dest / ".git" / "FETCH_HEAD").exists()


def test_a_missing_commit_names_the_task_the_repository_and_the_commit(
    tmp_path: Path, history: tuple[Path, list[str]]
) -> None:
    upstream, _ = history
    missing = "ab" * 20

    with pytest.raises(CommitMissing) as caught:
        shallow_checkout(upstream, missing, tmp_path / "testbed", ["acme__widget-9"])
    message = str(caught.value)
    assert "acme__widget-9" in message and str(upstream) in message and missing in message


def test_files_are_read_at_the_commit(history: tuple[Path, list[str]]) -> None:
    upstream, commits = history
    repo = GitRepoDir(upstream)

    assert repo.read(commits[0], "VERSION") == "0\n"
    assert repo.read(commits[0], "absent.txt") is None
    assert repo.has_commit(commits[2]) and not repo.has_commit("ab" * 20)


def test_blobs_the_mirror_lacks_are_left_out_and_head_stays_base_commit(
    tmp_path: Path, history: tuple[Path, list[str]]
) -> None:
    upstream, _ = history
    (upstream / "data").mkdir()
    (upstream / "data" / "big table.dat").write_text("too big to mirror\n")
    (upstream / "src.py").write_text("x = 1\n")
    _git(upstream, "add", "-A")
    _git(upstream, "commit", "-q", "-m", "data")
    commit = _git(upstream, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(upstream), str(mirror))
    _git(mirror, "repack", "-a", "-d", "-q")
    big = _git(mirror, "rev-parse", f"{commit}:data/big table.dat")
    _drop_object(mirror, big)
    dest = tmp_path / "testbed"

    assert GitRepoDir(mirror).absent_files(commit) == ["data/big table.dat"]
    head = shallow_checkout(mirror, commit, dest, ["acme__widget-2"])

    assert head == commit
    assert (dest / "data" / "big table.dat").read_bytes() == b""  # there, empty
    assert (dest / "src.py").read_text() == "x = 1\n"
    assert (dest / "VERSION").read_text() == "2\n"
    assert _git(dest, "remote") == ""
    assert _git(dest, "rev-list", "--count", "HEAD") == "1"
    assert _git(dest, "status", "--porcelain") == ""


def _drop_object(bare: Path, oid: str) -> None:
    """Rewrite `bare`'s single pack without the object `oid`, as a mirror that lacks a blob."""
    every = _git(bare, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    kept = [o for o in every if o != oid]
    packs = bare / "objects" / "pack"
    old = list(packs.iterdir())
    subprocess.run(
        ["git", "-C", str(bare), "pack-objects", "-q", str(packs / "pack")],
        input="".join(f"{o}\n" for o in kept),
        text=True,
        check=True,
        capture_output=True,
    )
    for path in old:
        path.unlink()
    gone = subprocess.run(["git", "-C", str(bare), "cat-file", "-e", oid], check=False)
    assert gone.returncode != 0


def _with_submodule(tmp_path: Path) -> tuple[Path, str, str]:
    """repos/acme/widget whose commit records acme/helpers at a commit, as a submodule."""
    repos = tmp_path / "repos"
    helpers = repos / "acme" / "helpers"
    helpers.mkdir(parents=True)
    _git(helpers, "init", "-q", "-b", "main")
    (helpers / "ah.py").write_text("HELPED = True\n")
    _git(helpers, "add", "-A")
    _git(helpers, "commit", "-q", "-m", "helpers")
    pinned = _git(helpers, "rev-parse", "HEAD")
    (helpers / "ah.py").write_text("HELPED = 'later'\n")
    _git(helpers, "commit", "-q", "-am", "later")
    widget = repos / "acme" / "widget"
    widget.mkdir(parents=True)
    _git(widget, "init", "-q", "-b", "main")
    (widget / "setup.py").write_text("import astropy_helpers\n")
    (widget / ".gitmodules").write_text(
        '[submodule "astropy_helpers"]\n\tpath = astropy_helpers\n'
        "\turl = https://github.com/acme/helpers.git\n"
    )
    _git(widget, "add", "-A")
    _git(widget, "update-index", "--add", "--cacheinfo", f"160000,{pinned},astropy_helpers")
    _git(widget, "commit", "-q", "-m", "with helpers")
    return repos, _git(widget, "rev-parse", "HEAD"), pinned


def test_a_submodule_is_checked_out_at_its_commit_from_its_mirror(tmp_path: Path) -> None:
    repos, commit, pinned = _with_submodule(tmp_path)
    dest = tmp_path / "testbed"

    head = shallow_checkout(repos / "acme" / "widget", commit, dest, ["acme__widget-3"], repos)

    assert head == commit
    assert (dest / "astropy_helpers" / "ah.py").read_text() == "HELPED = True\n"
    assert _git(dest / "astropy_helpers", "rev-parse", "HEAD") == pinned
    assert _git(dest / "astropy_helpers", "rev-list", "--count", "HEAD") == "1"
    assert _git(dest, "status", "--porcelain") == ""


def test_a_submodule_without_a_mirror_is_left_empty(tmp_path: Path) -> None:
    repos, commit, _ = _with_submodule(tmp_path)
    shutil.rmtree(repos / "acme" / "helpers")
    dest = tmp_path / "testbed"

    head = shallow_checkout(repos / "acme" / "widget", commit, dest, ["acme__widget-3"], repos)

    assert head == commit
    assert (dest / "setup.py").is_file()
    assert not any((dest / "astropy_helpers").iterdir())
