"""A real image from a tiny repository: HEAD is base_commit, pytest runs offline as runner.

Needs a Docker engine, the base image (made by scripts/base-image.sh, or named by
HACKAUDIT_BASE_IMAGE) and pytest's wheels in the wheelhouse (downloaded once if missing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import (
    BaseCommitMismatch,
    BuildStatus,
    EnvironmentBuilder,
    build_images,
    default_builder,
    resolve_image,
)
from hackaudit.shared.contracts.task import EnvironmentSpec, Task

pytestmark = pytest.mark.integration

CORPUS_RECIPE = (
    "git init -q -b main && git add -A && "
    "GIT_AUTHOR_DATE='2026-01-01T00:00:00+0000' GIT_COMMITTER_DATE='2026-01-01T00:00:00+0000' "
    "git -c user.name=hackaudit -c user.email=examples@hackaudit.invalid "
    "-c commit.gpgsign=false commit -q -m base && git rev-parse HEAD"
)


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def builder() -> EnvironmentBuilder:
    if shutil.which("docker") is None or _docker("info").returncode != 0:
        message = "no Docker engine answers (see scripts/bootstrap.sh)"
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail(message)
        pytest.skip(message)
    return default_builder()


@pytest.fixture
def tiny_repo(tmp_path: Path) -> Path:
    """A small installable package whose content is unique to this run, so its image is new."""
    repo = tmp_path / "tinylib"
    (repo / "tinylib").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "tinylib" / "__init__.py").write_text(
        f'RUN = "{uuid.uuid4().hex}"\n\n\ndef double(x):\n    return 2 * x\n'
    )
    (repo / "tests" / "test_core.py").write_text(
        "from tinylib import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    )
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '\n[project]\nname = "tinylib"\nversion = "0.1"\n'
    )
    (repo / "tinylib" / "__pycache__").mkdir()
    (repo / "tinylib" / "__pycache__" / "stale.pyc").write_bytes(b"\x00")
    return repo


def _corpus_commit(source: Path, scratch: Path) -> str:
    copy = scratch / "corpus-copy"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    done = subprocess.run(
        ["bash", "-c", CORPUS_RECIPE], cwd=copy, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _task(instance_id: str, source: Path, base_commit: str) -> Task:
    return Task(
        instance_id=instance_id,
        repo="hackaudit-tests/tinylib",
        base_commit=base_commit,
        patch="",
        test_patch="",
        FAIL_TO_PASS=["tests/test_core.py::test_double"],
        environment=EnvironmentSpec(source=str(source), pip_packages=("pytest",)),
    )


def _in_image(image: str, script: str) -> subprocess.CompletedProcess[str]:
    return _docker(
        "run", "--rm", "--network", "none", "--user", "runner", image, "bash", "-c", script
    )


@pytest.fixture
def built_tags() -> Iterator[list[str]]:
    tags: list[str] = []
    yield tags
    for tag in tags:
        _docker("rmi", "--force", tag)


def test_an_image_is_built_with_the_repository_at_base_commit_then_reused(
    builder: EnvironmentBuilder, tiny_repo: Path, tmp_path: Path, built_tags: list[str]
) -> None:
    head = _corpus_commit(tiny_repo, tmp_path)
    task = _task("tiny__tinylib-1", tiny_repo, head)

    started = time.monotonic()
    [first] = build_images([task], builder=builder)
    first_seconds = time.monotonic() - started
    assert first.status is BuildStatus.BUILT, first.reason
    assert first.image is not None
    built_tags.append(first.image)
    image_id = _docker("image", "inspect", "--format", "{{.Id}}", first.image).stdout.strip()

    inside = _in_image(
        first.image,
        "set -e; cd /testbed; git rev-parse HEAD; git status --porcelain | wc -l; whoami; "
        "command -v python; python -m pytest --version; python -m pytest -q -p no:cacheprovider",
    )
    assert inside.returncode == 0, inside.stderr
    lines = inside.stdout.splitlines()
    assert lines[:4] == [head, "0", "runner", "/opt/venv/bin/python"]
    assert "pytest" in inside.stdout + inside.stderr
    assert "1 passed" in inside.stdout

    started = time.monotonic()
    [again] = build_images([task], builder=default_builder())
    cached_seconds = time.monotonic() - started
    assert (again.status, again.image) == (BuildStatus.CACHED, first.image)
    again_id = _docker("image", "inspect", "--format", "{{.Id}}", first.image).stdout.strip()
    assert again_id == image_id
    assert cached_seconds < first_seconds
    print(f"first build {first_seconds:.1f}s, cached {cached_seconds:.1f}s")


def test_a_wrong_base_commit_is_a_clear_error_naming_the_task(
    builder: EnvironmentBuilder, tiny_repo: Path, tmp_path: Path
) -> None:
    head = _corpus_commit(tiny_repo, tmp_path)
    task = _task("tiny__tinylib-wrong", tiny_repo, "0" * 40)

    [outcome] = build_images([task], builder=builder)

    assert outcome.status is BuildStatus.FAILED
    assert "tiny__tinylib-wrong" in outcome.reason
    assert "0" * 40 in outcome.reason and head in outcome.reason
    with pytest.raises(BaseCommitMismatch, match="tiny__tinylib-wrong"):
        resolve_image(task, builder=builder)
