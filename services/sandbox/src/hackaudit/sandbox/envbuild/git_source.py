"""Takes a task's repository at `base_commit` from a local clone or mirror, history cut off.

The repository is looked up under the repos folder (`HACKAUDIT_REPOS`, CLI `--repos`) as
`<owner>/<name>`, `<owner>+<name>/repo` or `<owner>+<name>`; it may be bare or not. The image
gets a fresh repository holding exactly one commit, `base_commit`, fetched with depth 1 by its
hash: HEAD and the branch `main` point at it, and there is no remote, no tag, no other ref. So
no later commit — the upstream fix among them — can be reached from `/testbed`.

A mirror may lack a few of its largest blobs (a data file too big to mirror). Then the commit
and its trees are fetched without blobs, the absent paths are left out of the checkout
(sparse checkout), every other blob is fetched, and the remote is removed again: HEAD is still
`base_commit` and the absent files are logged by path (`envbuild.source.absent_files`). Each
absent file is written empty (git does not see it: it is outside the sparse checkout), so code
that only looks a data file up by path at import time still imports (astropy's IERS-B table);
a test that reads its content fails with and without any patch, and is no graded test.

Submodules (gitlinks in `base_commit`'s tree, with their URL in its `.gitmodules`) are taken
from the repos folder the same way, each at its recorded commit, when a mirror of the URL's
`<owner>/<name>` is there (astropy 3.x builds with its `astropy_helpers` submodule); one that is
not there is logged (`envbuild.source.submodule_missing`) and left empty, as git leaves it.

Git runs with no system or user configuration and none of the caller's `GIT_*` variables.
"""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hackaudit.sandbox.envbuild.errors import CommitMissing, RepoNotFound, SourceError
from hackaudit.sandbox.envbuild.snapshot import git_env, run_git
from hackaudit.shared.logs import get_logger

log = get_logger(__name__)

