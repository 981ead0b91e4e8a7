"""Fixtures for the attacker's unit tests: a tiny git repository with a gold and a test patch.

The repository is real (git in a temp directory) so every diff a strategy produces can be checked
with `git apply --check` at the base commit, and `LocalSandbox` can grade candidates by actually
applying them and running pytest — a fake sandbox in that it uses no container. A probe or a
wider-suite run executes the command the sandbox builds for its invocation (`command_for`).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from hackaudit.sandbox.domain.run_spec import graded_task, run_test_patch
from hackaudit.sandbox.domain.runners import RunnerInvocation, command_for
from hackaudit.shared.contracts import (
    Coverage,
    Grade,
    PatchFlags,
    RunCompleted,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)
from hackaudit.shared.runners import RunnerKind

BASE = {
    "pkg/__init__.py": '"""A tiny package."""\n',
    "pkg/core.py": '''"""Core helpers."""

import math


def clamp(value, low, high):
    """Clamp value into [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def is_even(n):
    return n % 2 == 1


def mean(values):
    total = 0
    for v in values:
        total += v
    return total / len(values)


class Box:
    def __init__(self, size):
        self.size = size

    def area(self):
        return self.size * self.size
''',
    "tests/__init__.py": "",
    "tests/test_core.py": """from pkg.core import clamp


def test_clamp():
    assert clamp(5, 0, 10) == 5
""",
}

GOLD_EDITS = [
    (
        "pkg/core.py",
        "    return n % 2 == 1\n",
        "    if n is None:\n        return False\n    return n % 2 == 0\n",
    ),
    (
        "pkg/core.py",
        "    return total / len(values)\n",
        "    if not values:\n        return 0.0\n    return total / len(values)\n",
    ),
    ("pkg/core.py", "        return self.size * self.size\n", "        return self.size ** 2\n"),
]

TEST_FILES = {
    "tests/test_core.py": """from pkg.core import clamp, is_even, mean


def test_clamp():
    assert clamp(5, 0, 10) == 5


def test_is_even():
    assert is_even(4) == True
    assert is_even(3) == False
    assert is_even(None) is False


def test_mean_empty():
    assert mean([]) == 0.0
""",
    "tests/test_new.py": """import pytest

from pkg.core import mean


@pytest.mark.parametrize("values, expected", [([1, 2, 3], 2.0), ([4], 4.0)])
def test_mean(values, expected):
    assert mean(values) == expected


class TestBox:
    def test_area(self):
        from pkg.core import Box

        assert Box(3).area() == 9
""",
}

FAIL_TO_PASS = [
    "tests/test_core.py::test_is_even",
    "tests/test_new.py::test_mean[values0-2.0]",
    "tests/test_new.py::test_mean[values1-4.0]",
    "tests/test_new.py::TestBox::test_area",
]
PASS_TO_PASS = ["tests/test_core.py::test_clamp"]
TEST_COMMAND = "python -m pytest -rA -p no:cacheprovider tests/test_core.py tests/test_new.py"


def git(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args],
        cwd=repo,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)
    assert git(root, "init", "-q").returncode == 0
    git(root, "add", "-A")
    assert git(root, "commit", "-qm", "base").returncode == 0
    return root


def diff_of(repo: Path, changes: dict[str, str], paths: list[str]) -> str:
    """The diff that turns the repository's files into `changes` (then restores them)."""
    for path, content in changes.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(content)
    git(repo, "add", "-N", ".")
    text = git(repo, "diff", "--", *paths).stdout
    git(repo, "reset", "-q")
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "clean", "-qfd")
    return text


@dataclass(frozen=True)
class TinyTask:
    repo: Path
    task: Task

    def applies(self, diff: str) -> tuple[bool, str]:
        done = git(self.repo, "apply", "--check", "-", stdin=diff)
        return done.returncode == 0, done.stderr


def build_tiny(root: Path) -> TinyTask:
    repo = make_repo(root, BASE)
    core = BASE["pkg/core.py"]
    for _, old, new in GOLD_EDITS:
        core = core.replace(old, new)
    gold = diff_of(repo, {"pkg/core.py": core}, ["pkg"])
    tests = diff_of(repo, TEST_FILES, ["tests"])
    task = Task(
        instance_id="tiny__pkg-1",
        repo="example/tiny",
        base_commit=git(repo, "rev-parse", "HEAD").stdout.strip(),
        patch=gold,
        test_patch=tests,
        FAIL_TO_PASS=FAIL_TO_PASS,
        PASS_TO_PASS=PASS_TO_PASS,
        problem_statement="is_even is wrong and mean fails on an empty list.",
        test_command=TEST_COMMAND,
    )
    return TinyTask(repo=repo, task=task)


# --- a sandbox that really applies and runs, without containers -----------------------------

_SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL) (\S+)", re.MULTILINE)
_UNITTEST_LINE = re.compile(r"^(test.*?) \.\.\. (ok|FAIL|ERROR)$", re.MULTILINE)
_UNITTEST_RESULTS = {"ok": TestStatus.PASSED, "FAIL": TestStatus.FAILED, "ERROR": TestStatus.ERROR}


def _touched(diff: str) -> list[str]:
    return sorted(set(re.findall(r"^\+\+\+ b/(\S+)", diff, re.MULTILINE)))


class LocalSandbox:
    """Grades a request in a throwaway copy of the repository: apply, apply tests, run pytest."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.requests: list[RunRequested] = []

    async def run(self, request: RunRequested) -> RunCompleted:
        self.requests.append(request)
        results = [await asyncio.to_thread(self._timed, request) for _ in range(request.repeats)]
        return RunCompleted(
            correlation_id=request.correlation_id,
            instance_id=request.task.instance_id,
            purpose=request.purpose,
            request_key=request.idempotency_key,
            candidate_id=request.candidate.candidate_id if request.candidate else None,
            results=tuple(results),
        )

    def _timed(self, request: RunRequested) -> RunResult:
        """One run, with the seconds it took (as the sandbox reports a run's duration)."""
        started = time.monotonic()
        result = self._once(request)
        return result.model_copy(update={"duration_s": round(time.monotonic() - started, 3)})

    def _once(self, request: RunRequested) -> RunResult:
        if isinstance(request.invocation, Coverage):
            return RunResult(status=RunStatus.COMPLETED, reason="no coverage.py here")
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp) / "repo"
            shutil.copytree(self.repo, work)
            diff = request.candidate.diff if request.candidate else ""
            if diff.strip() and git(work, "apply", "-", stdin=diff).returncode != 0:
                return RunResult(status=RunStatus.PATCH_FAILED, reason="candidate did not apply")
            test_patch = run_test_patch(request.task, request.invocation, request.test_patch)
            if git(work, "apply", "-", stdin=test_patch).returncode != 0:
                return RunResult(status=RunStatus.PATCH_FAILED, reason="test patch did not apply")
            env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
            env.pop("PYTEST_ADDOPTS", None)
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
            try:
                done = subprocess.run(
                    _command(request, test_patch).command,
                    shell=True,
                    cwd=work,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
            except subprocess.TimeoutExpired:
                return RunResult(status=RunStatus.TIMEOUT)
        tests = {name: TestStatus(status) for status, name in _SUMMARY.findall(done.stdout)}
        if _command(request, test_patch).parser == "unittest":
            tests = {
                name: _UNITTEST_RESULTS[result]
                for name, result in _UNITTEST_LINE.findall(done.stderr + done.stdout)
            }
        task = graded_task(request.task, request.invocation)
        graded = [*task.fail_to_pass, *task.pass_to_pass]
        touched = _touched(diff)
        return RunResult(
            status=RunStatus.COMPLETED,
            resolved=all(tests.get(t) is TestStatus.PASSED for t in graded),
            tests=tests,
            exit_code=done.returncode,
            log_tail=done.stdout[-20000:],
            flags=PatchFlags(
                touched_test_files=tuple(p for p in touched if p.startswith("tests/"))
            ),
        )


def _command(request: RunRequested, test_patch: str) -> RunnerInvocation:
    """The command a run executes here: a graded run's is the task's own command as it stands
    (no directives added); every other invocation's is the sandbox's."""
    if isinstance(request.invocation, Grade):
        command = request.task.test_command or TEST_COMMAND
        parser = request.task.log_parser or "pytest"
        return RunnerInvocation(
            kind=RunnerKind.PYTEST, parser=parser, command=command, directives=()
        )
    return command_for(request.task, request.invocation, test_patch, None)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyTask:
    """The tiny task: a real git repository at its base commit, gold and test patch."""
    return build_tiny(tmp_path_factory.mktemp("tiny") / "repo")


@pytest.fixture
def local_sandbox(tiny: TinyTask) -> LocalSandbox:
    return LocalSandbox(tiny.repo)


@pytest.fixture
def git_repo(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Builds a committed git repository from a {path: content} mapping; returns a checker."""

    def build(files: dict[str, str]) -> TinyTask:
        repo = make_repo(tmp_path / "custom", files)
        task = Task(
            instance_id="custom-1",
            repo="x/y",
            base_commit="HEAD",
            patch="",
            test_patch="",
            FAIL_TO_PASS=["t"],
        )
        return TinyTask(repo=repo, task=task)

    return build
