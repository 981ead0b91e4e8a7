"""Derives one task's row from a git mirror: base commit, test patch, gold patch, and checks.

Each check's outcome is recorded (`ok`, `failed: ...`, `skipped: ...`); a failed check is a
problem of that task only, reported and never hidden. Rows whose FAIL_TO_PASS / PASS_TO_PASS are
not known yet are marked pending: the classification step runs them and fills the lists in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from realcorpus.gitrepo import GitError, GitRepo
from realcorpus.patches import (
    SplitDiff,
    blob_matches,
    compare_with_gold,
    index_lines,
    is_doc_path,
    join_files,
    split_pr_diff,
)
from realcorpus.reserved import ensure_not_reserved
from realcorpus.sources import SharedData, version_key

SEARCH_WINDOW = 60
_VERSION_FILES = {
    "sympy/sympy": ("sympy/release.py", "sympy/__init__.py"),
    "pylint-dev/pylint": ("pylint/__pkginfo__.py",),
    "psf/requests": ("requests/__version__.py", "requests/__init__.py"),
    "mwaskom/seaborn": ("seaborn/__init__.py",),
    "sphinx-doc/sphinx": ("sphinx/__init__.py",),
    "pytest-dev/pytest": ("setup.py",),
}
_VERSION = re.compile(r"""^(?:__version__|version)\s*=\s*['"]([0-9][^'"]*)['"]""", re.M)
_NUMVERSION = re.compile(r"^numversion\s*=\s*\((\d+),\s*(\d+)", re.M)


@dataclass
class Derivation:
    """What the build found for one task: its row (or None), each check, problems and notes."""

    instance_id: str
    row: dict[str, Any] | None = None
    checks: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def pending(self) -> bool:
        return self.row is not None and not self.row.get("FAIL_TO_PASS")

    def fail(self, check: str, why: str) -> None:
        self.checks[check] = f"failed: {why}"
        self.problems.append(f"{check}: {why}")

    def report(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "built": self.row is not None,
            "pending_classification": self.pending,
            "checks": self.checks,
            "problems": self.problems,
            "notes": self.notes,
        }


def pr_number(instance_id: str) -> int:
    return int(instance_id.rsplit("-", 1)[1])


@dataclass(frozen=True)
class Upstream:
    """Where the pull request meets the default branch."""

    tip: str  # the default branch just before the PR was merged (or its head when it was not)
    merge: str | None  # the default branch's commit that merged the PR, if it did


def upstream_of(repo: GitRepo, head: str) -> Upstream:
    branch = repo.default_branch()
    merge = repo.merged_by(head, branch)
    if merge is None:
        tip = repo.resolve(branch)
        assert tip is not None
        return Upstream(tip, None)
    parents = repo.parents(merge)
    # A fast-forward or rebase brings the head in as the first parent: step back past it.
    tip = parents[0] if parents and parents[0] != head else repo.parents(head)[0]
    return Upstream(tip, merge)


def check_index(
    repo: GitRepo, commit: str, aug_index: dict[str, str], test_patch: str
) -> tuple[bool, list[str]]:
    """Does each file's `index <old>` blob match `commit` (or `commit` + the test patch)?"""
    ok = True
    notes: list[str] = []
    for path, old in aug_index.items():
        blob = repo.blob(commit, path)
        if blob_matches(old, blob):
            notes.append(f"{path}: index {old} is its blob at the base")
            continue
        after = repo.blob_after(commit, test_patch, path) if test_patch else None
        if blob_matches(old, after):
            notes.append(f"{path}: index {old} is its blob at the base with the test patch")
            continue
        ok = False
        notes.append(f"{path}: index {old} is neither {str(blob)[:10]} nor {str(after)[:10]}")
    return ok, notes


def candidate_bases(repo: GitRepo, around: str, upstream: str) -> list[str]:
    """First-parent commits of the branch near `around`, nearest first."""
    chain = repo.first_parents(upstream, 20000)
    if around in chain:
        at = chain.index(around)
        window = chain[max(0, at - SEARCH_WINDOW) : at + SEARCH_WINDOW + 1]
        return sorted(window, key=lambda c: abs(chain.index(c) - at))
    return repo.first_parents(around, SEARCH_WINDOW)