_UPLOAD_PACK = (
    "git -c uploadpack.allowAnySHA1InWant=true -c uploadpack.allowFilter=true upload-pack"
)


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
        self._trees: dict[str, list[tuple[str, str, str]]] = {}

    def has_commit(self, commit: str) -> bool:
        return self._git("cat-file", "-e", f"{commit}^{{commit}}").returncode == 0

    def read(self, commit: str, path: str) -> str | None:
        """The file's text at `commit`, or None when it is not there (or not text)."""
        done = self._git("show", f"{commit}:{path}")
        return done.stdout if done.returncode == 0 else None

    def tree(self, commit: str) -> list[tuple[str, str, str]]:
        """`commit`'s whole tree as (kind, object id, path): blobs and gitlinks (`commit`)."""
        if commit not in self._trees:
            listing = self._git("ls-tree", "-r", "-z", "--full-tree", commit)
            if listing.returncode != 0:
                detail = listing.stderr[-300:]
                raise SourceError(f"git ls-tree {commit} failed in {self.path}: {detail}")
            entries = []
            for entry in filter(None, listing.stdout.split("\0")):
                meta, _, path = entry.partition("\t")
                _mode, kind, oid = meta.split()
                entries.append((kind, oid, path))
            self._trees[commit] = entries
        return self._trees[commit]

    def absent_files(self, commit: str) -> list[str]:
        """Paths of `commit`'s tree whose blobs this repository does not hold (sorted)."""
        paths_of: dict[str, list[str]] = {}
        for kind, oid, path in self.tree(commit):
            if kind == "blob":
                paths_of.setdefault(oid, []).append(path)
        if not paths_of:
            return []
        checked = self._git("cat-file", "--batch-check", stdin="".join(f"{o}\n" for o in paths_of))
        lines = checked.stdout.splitlines()
        missing = [line.split()[0] for line in lines if line.endswith(" missing")]
        return sorted(path for oid in missing for path in paths_of.get(oid, []))

    def submodules(self, commit: str) -> list[Submodule]:
        """The gitlinks of `commit`'s tree that its `.gitmodules` names a URL for."""
        links = {path: oid for kind, oid, path in self.tree(commit) if kind == "commit"}
        if not links:
            return []
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(self.read(commit, ".gitmodules") or "")
        except configparser.Error:
            return []
        urls = {
            parser.get(section, "path", fallback=""): parser.get(section, "url", fallback="")
            for section in parser.sections()
        }
        return [Submodule(p, urls[p], c) for p, c in sorted(links.items()) if urls.get(p)]

    def _git(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                ["git", "-c", "safe.directory=*", "-C", str(self.path), *args],
                env=git_env(),
                input=stdin,
                capture_output=True,
                text=True,
                errors="replace",
                check=False,
                timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SourceError(f"git {args[0]} failed in {self.path}: {exc}") from exc


def shallow_checkout(
    repo_dir: Path,
    commit: str,
    dest: Path,
    instance_ids: Sequence[str],
    repos: Path | None = None,
) -> str:
    """A new repository at `dest` whose only commit is `commit`, checked out; returns HEAD.
    With `repos`, its submodules are checked out too, from the mirrors found there."""
    source = GitRepoDir(repo_dir)
    if not source.has_commit(commit):
        raise CommitMissing(instance_ids, repo_dir=str(repo_dir), commit=commit)
    absent = source.absent_files(commit)
    dest.mkdir(parents=True)
    _run(dest, "init", "-q", "-b", "main")
    if absent:
        _checkout_without(repo_dir.resolve(), commit, dest, absent)
        log.warning(
            "envbuild.source.absent_files",
            repo_dir=str(repo_dir),
            commit=commit,
            tasks=list(instance_ids),
            paths=absent,
        )
    else:
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
    if repos is not None:
        for submodule in source.submodules(commit):
            _check_out_submodule(submodule, dest, instance_ids, repos)
    return head


def _check_out_submodule(
    submodule: Submodule, dest: Path, instance_ids: Sequence[str], repos: Path
) -> None:
    name = repo_of_url(submodule.url)
    try:
        if name is None:
            raise RepoNotFound(f"no <owner>/<name> in the submodule URL {submodule.url!r}")
        found = find_repo_dir(repos, name)
        where = dest / submodule.path
        if where.is_dir() and not any(where.iterdir()):
            where.rmdir()  # the empty directory git leaves for a submodule
        shallow_checkout(found, submodule.commit, where, instance_ids, repos)
    except SourceError as exc:
        log.warning(
            "envbuild.source.submodule_missing",
            tasks=list(instance_ids),
            path=submodule.path,
            url=submodule.url,
            commit=submodule.commit,
            reason=str(exc)[:300],
        )


@dataclass(frozen=True)
class Submodule:
    path: str
    url: str
    commit: str


_REPO_IN_URL = re.compile(r"[/:]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def repo_of_url(url: str) -> str | None:
    """`https://github.com/astropy/astropy-helpers.git` -> `astropy/astropy-helpers`."""
    match = _REPO_IN_URL.search(url.strip())
    return f"{match.group(1)}/{match.group(2)}" if match else None


def _checkout_without(repo_dir: Path, commit: str, dest: Path, absent: Sequence[str]) -> None:
    """Check `commit` out of `repo_dir` leaving the `absent` paths out; no remote is left behind.

    The commit and its trees come without blobs (a partial fetch); the checkout then fetches the
    blobs it needs from the same repository, which the sparse pattern keeps off the absent ones.
    """
    _run(dest, "remote", "add", "origin", str(repo_dir))
    _run(dest, "config", "remote.origin.uploadpack", _UPLOAD_PACK)
    _run(dest, "config", "remote.origin.promisor", "true")
    _run(dest, "config", "remote.origin.partialclonefilter", "blob:none")
    _run(dest, "config", "protocol.file.allow", "always")
    _run(dest, "fetch", "-q", "--depth", "1", "--no-tags", "--filter=blob:none", "origin", commit)
    patterns = ["/*", *(f"!/{_glob_escaped(path)}" for path in absent)]
    _run(dest, "sparse-checkout", "set", "--no-cone", *patterns)
    _run(dest, "reset", "-q", "--hard", "FETCH_HEAD")
    _run(dest, "remote", "remove", "origin")
    _run(dest, "config", "--unset", "protocol.file.allow")
    for path in absent:
        placeholder = dest / path
        placeholder.parent.mkdir(parents=True, exist_ok=True)
        placeholder.write_bytes(b"")
    # Git keeps the skip-worktree bit of a file present outside the sparse patterns only when
    # told to expect such files; with it, git ignores the placeholders.
    _run(dest, "config", "sparse.expectFilesOutsideOfPatterns", "true")


def _glob_escaped(path: str) -> str:
    """`path` as a literal sparse-checkout pattern (gitignore syntax)."""
    return "".join(f"\\{c}" if c in "*?[]!#\\ " else c for c in path)


def _run(repo: Path, *args: str) -> str:
    return run_git(repo, *args, timeout_s=1800)
