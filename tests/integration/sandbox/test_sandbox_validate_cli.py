"""`hackaudit tasks validate` on tasks that cannot be set up in their image: it flags each one as
an error with the reason (the failed step and its log), counts it failed and exits 3; a sound
task stays valid."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_calc import TaskImage, calc_task, cli_env
from test_sandbox_setup_failures import MISSING_COMMIT, STALE_TEST_PATCH

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.slow]


def test_validate_flags_tasks_whose_set_up_fails(tmp_path: Path, calc_image: TaskImage) -> None:
    tasks = [
        calc_task(calc_image),
        calc_task(calc_image, instance_id="calc__calc-2", base_commit=MISSING_COMMIT),
        calc_task(calc_image, instance_id="calc__calc-3", test_patch=STALE_TEST_PATCH),
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(t.model_dump_json(by_alias=True) + "\n" for t in tasks))
    done = subprocess.run(
        [sys.executable, "-m", "hackaudit.cli", "tasks", "validate", str(path),
         "--gold-repeats", "1"],
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip

    assert done.returncode == 3, done.stdout + done.stderr
    rows = {
        line.split("│")[1].strip(): line for line in done.stdout.splitlines() if "calc__" in line
    }
    assert "valid" in rows["calc__calc-1"] and "error" not in rows["calc__calc-1"]
    assert "error" in rows["calc__calc-2"]
    assert "could not be reset to base_commit 0123456789ab" in rows["calc__calc-2"]
    assert "error" in rows["calc__calc-3"]
    assert "does not apply to the image's repository" in rows["calc__calc-3"]
    assert "patch failed: tests/test_ops.py" in rows["calc__calc-3"]
    assert "1 passed, 2 failed" in done.stdout
