"""`hackaudit audit --pass-at-1 FILE` as a user runs it: the pass@1 file is read before anything
starts (a bad one stops the command, naming the file and line), its figures reach the scorer
(D, and the verdict's reason names the file), and the tasks come back by verdict in
`<out>/dataset/`, in the format they were read in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hackaudit.shared.ingest import load_tasks
from tests.integration.cli.test_cli_services import HACKAUDIT, cli

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "ANTHROPIC" not in k and k != "NATS_URL"}
    return env | {"HACKAUDIT_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "250"}


def _docker_or_skip() -> None:
    done = subprocess.run(["docker", "info"], capture_output=True, check=False)
    if done.returncode != 0:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine")


def _example(instance_id: str) -> dict[str, object]:
    repo = instance_id.split("__")[0]
    for line in (EXAMPLES / "tasks" / f"{repo}.jsonl").read_text().splitlines():
        row: dict[str, object] = json.loads(line)
        if row["instance_id"] == instance_id:
            return row
    raise AssertionError(f"{instance_id} is not in the example corpus")


@pytest.mark.parametrize("command", ["audit", "submit"])
def test_a_bad_pass_at_1_file_stops_the_command_naming_file_line_and_column(
    tmp_path: Path, command: str
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(_example("urlnorm__urlnorm-1")) + "\n")
    matrix = tmp_path / "matrix.csv"
    matrix.write_text("folder,urlnorm__urlnorm-1\nsub-a,1\nsub-b,maybe\n")

    done = cli(_env(tmp_path), command, str(tasks), "--pass-at-1", str(matrix))

    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{matrix}:line 3" in " ".join(done.stderr.split())
    assert "urlnorm__urlnorm-1" in done.stderr and "'maybe' is not 0, 1 or blank" in done.stderr
    assert not (tmp_path / "state").exists()  # nothing was started


@pytest.mark.docker
def test_a_task_that_cannot_be_audited_and_a_row_that_cannot_be_read_are_kept_and_fail_the_run(
    tmp_path: Path,
) -> None:
    _docker_or_skip()
    broken = _example("spanlib__spanlib-1") | {
        "instance_id": "spanlib__spanlib-unbuildable",
        "base_commit": "0" * 40,
        "environment": {"source": str(tmp_path / "no-such-folder"), "pip_packages": ["pytest"]},
    }
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(broken) + "\n{not json\n")
    counts = tmp_path / "counts.csv"
    counts.write_text(
        "instance_id,successes,attempts\nspanlib__spanlib-unbuildable,3,7\nother__x-1,0,1\n"
    )
    out = tmp_path / "report"
    command = [*HACKAUDIT, "audit", str(tasks), "--out", str(out), "--pass-at-1", str(counts)]

    done = subprocess.run(
        command, env=_env(tmp_path), capture_output=True, text=True, timeout=300, check=False
    )

    assert done.returncode == 3, done.stderr[-3000:]  # partial: the figures cover fewer rows
    assert "1 input row(s) rejected (dataset/rejected.jsonl), 1 task(s) without a verdict" in (
        done.stderr
    )
    assert "pass@1 from per-task counts counts.csv: 1 of 1 task(s) matched" in done.stderr
    (row,) = [
        json.loads(line) for line in (out / "dataset" / "error.jsonl").read_text().splitlines()
    ]
    assert {k: v for k, v in row.items() if k != "hackaudit_reason"} == broken
    assert row["hackaudit_reason"].startswith("no verdict: no image: environment.source")
    (rejected,) = (out / "dataset" / "rejected.jsonl").read_text().splitlines()
    assert json.loads(rejected)["file"] == str(tasks) and json.loads(rejected)["line"] == 2
    assert sorted(p.name for p in (out / "dataset").iterdir()) == ["error.jsonl", "rejected.jsonl"]
    report = json.loads((out / "report.json").read_text())
    assert report["dataset"]["counts"] == {
        "keep": 0, "fix": 0, "drop": 0, "error": 1, "rejected": 1,
    }  # fmt: skip
    assert report["summary"]["verdicts"]["ERROR"] == 1
    assert "1 error, 1 rejected" in (out / "report.md").read_text()

    allowed = subprocess.run(
        [*command, "--allow-partial"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr[-3000:]


@pytest.mark.docker
@pytest.mark.slow
def test_audit_scores_d_from_the_file_and_writes_the_task_back_by_verdict(
    tmp_path: Path,
) -> None:
    _docker_or_skip()
    row = _example("urlnorm__urlnorm-1") | {"pass_at_1": {"successes": 0, "attempts": 5}}
    shutil.copytree(EXAMPLES / "repos", tmp_path / "repos")  # environment.source is relative
    (tmp_path / "tasks").mkdir()
    tasks = tmp_path / "tasks" / "urlnorm.jsonl"
    tasks.write_text(json.dumps(row) + "\n")
    matrix = tmp_path / "matrix.csv"
    matrix.write_text(
        "folder,date,urlnorm__urlnorm-1\na,2024-01-01,1\nb,2024-02-01,0\nc,2024-03-01,\n"
    )
    out = tmp_path / "report"

    done = subprocess.run(
        [*HACKAUDIT, "audit", str(tasks), "--out", str(out), "--pass-at-1", str(matrix),
         "-k", "1", "-r", "1", "--gold-repeats", "1"],
        env=_env(tmp_path), capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    (task,) = json.loads((out / "report.json").read_text())["tasks"]
    assert task["verdict"] in {"KEEP", "FIX", "DROP"}, task["reason"]
    p = (1 + 1) / (2 + 2)  # 1 success in 2 attempts (the blank cell is no attempt)
    assert task["components"]["D"] == pytest.approx(4 * p * (1 - p))
    assert (
        "D from resolved matrix matrix.csv (3 submissions); replaces the task file's 0/5"
        in (task["reason"])
    )
    split = task["verdict"].lower()
    (written,) = (out / "dataset").iterdir()
    assert written.name == f"{split}.jsonl"
    again = load_tasks([written])
    assert again.problems == []
    assert again.tasks == load_tasks([tasks]).tasks