def pr_diff(repo: GitRepo, base: str, head: str, upstream: Upstream, d: Derivation) -> str:
    """The pull request's own changes; default-branch commits merged into it are left out.

    Merge commits that bring in only commits off the default branch (another contributor's
    branch, or nothing newer than the fork point) are part of the PR. When the PR merged the
    default branch in, its changes are taken from the newest default-branch commit it holds.
    """
    fork = repo.merge_base(base, head)
    if fork is None:
        raise GitError(f"{base[:10]} and the PR head share no history")
    merges = repo.merges_between(fork, head)
    if not merges:
        return repo.diff(fork, head)
    side = repo.side_commits(fork, head)
    from_upstream = [c for c in side if repo.is_ancestor(c, upstream.tip)]
    if not from_upstream:
        kept = (
            f"{len(side)} commit(s) of another branch, kept as part of the PR"
            if side
            else (f"nothing newer than {fork[:10]}")
        )
        d.notes.append(f"the PR head holds {len(merges)} merge commit(s) bringing in {kept}")
        return repo.diff(fork, head)
    since = repo.merge_base(head, upstream.tip) or fork
    d.notes.append(
        f"the PR head merged {len(from_upstream)} default-branch commit(s) in "
        f"({len(merges)} merge commit(s)); its own changes are taken from {since[:10]}, "
        "the newest default-branch commit it holds"
    )
    return repo.diff(since, head)


def upstream_version(repo: GitRepo, repo_name: str, commit: str) -> str | None:
    name = repo_name.rsplit("/", 1)[-1]
    for path in _VERSION_FILES.get(repo_name, (f"{name}/__init__.py", "setup.py")):
        text = repo.read_file(commit, path)
        if text is None:
            continue
        match = _VERSION.search(text)
        if match:
            return match.group(1)
        numbers = _NUMVERSION.search(text)
        if numbers:
            return f"{numbers.group(1)}.{numbers.group(2)}"
    return None


def closest_version(found: str, known: list[str]) -> str | None:
    """The known version nearest `found` by major.minor (the lower one on a tie)."""
    if not known:
        return None
    parts = re.findall(r"\d+", found)[:2]
    want = tuple(int(p) for p in parts) + (0,) * (2 - len(parts))
    if ".".join(map(str, want)) in known:
        return ".".join(map(str, want))

    def distance(version: str) -> tuple[int, int, tuple[int, ...]]:
        key = (*version_key(version), 0, 0)[:2]
        return (abs(key[0] - want[0]), abs(key[1] - want[1]), key)

    return min(known, key=distance)


def find_base(
    repo: GitRepo, head: str, upstream: Upstream, aug: dict[str, str], d: Derivation
) -> str | None:
    """A non-Verified task's base: the merge-base, checked against UTBoost's `index` lines."""
    merge_base = repo.merge_base(head, upstream.tip)
    if merge_base is None:
        d.fail("base", "the PR head has no merge-base with the default branch")
        return None
    d.notes.append(f"merge-base of the PR head with the default branch: {merge_base[:10]}")
    if not aug:
        d.checks["base_index"] = "skipped: no index line to check against"
        return merge_base
    ok, notes = check_index(repo, merge_base, aug, "")
    if ok:
        d.checks["base_index"] = "ok: " + "; ".join(notes)
        return merge_base
    for candidate in candidate_bases(repo, merge_base, upstream.tip):
        found, _ = check_index(repo, candidate, aug, "")
        if found:
            d.checks["base_index"] = (
                f"ok after search: merge-base {merge_base[:10]} did not match "
                f"({'; '.join(notes)}); the nearby first-parent commit {candidate[:10]} does"
            )
            d.notes.append(f"base moved from the merge-base {merge_base[:10]} to {candidate[:10]}")
            return candidate
    d.fail(
        "base_index",
        f"no commit within {SEARCH_WINDOW} first-parent commits of {merge_base[:10]} has the "
        f"blobs UTBoost's index lines name ({'; '.join(notes)}); the merge-base is kept",
    )
    return merge_base


def derive(repo: GitRepo, data: SharedData, instance_id: str) -> Derivation:
    """Everything the corpus needs of one task, from the mirror and the shared data."""
    ensure_not_reserved(instance_id)
    d = Derivation(instance_id)
    try:
        _derive(repo, data, instance_id, d)
    except GitError as exc:
        d.fail("git", str(exc))
        d.row = None
    return d


