"""Repositories that compile extensions when installed (astropy: Cython and C sources) start from
a base with a C compiler and the Python headers; the others keep the plain base."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import BaseImageUnavailable, EnvironmentBuilder
from hackaudit.sandbox.envbuild.base_image import FixedBaseImage, ScriptBaseImage
from hackaudit.sandbox.envbuild.bases import base_target
from hackaudit.sandbox.envbuild.fakes import FakeBaseImages, FakeImageEngine, FakeWheelSource
from hackaudit.sandbox.envbuild.requirements import declared_requirements, needs_compiler
from hackaudit.shared.contracts.task import Task

REPO_ROOT = Path(__file__).resolve().parents[3]
ASTROPY_PYPROJECT = (
    '[build-system]\nrequires = ["setuptools", "setuptools_scm>=6.2", "wheel",\n'
    '  "cython==0.29.30", "oldest-supported-numpy", "extension-helpers"]\n'
)


@pytest.mark.parametrize(
    ("pyproject", "setup_py", "expected"),
    [
        (ASTROPY_PYPROJECT, None, True),
        ('[build-system]\nrequires = ["setuptools>=40", "Cython"]\n', None, True),
        ('[build-system]\nrequires = ["setuptools", "wheel"]\n', None, False),
        (None, "from setuptools import setup\nsetup(name='sympy')\n", False),
        (None, "from setuptools import Extension, setup\nsetup(ext_modules=[])\n", True),
        (None, "ext = Extension('fast', ['fast.c'])\n", True),
        (None, "from Cython.Build import cythonize\nsetup(ext_modules=cythonize('x.pyx'))\n", True),
        ("not toml [", None, False),
        (None, None, False),
    ],
)
def test_a_repository_needs_a_compiler_when_its_build_compiles(
    pyproject: str | None, setup_py: str | None, expected: bool
) -> None:
    assert needs_compiler(pyproject, setup_py) is expected


def test_a_compiler_base_is_its_own_target_and_image_references_stay_as_they_are() -> None:
    plain = base_target("3.9", None)
    compiled = plain.with_compiler()

    assert compiled.suite == "bullseye" and compiled.compiler
    assert compiled.key != plain.key
    assert "C compiler" in compiled.describe()
    image = base_target("3.6", None)
    assert image.with_compiler() == image


def test_the_script_is_asked_for_the_compiler_variant_once(tmp_path: Path) -> None:
    script = tmp_path / "base.sh"
    count = tmp_path / "count"
    script.write_text(
        f'echo run >> {count}\necho "base/$HACKAUDIT_BASE_SUITE-$HACKAUDIT_BASE_COMPILER"\n'
    )
    source = ScriptBaseImage(script)
    compiled = base_target("3.9", None).with_compiler()

    assert source.base_image(base_target("3.9", None)) == "base/bullseye-0"
    assert source.base_image(compiled) == "base/bullseye-1"
    assert source.base_image(compiled) == "base/bullseye-1"
    assert len(count.read_text().splitlines()) == 2


def test_a_fixed_base_tag_refuses_a_build_that_compiles() -> None:
    with pytest.raises(BaseImageUnavailable, match="unset HACKAUDIT_BASE_IMAGE"):
        FixedBaseImage("mine/base:1", suite="bullseye").base_image(
            base_target("3.9", None).with_compiler()
        )


def test_the_base_script_names_the_compiler_variant_apart() -> None:
    text = (REPO_ROOT / "scripts" / "base-image.sh").read_text()

    assert 'packages="$packages,gcc,libc6-dev,python3-dev"' in text
    assert 'tag="hackaudit/base:${suite}${variant}-${recipe_hash}"' in text


def _mirror(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    work = tmp_path / "repos" / "acme+lib" / "repo"
    work.mkdir(parents=True)
    for name, text in files.items():
        (work / name).write_text(text)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, check=True)
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    subprocess.run(["git", *env, "commit", "-q", "-m", "base"], cwd=work, check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=work, check=True, capture_output=True, text=True
    )
    return tmp_path / "repos", head.stdout.strip()


def _task(commit: str, install: str | None) -> Task:
    environment: dict[str, object] = {"python": "3.9", "install": install}
    return Task.model_validate(
        {
            "instance_id": "acme__lib-1",
            "repo": "acme/lib",
            "base_commit": commit,
            "patch": "",
            "test_patch": "",
            "FAIL_TO_PASS": ["tests/test_x.py::test_x"],
            "PASS_TO_PASS": [],
            "environment": environment,
        }
    )


@pytest.mark.parametrize(
    ("pyproject", "install", "compiler"),
    [
        (ASTROPY_PYPROJECT, "python -m pip install -e .[test]", True),
        ('[build-system]\nrequires = ["setuptools"]\n', "python -m pip install -e .", False),
        (ASTROPY_PYPROJECT, None, False),
    ],
)
def test_the_builder_asks_for_the_compiler_base_only_when_the_install_compiles(
    tmp_path: Path, pyproject: str, install: str | None, compiler: bool
) -> None:
    repos, commit = _mirror(tmp_path, {"pyproject.toml": pyproject, "lib.py": "x = 1\n"})
    bases = FakeBaseImages()
    builder = EnvironmentBuilder(
        engine=FakeImageEngine(images={"base/bullseye": "sha256:b9"}),
        base_images=bases,
        wheels=FakeWheelSource(),
        repos=repos,
    )

    outcome = builder.build([_task(commit, install)])[0]

    assert outcome.image is not None, outcome.reason
    assert [t.compiler for t in bases.asked] == [compiler]


def test_comments_in_setup_cfg_extras_are_not_requirements() -> None:
    setup_cfg = (
        "[options]\ninstall_requires =\n    numpy>=1.20\n\n[options.extras_require]\n"
        "test =\n    # Required to run the astropy test suite.\n    pytest>=7.0  # the runner\n"
        "    pytest-xdist\n"
    )

    assert declared_requirements(None, setup_cfg, ("test",)) == (
        "numpy>=1.20",
        "pytest>=7.0",
        "pytest-xdist",
    )
