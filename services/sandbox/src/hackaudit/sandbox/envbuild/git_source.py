"""Takes a task's repository at `base_commit` from a local clone or mirror, history cut off.

The repository is looked up under the repos folder (`HACKAUDIT_REPOS`, CLI `--repos`) as
`<owner>/<name>`, `<owner>+<name>/repo` or `<owner>+<name>`; it may be bare or not. The image
gets a fresh repository holding exactly one commit, `base_commit`, fetched with depth 1 by its
hash: HEAD and the branch `main` point at it, and there is no remote, no tag, no other ref. So
no later commit — the upstream fix among them — can be reached from `/testbed`.

Git runs with no system or user configuration and none of the caller's `GIT_*` variables.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from hackaudit.sandbox.envbuild.errors import CommitMissing, RepoNotFound, SourceError
from hackaudit.sandbox.envbuild.snapshot import git_env, run_git

_UPLOAD_PACK = "git -c uploadpack.allowAnySHA1InWant=true upload-pack"


def candidate_dirs(repos: Path, repo: str) -> list[Path]:
    owner, _, name = repo.partition("/")
    return [repos / owner / name, repos / f"{owner}+{name}" / "repo", repos / f"{owner}+{name}"]


def is_git_dir(path: Path) -> bool:
    """A non-bare work tree (with `.git`) or a bare repository (HEAD, objects/, refs/)."""
    if (path / ".git").exists():
        return True
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def find_repo_dir(repos: Path, repo: str) -> Path:
    """The git repository of `repo` under `repos`; RepoNotFound lists where it looked."""
    candidates = candidate_dirs(repos, repo)
    found = next((c for c in candidates if is_git_dir(c)), None)
    if found is None:
        tried = ", ".join(str(c) for c in candidates)
        raise RepoNotFound(f"no git repository for {repo} under {repos} (looked at {tried})")
    return found


class GitRepoDir:
    """Read access to one local repository, by commit."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def has_commit(self, commit: str) -> bool:
        return self._git("cat-file", "-e", f"{commit}^{{commit}}").returncode == 0

    def read(self, commit: str, path: str) -> str | None:
        """The file's text at `commit`, or None when it is not there (or not text)."""
        done = self._git("show", f"{commit}:{path}")
        return done.stdout if done.returncode == 0 else None

    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                ["git", "-c", "safe.directory=*", "-C", str(self.path), *args],
                env=git_env(),
                capture_output=True,
                text=True,
                errors="replace",
                check=False,
                timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SourceError(f"git {args[0]} failed in {self.path}: {exc}") from exc


def shallow_checkout(repo_dir: Path, commit: str, dest: Path, instance_ids: Sequence[str]) -> str:
    """A new repository at `dest` whose only commit is `commit`, checked out; returns HEAD."""
    if not GitRepoDir(repo_dir).has_commit(commit):
        raise CommitMissing(instance_ids, repo_dir=str(repo_dir), commit=commit)
    dest.mkdir(parents=True)
    _run(dest, "init", "-q", "-b", "main")
    _run(
        dest,
        "-c",
        "protocol.file.allow=always",
        "fetch",
        "-q",
        "--depth",
        "1",
        "--no-tags",
        "--upload-pack",
        _UPLOAD_PACK,
        str(repo_dir.resolve()),
        commit,
    )
    _run(dest, "reset", "-q", "--hard", "FETCH_HEAD")
    (dest / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
    shutil.rmtree(dest / ".git" / "hooks", ignore_errors=True)
    head = _run(dest, "rev-parse", "HEAD").strip()
    if head != commit and not head.startswith(commit):
        raise CommitMissing(instance_ids, repo_dir=str(repo_dir), commit=commit)
    return head


def _run(repo: Path, *args: str) -> str:
    return run_git(repo, *args, timeout_s=1800)
