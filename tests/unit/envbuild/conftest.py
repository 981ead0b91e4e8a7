"""A tiny repository folder, and its base commit computed with the corpus's own shell recipe."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import EnvironmentBuilder
from hackaudit.sandbox.envbuild.fakes import FakeBaseImages, FakeImageEngine, FakeWheelSource

CORPUS_RECIPE = (
    "git init -q -b main && git add -A && "
    "GIT_AUTHOR_DATE='2026-01-01T00:00:00+0000' GIT_COMMITTER_DATE='2026-01-01T00:00:00+0000' "
    "git -c user.name=hackaudit -c user.email=examples@hackaudit.invalid "
    "-c commit.gpgsign=false commit -q -m base && git rev-parse HEAD"
)


def _corpus_commit(source: Path, scratch: Path) -> str:
    copy = scratch / f"corpus-copy-{len(list(scratch.glob('corpus-copy-*')))}"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    done = subprocess.run(
        ["bash", "-c", CORPUS_RECIPE], cwd=copy, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def corpus_commit(tmp_path: Path) -> Callable[[Path], str]:
    """The commit the example corpus computes for a folder, by its documented shell recipe."""
    scratch = tmp_path / "corpus"
    scratch.mkdir()
    return lambda source: _corpus_commit(source, scratch)


@pytest.fixture
def tiny_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "tinylib"
    (repo / "tinylib").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "tinylib" / "__init__.py").write_text("from tinylib.core import double\n")
    (repo / "tinylib" / "core.py").write_text("def double(x):\n    return 2 * x\n")
    (repo / "tests" / "test_core.py").write_text(
        "from tinylib import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    )
    (repo / "run.sh").write_text("#!/bin/sh\necho run\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "tinylib" / "__pycache__").mkdir()
    (repo / "tinylib" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\x00stale")
    (repo / ".pytest_cache").mkdir()
    (repo / ".pytest_cache" / "README.md").write_text("cache\n")
    return repo


# Builders over fakes with a folder of mirrors, for the spec-driven and staged builds (a test
# module that needs other fakes defines its own fixtures of these names).
@pytest.fixture
def engine() -> FakeImageEngine:
    return FakeImageEngine(images={"base/bullseye": "sha256:b9", "base/bookworm": "sha256:b11"})


@pytest.fixture
def wheels() -> FakeWheelSource:
    return FakeWheelSource()


@pytest.fixture
def repos(tmp_path: Path) -> Path:
    return tmp_path / "repos"


@pytest.fixture
def builder(engine: FakeImageEngine, wheels: FakeWheelSource, repos: Path) -> EnvironmentBuilder:
    return EnvironmentBuilder(
        engine=engine, base_images=FakeBaseImages(), wheels=wheels, repos=repos
    )
