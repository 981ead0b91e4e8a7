"""`verified_audit.py publish`: the report committed beside docs/verified-audit.md keeps every
verdict and its evidence, cuts gold's coverage maps to counts, and leaves the task rows out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "examples" / "real" / "verified_audit.py"

TASK = {
    "instance_id": "acme__widget-1",
    "verdict": "FIX",
    "hackable": True,
    "exploits": [{"candidate": "c1", "diff": "exploits/acme__widget-1/c1.diff", "evidence": "e"}],
    "gold_coverage": {
        "measured": True,
        "hunks": [{"path": "w.py", "lines": [3, 4], "executed": {"3": ["t::a", "t::b"], "4": []}}],
        "repository": {"measured": True, "tests": ["tests"], "keywords": ["a", "b"], "lines": 9},
        "text": "graded tests execute 1 of 2 lines gold changes",
    },
}


def test_publish_slims_coverage_and_copies_only_the_evidence(tmp_path: Path) -> None:
    report = tmp_path / "report"
    (report / "exploits" / "acme__widget-1").mkdir(parents=True)
    (report / "exploits" / "acme__widget-1" / "c1.diff").write_text("--- a/w.py\n")
    (report / "unconfirmed" / "acme__widget-1").mkdir(parents=True)
    (report / "unconfirmed" / "acme__widget-1" / "c2.diff").write_text("--- a/v.py\n")
    (report / "dataset").mkdir()
    (report / "dataset" / "fix.jsonl").write_text("{}\n")
    (report / "report.json").write_text(json.dumps({"summary": {}, "tasks": [TASK]}))
    (report / "report.md").write_text("# report\n")
    (report / "verdicts.jsonl").write_text('{"instance_id": "acme__widget-1"}\n')
    out = tmp_path / "published"

    done = subprocess.run(
        [sys.executable, str(SCRIPT), "publish", f"--report={report}", f"--out={out}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    [task] = json.loads((out / "report.json").read_text())["tasks"]
    coverage = task["gold_coverage"]
    assert coverage["hunks"][0]["executed"] == {"3": 2, "4": 0}
    assert coverage["repository"] == {"measured": True, "tests": ["tests"], "lines": 9}
    assert coverage["text"] == TASK["gold_coverage"]["text"]  # type: ignore[index]
    assert task["exploits"] == TASK["exploits"]
    assert (out / "exploits" / "acme__widget-1" / "c1.diff").read_text() == "--- a/w.py\n"
    assert (out / "unconfirmed" / "acme__widget-1" / "c2.diff").read_text() == "--- a/v.py\n"
    assert (out / "report.md").is_file() and (out / "verdicts.jsonl").is_file()
    assert not (out / "dataset").exists()


def test_publish_refuses_to_write_over_the_report_itself(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text(json.dumps({"tasks": []}))

    done = subprocess.run(
        [sys.executable, str(SCRIPT), "publish", f"--report={tmp_path}", f"--out={tmp_path}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip

    assert done.returncode == 2
    assert done.stderr.startswith("error: --out") and "report folder itself" in done.stderr
    assert (tmp_path / "report.json").is_file()
