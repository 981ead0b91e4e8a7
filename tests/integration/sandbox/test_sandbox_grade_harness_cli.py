"""`hackaudit tasks grade` on the real engine writes the SWE-bench harness's report files: a
resolved, an unresolved, an empty and an unappliable prediction each land in the harness's id
lists, and the instances whose tests ran get the harness's per-instance report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_calc import GOLD_PATCH, TaskImage, calc_task, cli_env

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.slow]

WRONG_PATCH = GOLD_PATCH.replace("+    return a + b", "+    return a * b")
UNAPPLIABLE_PATCH = GOLD_PATCH.replace("-    return a - b", "-    return b - a")
F2P = ["tests/test_ops.py::OpsTest::test_add", "tests/test_ops.py::OpsTest::test_add_negative"]
P2P = ["tests/test_ops.py::OpsTest::test_mul", "tests/test_ops.py::OpsTest::test_mul_zero"]


def test_grade_writes_the_harness_reports(tmp_path: Path, calc_image: TaskImage) -> None:
    patches = {"calc__calc-1": GOLD_PATCH, "calc__calc-2": WRONG_PATCH,
               "calc__calc-3": None, "calc__calc-4": UNAPPLIABLE_PATCH}  # fmt: skip
    tasks = tmp_path / "tasks.jsonl"
    rows = [calc_task(calc_image, instance_id=i).model_dump_json(by_alias=True) for i in patches]
    tasks.write_text("".join(row + "\n" for row in rows))
    predictions = tmp_path / "preds.json"
    given = [
        {"instance_id": i, "model_patch": p, "model_name_or_path": "org/sys-a"}
        for i, p in patches.items()
    ]
    predictions.write_text(json.dumps(given))
    env = cli_env(tmp_path)
    reports = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "hackaudit.cli", "tasks", "grade", str(tasks),
         "--predictions", str(predictions), "--run-id", "r1", "--out", str(reports)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    run = json.loads((reports / "org__sys-a.r1.json").read_text())
    assert run["total_instances"] == 4 and run["submitted_instances"] == 4
    assert run["completed_ids"] == ["calc__calc-1", "calc__calc-2"]
    assert run["resolved_ids"] == ["calc__calc-1"]
    assert run["unresolved_ids"] == ["calc__calc-2"]
    assert run["empty_patch_ids"] == ["calc__calc-3"]
    assert run["error_ids"] == ["calc__calc-4"]
    assert (run["resolved_instances"], run["empty_patch_instances"]) == (1, 1)
    logs = reports / "logs" / "run_evaluation" / "r1" / "org__sys-a"
    resolved = json.loads((logs / "calc__calc-1" / "report.json").read_text())["calc__calc-1"]
    assert resolved["resolved"] and resolved["patch_successfully_applied"]
    assert resolved["tests_status"]["FAIL_TO_PASS"] == {"success": F2P, "failure": []}
    assert resolved["tests_status"]["PASS_TO_PASS"] == {"success": P2P, "failure": []}
    wrong = json.loads((logs / "calc__calc-2" / "report.json").read_text())["calc__calc-2"]
    assert (wrong["resolved"], wrong["patch_exists"], wrong["patch_is_None"]) == (
        False, True, False,
    )  # fmt: skip
    assert wrong["tests_status"]["FAIL_TO_PASS"] == {"success": [], "failure": F2P}
    assert wrong["tests_status"]["PASS_TO_PASS"] == {"success": P2P, "failure": []}
    assert not (logs / "calc__calc-3").exists()  # as the harness: an empty patch is not run
    assert not (logs / "calc__calc-4" / "report.json").exists()
    assert "patch_failed" in (logs / "calc__calc-4" / "run_instance.log").read_text()
