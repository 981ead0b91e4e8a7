"""Upstream builds on fakes do what SWE-bench's harness does: requirement files installed as a
stage of their own, `pip install .` made editable, a path-based editable install without
pyproject.toml, setup.py requirements as the pre-install seds leave them, resolved against the
repository's own version, and the venv's packages for the python `tox --current-env` links to."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hackaudit.sandbox.envbuild import BuildStatus, EnvironmentBuilder, build_images
from hackaudit.sandbox.envbuild.fakes import FakeImageEngine, FakeWheelSource
from hackaudit.sandbox.envbuild.requirements import project_name
from hackaudit.shared.contracts.task import Task

SPHINX_SETUP = """from setuptools import setup
install_requires = ['sphinxcontrib-applehelp', 'Jinja2>=2.3']
extras_require = {'test': ['pytest']}
setup(name='Sphinx', install_requires=install_requires, extras_require=extras_require)
"""


def _repo(repos: Path, name: str, files: dict[str, str]) -> str:
    repo = repos / name
    repo.mkdir(parents=True)
    for path, text in files.items():
        (repo / path).write_text(text)

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    return git("rev-parse", "HEAD")


def _task(repo: str, version: str, base_commit: str) -> Task:
    return Task.model_validate(
        {
            "instance_id": f"{repo.replace('/', '__')}-1",
            "repo": repo,
            "version": version,
            "base_commit": base_commit,
            "patch": "",
            "test_patch": "",
            "FAIL_TO_PASS": ["test_x"],
        }
    )


def _pip_runs(dockerfile: str) -> list[list[str]]:
    return [
        json.loads(line.removeprefix("RUN "))
        for line in dockerfile.splitlines()
        if line.startswith('RUN ["/opt/venv/bin/pip"')
    ]


def test_requirement_files_are_a_stage_before_the_pip_packages(
    builder: EnvironmentBuilder, engine: FakeImageEngine, wheels: FakeWheelSource, repos: Path
) -> None:
    commit = _repo(
        repos,
        "pylint-dev/pylint",
        {
            "requirements_test.txt": "-e .[testutils]\nastroid==3.0.0a8\npytest~=7.4\n",
            "pyproject.toml": '[project]\nname = "pylint"\ndependencies = ["astroid>=3.0.0a8"]\n',
        },
    )

    [outcome] = build_images([_task("pylint-dev/pylint", "3.0", commit)], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    assert wheels.calls[0] == ("astroid==3.0.0a8", "pytest~=7.4")
    assert "astroid==3.0.0a6" in wheels.calls[1]
    assert "astroid==3.0.0a8" not in wheels.calls[1]
    runs = _pip_runs(engine.builds[0].dockerfile)
    assert runs[0][-2:] == ["astroid==3.0.0a8", "pytest~=7.4"]
    assert "astroid==3.0.0a6" in runs[1]
    # pyproject.toml exists: pip makes a PEP 660 install, no path-based mode is forced.
    assert "PIP_CONFIG_SETTINGS" not in engine.builds[0].dockerfile


def test_a_repository_without_pyproject_gets_a_path_based_editable_install(
    builder: EnvironmentBuilder, engine: FakeImageEngine, repos: Path
) -> None:
    commit = _repo(repos, "pylint-dev/pylint", {"setup.py": "from setuptools import setup\n"})

    [outcome] = build_images([_task("pylint-dev/pylint", "2.15", commit)], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    assert "export PIP_CONFIG_SETTINGS=editable_mode=compat" in engine.builds[0].dockerfile


def test_a_non_editable_self_install_is_made_editable(
    builder: EnvironmentBuilder, engine: FakeImageEngine, repos: Path
) -> None:
    commit = _repo(repos, "psf/requests", {"setup.py": "from setuptools import setup\n"})

    [outcome] = build_images([_task("psf/requests", "1.1", commit)], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    text = engine.builds[0].dockerfile
    assert "python -m pip install --no-build-isolation -e ." in text
    assert "hackaudit-venv.pth" not in text


def test_setup_py_requirements_are_resolved_as_edited_against_the_own_version(
    builder: EnvironmentBuilder, engine: FakeImageEngine, wheels: FakeWheelSource, repos: Path
) -> None:
    commit = _repo(repos, "sphinx-doc/sphinx", {"setup.py": SPHINX_SETUP, "tox.ini": "x\n"})

    [outcome] = build_images([_task("sphinx-doc/sphinx", "3.0", commit)], builder=builder)

    assert outcome.status is BuildStatus.BUILT, outcome.reason
    install = wheels.calls[-1]
    assert install == ("sphinxcontrib-applehelp<=1.0.7", "Jinja2<3.0", "pytest")
    assert wheels.constraints[-1] == ("Sphinx==3.0.*",)
    assert wheels.constraints[0] == ()
    # The spec's test command is `tox --current-env`: the system python sees the venv.
    assert "hackaudit-venv.pth" in engine.builds[0].dockerfile


def test_project_name_comes_from_the_first_file_that_names_it() -> None:
    assert project_name('[project]\nname = "pylint"\n', None, None) == "pylint"
    assert project_name(None, "[metadata]\nname = astroid\n", None) == "astroid"
    assert project_name(None, None, SPHINX_SETUP) == "Sphinx"
    assert project_name(None, None, "setup(name=NAME)") is None
