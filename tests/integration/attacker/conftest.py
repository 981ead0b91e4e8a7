"""The `tinysym` task image (sympy's layout and runner, Debian bullseye's Python 3.9, no pytest)
and a real sandbox on the Docker engine for the attacker's confirmation tests."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tinysym import BASE_FILES, DOCKERFILE

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared.contracts import RunCompleted, RunRequested

REPO_ROOT = Path(__file__).resolve().parents[3]


def _docker_ok() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0


@pytest.fixture(scope="session")
def tinysym_image() -> tuple[str, str]:
    """(tag, base commit) of the tinysym image, built when missing."""
    if not _docker_ok():
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine answers")
    import docker

    done = subprocess.run(
        ["bash", str(REPO_ROOT / "scripts" / "base-image.sh")],
        capture_output=True, text=True, check=False,
        env={**os.environ, "HACKAUDIT_BASE_SUITE": "bullseye"},
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"no base image: {done.stderr.strip()[-300:]}")
    base = done.stdout.strip().splitlines()[-1]
    dockerfile = DOCKERFILE.format(base=base)
    digest = hashlib.sha256(dockerfile.encode())
    for path, text in sorted(BASE_FILES.items()):
        digest.update(f"{path}\0{text}\0".encode())
    tag = f"hackaudit-test/tinysym:{digest.hexdigest()[:12]}"
    client = docker.from_env()
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for name, text in [("Dockerfile", dockerfile)] + [
                (f"testbed/{p}", t) for p, t in BASE_FILES.items()
            ]:
                info = tarfile.TarInfo(name)
                info.size = len(text.encode())
                info.mtime = 0
                tar.addfile(info, io.BytesIO(text.encode()))
        client.images.build(
            fileobj=io.BytesIO(buffer.getvalue()), custom_context=True, tag=tag,
            network_mode="none", rm=True,
        )  # fmt: skip
    out = client.containers.run(
        tag, ["git", "-c", "safe.directory=*", "-C", "/testbed", "rev-parse", "HEAD"],
        remove=True, network_mode="none", entrypoint=[],
    )  # fmt: skip
    client.close()
    return tag, out.decode().strip()


class RunnerSandbox:
    """The attacker's sandbox port served by the sandbox's own runner, in process."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.requests: list[RunRequested] = []

    async def run(self, request: RunRequested) -> RunCompleted:
        self.requests.append(request)
        return await self.runner.complete(request)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[RunnerSandbox]:
    settings = SandboxSettings.model_validate(
        {
            "artifacts_dir": tmp_path_factory.mktemp("sandbox") / "artifacts",
            "memory_mb": 512,
            "pids_limit": 128,
            "cpus": 1.0,
            "pool_size": 0,
            "max_concurrent_runs": 2,
            "timeout_cap_s": 180.0,
            "setup_timeout_s": 60.0,
            "sweep_on_start": False,
        }
    )
    runner = bootstrap(settings)
    await runner.start()
    yield RunnerSandbox(runner)
    await runner.close()
