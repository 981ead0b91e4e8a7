"""Builds of upstream repositories on fakes: spec-driven inputs, per-Python bases, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import BuildStatus, EnvironmentBuilder, build_images
from hackaudit.sandbox.envbuild.fakes import FakeBaseImages, FakeImageEngine, FakeWheelSource
from hackaudit.shared.contracts.task import EnvironmentSpec, Task
from tests.gitrepo import git_output as _git


@pytest.fixture
def commits(repos: Path) -> list[str]:
    """sympy/sympy as a tiny work tree: the later commit changes its requirements."""
    repo = repos / "sympy" / "sympy"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=40.8", "wheel"]\n'
    )
    (repo / "setup.py").write_text("from setuptools import setup\nsetup(name='sympy')\n")
    found = []
    for requirement in ("mpmath", "mpmath>=9"):
        (repo / "requirements-dev.txt").write_text(f"-e .\n{requirement}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", requirement)
        found.append(_git(repo, "rev-parse", "HEAD"))
    return found


def _plain(base_commit: str, **fields: object) -> Task:
    row: dict[str, object] = {
        "instance_id": "sympy__sympy-1",
        "repo": "sympy/sympy",
        "version": "1.7",
        "base_commit": base_commit,
        "patch": "",
        "test_patch": "",
        "FAIL_TO_PASS": ["test_x"],
    }
    row.update(fields)
    return Task.model_validate(row)


def test_a_plain_row_is_built_from_its_spec_on_the_base_of_its_python(
    builder: EnvironmentBuilder,
    engine: FakeImageEngine,
    wheels: FakeWheelSource,
    commits: list[str],
) -> None:
    [outcome] = build_images([_plain(commits[0])], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    [build] = engine.builds
    assert build.dockerfile.splitlines()[1] == "FROM base/bullseye"
    assert set(wheels.targets) == {("3.9", 31)}
    packages = set(wheels.calls[0])
    assert {"mpmath", "flake8", "mpmath==1.3.0", "flake8-comprehensions"} <= packages
    assert {"pip", "setuptools", "wheel", "setuptools>=40.8"} <= packages
    assert "export SETUPTOOLS_SCM_PRETEND_VERSION=1.7" in build.dockerfile
    assert "python -m pip install --no-build-isolation -e ." in build.dockerfile
    assert "testbed/.git/shallow" in build.members
    assert build.labels["hackaudit.base_commit"] == commits[0]
    assert build.labels["hackaudit.source"] == "upstream"


def test_requirement_files_are_read_at_base_commit(
    builder: EnvironmentBuilder, wheels: FakeWheelSource, commits: list[str]
) -> None:
    task = _plain(commits[0], environment={"requirements_files": ["requirements-dev.txt"]})

    build_images([task], builder=builder)

    assert "mpmath" in wheels.calls[0]
    assert "mpmath>=9" not in wheels.calls[0]
    assert not any(p.startswith("-e") or p == "." for p in wheels.calls[0])


def test_pre_install_runs_before_install_and_network_steps_are_skipped_and_recorded(
    builder: EnvironmentBuilder, engine: FakeImageEngine, commits: list[str]
) -> None:
    steps = ["apt-get update && apt-get install -y locales", "sed -i 's/a/b/' setup.py"]
    task = _plain(commits[0], environment={"pre_install": steps})

    [outcome] = build_images([task], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    text = engine.builds[0].dockerfile
    assert "apt-get" not in text
    assert text.index("sed -i") < text.index("pip install --no-build-isolation -e .")
    assert json.loads(engine.builds[0].labels["hackaudit.skipped_pre_install"]) == steps[:1]


def test_the_base_commit_and_python_decide_the_tag(
    builder: EnvironmentBuilder, commits: list[str]
) -> None:
    first, second, on_311 = build_images(
        [
            _plain(commits[0]),
            _plain(commits[1], instance_id="sympy__sympy-2"),
            _plain(commits[0], instance_id="sympy__sympy-3", environment={"python": "3.11"}),
        ],
        builder=builder,
    )

    assert len({first.image, second.image, on_311.image}) == 3


def test_an_unknown_version_fails_that_task_naming_repo_and_version(
    builder: EnvironmentBuilder, commits: list[str]
) -> None:
    unknown, known = build_images(
        [_plain(commits[0], version="0.0"), _plain(commits[0], instance_id="ok")],
        builder=builder,
    )

    assert unknown.status is BuildStatus.FAILED
    assert "sympy/sympy" in unknown.reason and "version 0.0" in unknown.reason
    assert known.status is BuildStatus.BUILT


def test_without_a_repos_folder_the_error_says_what_to_set(
    engine: FakeImageEngine, wheels: FakeWheelSource, commits: list[str]
) -> None:
    builder = EnvironmentBuilder(engine=engine, base_images=FakeBaseImages(), wheels=wheels)

    [outcome] = build_images([_plain(commits[0])], builder=builder)

    assert outcome.status is BuildStatus.FAILED
    assert "HACKAUDIT_REPOS" in outcome.reason and "--repos" in outcome.reason


def test_a_python_without_base_or_image_names_the_python_and_the_setting(
    builder: EnvironmentBuilder, commits: list[str]
) -> None:
    task = _plain(commits[0], environment={"python": "3.6"})

    [outcome] = build_images([task], builder=builder)

    assert outcome.status is BuildStatus.FAILED
    assert "Python 3.6" in outcome.reason
    assert "python:3.6-slim" in outcome.reason and "HACKAUDIT_PYTHON_IMAGE" in outcome.reason


def test_an_image_for_another_python_gets_the_runner_user(
    engine: FakeImageEngine, builder: EnvironmentBuilder, commits: list[str]
) -> None:
    engine.images["python:3.8-slim"] = "sha256:py38"
    task = _plain(commits[0], environment=EnvironmentSpec(python="3.8", install=None))

    [outcome] = build_images([task], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    text = engine.builds[0].dockerfile
    assert "FROM python:3.8-slim" in text
    assert "useradd --create-home --uid 1000" in text


@pytest.mark.parametrize(
    ("with_setup_py", "expected", "absent"),
    [(False, "setuptools>=64", "setuptools~=62.6"), (True, "setuptools~=62.6", "setuptools>=64")],
)
def test_a_pyproject_only_repository_gets_a_setuptools_with_editable_wheels(
    builder: EnvironmentBuilder,
    wheels: FakeWheelSource,
    repos: Path,
    with_setup_py: bool,
    expected: str,
    absent: str,
) -> None:
    # pylint 2.15: no setup.py and `setuptools~=62.6`, which cannot install it in editable mode
    repo = repos / "sympy" / "sympy"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools~=62.6", "wheel~=0.37.1"]\n'
        'build-backend = "setuptools.build_meta"\n[project]\nname = "sympy"\n'
    )
    if with_setup_py:  # an old setuptools installs it through setup.py: the pin is kept
        (repo / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "pyproject")

    [outcome] = build_images([_plain(_git(repo, "rev-parse", "HEAD"))], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    packages = set(wheels.calls[-1])
    assert expected in packages and absent not in packages
    assert "wheel~=0.37.1" in packages
