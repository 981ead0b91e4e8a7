"""Tiny task images for the sandbox's Docker tests, built FROM the base image and cached.

`calc_image`: a small repository at /testbed (a git repository owned by `runner`, uid 1000) with
a bug in `calc.add`, unittest-style tests runnable by pytest and by unittest, a symlink that
points out of the repository, and pytest in a venv at /opt/venv installed from a wheelhouse.
`conda_image`: the same repository the way SWE-bench harness images hold it — /testbed owned by
root, and a conda-like `activate` script at /opt/miniconda3 that the run must source.

Images are tagged `hackaudit-test/<name>:<hash of their inputs>` and built only when missing.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from hackaudit.sandbox.adapters.coverage_kit import WheelhouseCoverageKit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sandbox_calc import (
    CALC_FILES,
    COMMIT_ENV,
    CONDA_EXTRA,
    DOCKERFILE,
    TaskImage,
    sandbox_settings,
)

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner

REPO_ROOT = Path(__file__).resolve().parents[3]


def _docker_ok() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0


@pytest.fixture(scope="session")
def docker_client() -> Iterator[object]:
    if not _docker_ok():
        message = "no Docker engine answers"
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail(message)
        pytest.skip(message)
    import docker

    client = docker.from_env()
    yield client
    client.close()


@pytest.fixture(scope="session")
def base_image(docker_client: object) -> str:
    tag = os.environ.get("HACKAUDIT_BASE_IMAGE")
    if tag:
        return tag
    done = subprocess.run(
        ["bash", str(REPO_ROOT / "scripts" / "base-image.sh")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"no base image: {done.stderr.strip()[-300:]}")
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def wheelhouse(request: pytest.FixtureRequest) -> Path:
    """pytest's wheels for the image, downloaded once into pytest's cache directory."""
    folder = Path(request.config.cache.mkdir("hackaudit-sandbox-wheels"))
    if not list(folder.glob("pytest-*.whl")):
        pip = shutil.which("pip") or shutil.which("pip3")
        if pip is None:
            pytest.skip("no pip on the host to fetch pytest's wheels")
        subprocess.run(
            [
                pip,
                "download",
                "-q",
                "--only-binary=:all:",
                "--python-version",
                "3.11",
                "pytest",
                "-d",
                str(folder),
            ],
            check=True,
        )
    return folder


def _context(dockerfile: str, wheels: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:

        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))

        add("Dockerfile", dockerfile.encode())
        for path, text in CALC_FILES.items():
            add(f"testbed/{path}", text.encode())
        for wheel in sorted(wheels.glob("*.whl")):
            add(f"wheels/{wheel.name}", wheel.read_bytes())
    return buffer.getvalue()


def _build(client: object, name: str, dockerfile: str, wheels: Path) -> TaskImage:
    digest = hashlib.sha256(dockerfile.encode())
    for path, text in sorted(CALC_FILES.items()):
        digest.update(f"{path}\0{text}\0".encode())
    for wheel in sorted(wheels.glob("*.whl")):
        digest.update(wheel.name.encode())
    tag = f"hackaudit-test/{name}:{digest.hexdigest()[:12]}"
    images = client.images  # type: ignore[attr-defined]
    try:
        images.get(tag)
    except Exception:
        images.build(
            fileobj=io.BytesIO(_context(dockerfile, wheels)),
            custom_context=True,
            tag=tag,
            network_mode="none",
            rm=True,
        )
    out = client.containers.run(  # type: ignore[attr-defined]
        tag,
        ["git", "-c", "safe.directory=*", "-C", "/testbed", "rev-parse", "HEAD"],
        remove=True,
        network_mode="none",
        entrypoint=[],
    )
    return TaskImage(tag=tag, base_commit=out.decode().strip())


@pytest.fixture(scope="session")
def calc_image(docker_client: object, base_image: str, wheelhouse: Path) -> TaskImage:
    dockerfile = DOCKERFILE.format(
        base=base_image, commit_env=COMMIT_ENV, owner="1000:1000", extra="", user="runner"
    )
    return _build(docker_client, "calc", dockerfile, wheelhouse)


@pytest.fixture(scope="session")
def conda_image(docker_client: object, base_image: str, wheelhouse: Path) -> TaskImage:
    dockerfile = DOCKERFILE.format(
        base=base_image, commit_env=COMMIT_ENV, owner="0:0", extra=CONDA_EXTRA, user="root"
    )
    return _build(docker_client, "sweb.eval.calc", dockerfile, wheelhouse)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox(
    tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage
) -> AsyncIterator[Runner]:
    """A runner on the real engine, shared by a module's tests (its pool stays warm)."""
    runner = bootstrap(sandbox_settings(tmp_path_factory.mktemp("sandbox")))
    await runner.start()
    yield runner
    await runner.close()


@pytest.fixture(scope="module")
def coverage_wheels(request: pytest.FixtureRequest) -> dict[str, bytes]:
    """The cp311 and pure-Python coverage.py wheels, downloaded once into pytest's cache."""
    folder = Path(request.config.cache.mkdir("hackaudit-coverage-wheels"))
    try:
        return dict(WheelhouseCoverageKit(folder, pythons=("3.11",)).files())
    except Exception as exc:  # no pip, no network and nothing cached
        pytest.skip(f"no coverage.py wheels: {exc}")
