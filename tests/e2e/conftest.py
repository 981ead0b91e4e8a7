"""The e2e tier runs the `hackaudit` command on the example corpus, against the real engine."""

from __future__ import annotations

import json
import os
import shutil
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


def picked_tasks(tmp_path: Path, picked: set[str]) -> Path:
    """A task file under `tmp_path` holding the example tasks `picked`, beside a copy of the
    environment sources (they are found relative to the task file)."""
    rows = [
        line
        for path in sorted((EXAMPLES / "tasks").glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if json.loads(line)["instance_id"] in picked
    ]
    assert len(rows) == len(picked), "every picked task is in the corpus"
    shutil.copytree(EXAMPLES / "repos", tmp_path / "repos")
    (tmp_path / "tasks").mkdir()
    tasks = tmp_path / "tasks" / "picked.jsonl"
    tasks.write_text("\n".join(rows) + "\n")
    return tasks
