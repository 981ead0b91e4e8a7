"""With HACKAUDIT_STATE_DIR set, an audit writes nothing into the current folder: the sandbox's
run artifacts, like every other default path, live under the state folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integration.cli.test_cli_services import HACKAUDIT

pytestmark = [pytest.mark.integration, pytest.mark.docker]

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_an_audit_keeps_its_artifacts_under_the_state_dir(tmp_path: Path) -> None:
    if subprocess.run(["docker", "info"], capture_output=True, check=False).returncode != 0:
        pytest.skip("no Docker engine")
    inputs, work, state = tmp_path / "inputs", tmp_path / "work", tmp_path / "state"
    shutil.copytree(EXAMPLES / "repos", inputs / "repos")  # environment.source is relative
    (inputs / "tasks").mkdir()
    work.mkdir()
    row = next(json.loads(line) for line in (EXAMPLES / "tasks" / "urlnorm.jsonl").open()
               if json.loads(line)["instance_id"] == "urlnorm__urlnorm-1")  # fmt: skip
    tasks = inputs / "tasks" / "urlnorm.jsonl"
    tasks.write_text(json.dumps(row) + "\n")
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k and k != "NATS_URL"}

    done = subprocess.run(
        [*HACKAUDIT, "audit", str(tasks), "--out", str(tmp_path / "report"),
         "-k", "1", "-r", "1", "--gold-repeats", "1"],
        env=env | {"HACKAUDIT_STATE_DIR": str(state)}, cwd=work,
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    assert list(work.iterdir()) == []
    assert any((state / "artifacts" / "sandbox").iterdir())
