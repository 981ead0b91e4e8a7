"""Real images of upstream-style tasks: small git repositories made here stand in for mirrors.

Each repository gets three commits and the task's base commit is the middle one: the image must
hold that commit alone (HEAD, a one-commit history, the later commit unreachable), as uid 1000,
with the package installed without network on the base of the task's Python. Plain rows take
their environment from the shipped SWE-bench spec table (the repositories are named after real
ones for that). Needs a Docker engine; the first run builds the bullseye base (a few minutes)
and fills the wheelhouse.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import (
    BuildStatus,
    EnvBuildSettings,
    EnvironmentBuilder,
    build_images,
    default_builder,
)
from hackaudit.shared.contracts.task import EnvironmentSpec, Task
from hackaudit.shared.swebench_specs import with_spec
from tests.gitrepo import git_output as _git

pytestmark = pytest.mark.integration


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("repos")


@pytest.fixture(scope="module")
def builder(repos: Path) -> EnvironmentBuilder:
    if shutil.which("docker") is None or _docker("info").returncode != 0:
        message = "no Docker engine answers (see scripts/bootstrap.sh)"
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail(message)
        pytest.skip(message)
    return default_builder(EnvBuildSettings(repos=repos))


@pytest.fixture(scope="module")
def built_tags() -> Iterator[list[str]]:
    tags: list[str] = []
    yield tags
    for tag in tags:
        _docker("rmi", "--force", tag)


def _three_commits(work: Path, files: dict[str, str], module: str) -> list[str]:
    """Commits `files` three times, `module`/__init__.py saying which commit it is."""
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main")
    run = uuid.uuid4().hex  # a new image on every run
    commits = []
    for n in range(3):
        for name, text in files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
        (work / module).mkdir(exist_ok=True)
        (work / module / "__init__.py").write_text(f'COMMIT = {n}\nRUN = "{run}"\n')
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "-m", f"commit {n}")
        commits.append(_git(work, "rev-parse", "HEAD"))
    _git(work, "tag", "v9.9")
    return commits


def _plain(instance_id: str, repo: str, version: str, base_commit: str) -> Task:
    return with_spec(
        Task(
            instance_id=instance_id,
            repo=repo,
            version=version,
            base_commit=base_commit,
            patch="",
            test_patch="",
            FAIL_TO_PASS=["tests/test_it.py::test_it"],
        )
    )


def _in_image(image: str, script: str) -> list[str]:
    done = _docker("run", "--rm", "--network", "none", image, "bash", "-c", f"set -e; {script}")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


HISTORY_CHECK = (
    "id -u; git rev-parse HEAD; git rev-list --count HEAD; git log --oneline | wc -l; "
    "git for-each-ref --format='%(refname)'; git remote | wc -l; "
    "if git cat-file -e {later} 2>/dev/null; then echo reachable; else echo unreachable; fi"
)


def test_a_plain_row_builds_from_the_table_on_python_39_at_its_base_commit(
    builder: EnvironmentBuilder, repos: Path, built_tags: list[str]
) -> None:
    # psf/requests 2.27 in the table: Python 3.9, pytest, `python -m pip install .`
    files = {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\n'
        'build-backend = "setuptools.build_meta"\n\n[project]\nname = "tinyreq"\n'
        'version = "0.1"\n',
        "tests/test_it.py": "import tinyreq\n\n\ndef test_it():\n    assert tinyreq.COMMIT == 1\n",
    }
    commits = _three_commits(repos / "psf" / "requests", files, "tinyreq")
    task = _plain("psf__requests-1", "psf/requests", "2.27", commits[1])
    assert task.environment is not None and task.environment.python == "3.9"

    [outcome] = build_images([task], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    assert outcome.image is not None
    built_tags.append(outcome.image)
    lines = _in_image(
        outcome.image,
        HISTORY_CHECK.format(later=commits[2])
        + "; python -c 'import sys, tinyreq; print(sys.version_info[:2], tinyreq.COMMIT)'"
        + "; python -m pytest -q -p no:cacheprovider tests 2>&1 | tail -n 1",
    )
    assert lines[:7] == ["1000", commits[1], "1", "1", "refs/heads/main", "0", "unreachable"]
    assert lines[7] == "(3, 9) 1"
    assert "1 passed" in lines[8]


def test_an_editable_scm_versioned_package_on_python_311_from_a_bare_mirror(
    builder: EnvironmentBuilder, repos: Path, tmp_path: Path, built_tags: list[str]
) -> None:
    # pallets/flask 2.3 in the table: Python 3.11, requirements/dev.txt, pinned packages.
    files = {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools>=64", "setuptools_scm>=8"]\n'
        'build-backend = "setuptools.build_meta"\n\n[project]\nname = "tinyscm"\n'
        'dynamic = ["version"]\n\n[tool.setuptools]\npackages = ["tinyscm"]\n\n'
        "[tool.setuptools_scm]\n",
        "requirements/dev.txt": "-r tests.txt\n-e .\n",
        "requirements/tests.txt": "pytest\n",
    }
    commits = _three_commits(tmp_path / "work", files, "tinyscm")
    mirror = repos / "pallets+flask" / "repo"
    _git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "work"), str(mirror))
    task = _plain("pallets__flask-1", "pallets/flask", "2.3", commits[1])
    assert task.environment is not None and task.environment.python == "3.11"

    [outcome] = build_images([task], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    assert outcome.image is not None
    built_tags.append(outcome.image)
    lines = _in_image(
        outcome.image,
        HISTORY_CHECK.format(later=commits[2])
        + "; python -c 'import sys, tinyscm, importlib.metadata as m; "
        'print(sys.version_info[:2], tinyscm.COMMIT, m.version("tinyscm"), tinyscm.__file__)\''
        + "; python -c 'import werkzeug; print(werkzeug.__version__)'"
        + "; command -v pytest",
    )
    assert lines[:7] == ["1000", commits[1], "1", "1", "refs/heads/main", "0", "unreachable"]
    assert lines[7] == "(3, 11) 1 2.3 /testbed/tinyscm/__init__.py"
    assert lines[8] == "2.3.7"
    assert lines[9] == "/opt/venv/bin/pytest"


def test_a_commit_the_mirror_lacks_is_a_clear_error(
    builder: EnvironmentBuilder, repos: Path
) -> None:
    missing = "f" * 40
    task = _plain("psf__requests-missing", "psf/requests", "2.27", missing)

    [outcome] = build_images([task], builder=builder)

    assert outcome.status is BuildStatus.FAILED
    assert "psf__requests-missing" in outcome.reason
    assert str(repos / "psf" / "requests") in outcome.reason and missing in outcome.reason


def test_a_python_with_no_debian_base_and_no_image_is_a_clear_error(
    builder: EnvironmentBuilder, repos: Path
) -> None:
    absent = f"hackaudit-tests/no-python-{uuid.uuid4().hex[:8]}:{{version}}"
    builder = default_builder(EnvBuildSettings(repos=repos, python_image=absent))
    # The task's own Python wins over the table's 3.9 (as astropy 1.3's 3.6 would come).
    task = _plain("psf__requests-36", "psf/requests", "2.27", "0" * 40)
    task = task.model_copy(update={"environment": EnvironmentSpec(python="3.6")})

    [outcome] = build_images([task], builder=builder)

    assert outcome.status is BuildStatus.FAILED
    assert "Python 3.6" in outcome.reason
    assert absent.replace("{version}", "3.6") in outcome.reason
    assert "HACKAUDIT_PYTHON_IMAGE" in outcome.reason
