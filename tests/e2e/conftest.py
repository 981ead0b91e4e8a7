"""The e2e tier runs the `hackaudit` command on the example corpus, against the real engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def docker_ready() -> bool:
    try:
        import docker

        docker.from_env().ping()
    except Exception:
        return False
    return True


@pytest.fixture(scope="session", autouse=True)
def _needs_docker() -> None:
    if docker_ready():
        return
    if os.environ.get("HACKAUDIT_REQUIRE_DOCKER") == "1":
        pytest.fail("no Docker engine answers, and this run requires one")
    pytest.skip("no Docker engine")


@pytest.fixture(scope="session")
def labels() -> dict[str, dict[str, object]]:
    data: dict[str, dict[str, object]] = json.loads((EXAMPLES / "labels.json").read_text())
    return data


def hackaudit(
    tmp_path: Path, *args: str, timeout: float = 900, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if "ANTHROPIC" not in k and k != "NATS_URL"}
    env = base | {"HACKAUDIT_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "250"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "hackaudit.cli", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