def _derive(repo: GitRepo, data: SharedData, instance_id: str, d: Derivation) -> None:
    number = pr_number(instance_id)
    head = repo.resolve(f"refs/pull/{number}/head")
    if head is None:
        d.fail("pr_ref", f"refs/pull/{number}/head is not in the mirror")
        return
    d.checks["pr_ref"] = f"ok: refs/pull/{number}/head = {head[:10]}"
    upstream = upstream_of(repo, head)
    meta = data.metadata.get(instance_id)
    aug = index_lines(data.aug[instance_id].diff) if instance_id in data.aug else {}
    if meta is not None:
        base: str | None = meta["base_commit"]
        if repo.resolve(str(base)) is None:
            d.fail("base", f"base_commit {str(base)[:10]} is not in the mirror")
            return
    else:
        base = find_base(repo, head, upstream, aug, d)
    if base is None:
        return
    split = split_pr_diff(pr_diff(repo, base, head, upstream, d))
    if not split.tests:
        d.fail("test_patch", "the pull request changes no test file")
        return
    test_patch = split.test_patch
    d.checks["test_patch"] = "ok: " + ", ".join(f.path for f in split.tests)
    gold = _gold(data, instance_id, split, d)
    if meta is not None and aug:
        ok, notes = check_index(repo, base, aug, test_patch)
        d.checks["base_index"] = ("ok: " if ok else "failed: ") + "; ".join(notes)
        if not ok:
            d.problems.append("base_index: " + "; ".join(notes))
    if gold is None or not _applies(repo, base, gold, test_patch, d):
        return
    row = _row(repo, data, instance_id, base, head, upstream, gold, test_patch, d)
    d.row = row or None


def _gold(data: SharedData, instance_id: str, split: SplitDiff, d: Derivation) -> str | None:
    """Verified: the shared gold, checked against the PR's fix. Otherwise: the PR's code fix."""
    if data.verified(instance_id):
        gold = data.gold.get(instance_id, "")
        comparison = compare_with_gold(split.fix, gold)
        if comparison.matches:
            d.checks["gold"] = "ok: the PR's non-test part changes the same lines as gold"
        elif comparison.code_matches:
            docs = ", ".join(comparison.docs_only_in_pr)
            d.checks["gold"] = f"ok: same code changes as gold; the PR also changes docs ({docs})"
        else:
            d.fail("gold", "; ".join(comparison.problems()))
        return gold
    gold = join_files(split.code_fix)
    if not gold.strip():
        d.fail("gold", "the pull request changes no file outside the tests")
        return None
    left_out = [f.path for f in split.fix if is_doc_path(f.path)]
    left = f"; documentation left out: {', '.join(left_out)}" if left_out else ""
    d.checks["gold"] = f"ok: gold is the PR's non-test part (no Verified gold to compare){left}"
    return gold


def _applies(repo: GitRepo, base: str, gold: str, test_patch: str, d: Derivation) -> bool:
    applies = True
    for name, patch in (("gold_applies", gold), ("test_patch_applies", test_patch)):
        why = repo.applies(base, patch)
        if why is None:
            d.checks[name] = f"ok: applies to {base[:10]}"
        else:
            d.fail(name, why)
            applies = False
    return applies


def _row(
    repo: GitRepo,
    data: SharedData,
    instance_id: str,
    base: str,
    head: str,
    upstream: Upstream,
    gold: str,
    test_patch: str,
    d: Derivation,
) -> dict[str, Any]:
    meta = data.metadata.get(instance_id)
    repo_name = instance_id.rsplit("-", 1)[0].replace("__", "/")
    lists = data.lists.get(instance_id)
    if meta is not None:
        version = str(meta["version"])
        problem = data.problems.get(instance_id, "")
        difficulty = meta.get("difficulty")
    else:
        found = upstream_version(repo, repo_name, base)
        if found is None:
            d.fail("version", f"no package version found at {base[:10]}")
            return {}
        version = closest_version(found, data.versions(repo_name)) or found
        d.notes.append(f"package version at the base: {found}; row version {version}")
        problem = repo.messages(repo.merge_base(head, upstream.tip) or base, head).strip()
        d.notes.append("problem_statement: the PR's commit messages (no issue text in the data)")
        difficulty = None
    row: dict[str, Any] = {
        "instance_id": instance_id,
        "repo": repo_name,
        "base_commit": base,
        "patch": gold,
        "test_patch": test_patch,
        "FAIL_TO_PASS": list(lists.fail_to_pass) if lists else [],
        "PASS_TO_PASS": list(lists.pass_to_pass) if lists else [],
        "version": version,
        "problem_statement": problem,
        "hints_text": "",
    }
    if difficulty:
        row["difficulty"] = difficulty
    if lists is None:
        d.notes.append("FAIL_TO_PASS / PASS_TO_PASS: pending the classification step")
    python = data.python_of(repo_name, version)
    if python not in {"3.9", "3.11"}:
        d.fail("python", f"{repo_name} {version} has Python {python}, not 3.9 or 3.11")
    return row
