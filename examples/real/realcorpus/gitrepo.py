"""Read-only access to one git repository (bare mirror or clone) through the git command line.

Only plumbing that reads is used; patches are checked against a commit with a throwaway index
file, so the repository, its refs and its work tree (if any) are never changed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path


class GitError(RuntimeError):
    """A git command failed; carries the command and git's message."""


@dataclass(frozen=True)
class GitRepo:
    path: Path

    def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            check=False,
        )
        if done.returncode != 0:
            raise GitError(f"git {' '.join(args[:3])}: {done.stderr.strip()[:500]}")
        return done.stdout

    def resolve(self, rev: str) -> str | None:
        """The commit `rev` names, or None when it does not exist."""
        try:
            return self.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
        except GitError:
            return None

    def default_branch(self) -> str:
        try:
            return self.run("symbolic-ref", "--short", "HEAD").strip()
        except GitError:
            for name in ("main", "master"):
                if self.resolve(name):
                    return name
            raise

    def merge_base(self, a: str, b: str) -> str | None:
        try:
            return self.run("merge-base", a, b).strip() or None
        except GitError:
            return None

    def is_ancestor(self, a: str, b: str) -> bool:
        done = subprocess.run(
            ["git", "-C", str(self.path), "merge-base", "--is-ancestor", a, b],
            capture_output=True,
            check=False,
        )
        return done.returncode == 0

    def merges_between(self, a: str, b: str) -> list[str]:
        """Merge commits reachable from `b` but not from `a`."""
        return self.run("rev-list", "--merges", f"{a}..{b}").split()

    def side_commits(self, a: str, b: str) -> list[str]:
        """Commits of `a..b` off `b`'s first-parent chain: what merges brought in."""
        every = self.run("rev-list", f"{a}..{b}").split()
        firsts = set(self.run("rev-list", "--first-parent", f"{a}..{b}").split())
        return [c for c in every if c not in firsts]

    def first_parents(self, tip: str, limit: int) -> list[str]:
        """The first-parent chain of `tip`, newest first, at most `limit` commits."""
        return self.run("rev-list", "--first-parent", f"--max-count={limit}", tip).split()

    def merged_by(self, commit: str, branch: str) -> str | None:
        """The commit of `branch`'s first-parent chain that brought `commit` in, if any."""
        if not self.is_ancestor(commit, branch):
            return None
        path = self.run("rev-list", "--ancestry-path", "--reverse", f"{commit}..{branch}").split()
        firsts = set(self.run("rev-list", "--first-parent", f"{commit}..{branch}").split())
        return next((c for c in path if c in firsts), None)

    def parents(self, commit: str) -> list[str]:
        return self.run("rev-list", "--parents", "-n", "1", commit).split()[1:]

    def diff(self, a: str, b: str) -> str:
        return self.run("diff", "--no-color", "--no-ext-diff", "--full-index", "--binary", a, b)

    def blob(self, commit: str, path: str) -> str | None:
        try:
            return self.run("rev-parse", "--verify", "--quiet", f"{commit}:{path}").strip() or None
        except GitError:
            return None

    def commit_time(self, commit: str) -> str:
        return self.run("show", "-s", "--format=%cI", commit).strip()

    def messages(self, a: str, b: str) -> str:
        return self.run("log", "--no-merges", "--format=%B", f"{a}..{b}")

    def read_file(self, commit: str, path: str) -> str | None:
        try:
            return self.run("show", f"{commit}:{path}")
        except GitError:
            return None

    def applies(self, commit: str, patch: str) -> str | None:
        """None when `patch` applies cleanly to `commit`, else git's reason."""
        if not patch.strip():
            return None
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.run("read-tree", commit, env=env)
            try:
                self.run("apply", "--cached", "--check", "-", stdin=patch, env=env)
            except GitError as exc:
                return str(exc)
        return None

    def blob_after(self, commit: str, patch: str, path: str) -> str | None:
        """The blob id of `path` after `patch` is applied to `commit` (None if it cannot be)."""
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.run("read-tree", commit, env=env)
            try:
                self.run("apply", "--cached", "-", stdin=patch, env=env)
                line = self.run("ls-files", "-s", "--", path, env=env).split()
            except GitError:
                return None
        return line[1] if len(line) >= 2 else None
