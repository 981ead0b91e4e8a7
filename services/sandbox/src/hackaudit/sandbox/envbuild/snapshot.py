"""Commits a task's source folder into a fresh git repository and checks it is `base_commit`.

The corpus computes each task's `base_commit` with one fixed recipe (fixed author, committer,
dates and message, on branch main), so the same files always give the same commit. The builder
repeats that recipe on a copy of `environment.source` (without `.git`, `__pycache__` and
`.pytest_cache`) on the host, before any image is built, and refuses to go on when the commit
differs: an image whose HEAD is not the task's base commit would grade the wrong code.

Git runs with no system or user configuration and none of the caller's `GIT_*` variables, so
nothing on the host can change the commit it makes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from hackaudit.sandbox.envbuild.errors import BaseCommitMismatch, SourceError

EXCLUDED = ("__pycache__", ".pytest_cache", ".git")
COMMIT_DATE = "2026-01-01T00:00:00+0000"
_COMMIT = (
    "-c",
    "user.name=hackaudit",
    "-c",
    "user.email=examples@hackaudit.invalid",
    "-c",
    "commit.gpgsign=false",
    "commit",
    "-q",
    "-m",
    "base",
)


def commit_source(source: Path, dest: Path) -> str:
    """Copies `source` to `dest` (which must not exist), commits it, returns the commit hash."""
    if not source.is_dir():
        raise SourceError(f"environment.source {source} is not a folder")
    try:
        shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(*EXCLUDED))
    except (OSError, shutil.Error) as exc:
        raise SourceError(f"cannot copy environment.source {source}: {exc}") from exc
    run_git(dest, "init", "-q", "-b", "main")
    run_git(dest, "add", "-A")
    run_git(dest, *_COMMIT)
    return run_git(dest, "rev-parse", "HEAD").strip()


def checked_snapshot(
    source: Path, dest: Path, base_commit: str, instance_ids: Sequence[str]
) -> str:
    """`commit_source`, raising BaseCommitMismatch (naming the tasks) when it is not base_commit."""
    head = commit_source(source, dest)
    if head != base_commit:
        raise BaseCommitMismatch(instance_ids, expected=base_commit, actual=head)
    return head


def git_env() -> dict[str, str]:
    """The caller's environment without GIT_* variables, host git configuration or locale."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {
        **keep,
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_DATE": COMMIT_DATE,
        "GIT_COMMITTER_DATE": COMMIT_DATE,
    }


def run_git(repo: Path, *args: str, timeout_s: float = 600) -> str:
    """`git args` in `repo`, isolated from the host's configuration; SourceError on failure."""
    verb = next(a for a in args if not a.startswith("-") and "=" not in a)
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=repo,
            env=git_env(),
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout_s,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceError(f"git {verb} failed in {repo}: {exc}") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SourceError(f"git {verb} failed: {' | '.join(detail)}")
    return done.stdout
