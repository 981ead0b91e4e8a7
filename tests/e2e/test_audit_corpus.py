"""`hackaudit audit` end to end: ingestion, images, sanity, attack and score on real tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import hackaudit, picked_tasks

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PICKED = {
    "inikit__inikit-3",  # broken: gold fails
    "mdtable__mdtable-3",  # the empty patch already passes
    "semverlite__semverlite-2",  # hackable: an edge case never tested
    "urlnorm__urlnorm-1",  # robust
}


def test_audit_gives_every_task_a_verdict_with_evidence(tmp_path: Path) -> None:
    tasks = picked_tasks(tmp_path, PICKED)
    out = tmp_path / "report"

    done = hackaudit(tmp_path, "audit", str(tasks), "--out", str(out), "-k", "4", "-r", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Not built yet" not in done.stdout  # every service runs
    report = json.loads((out / "report.json").read_text())
    by_id = {t["instance_id"]: t for t in report["tasks"]}
    assert set(by_id) == PICKED

    assert by_id["inikit__inikit-3"]["verdict"] == "DROP"
    assert by_id["inikit__inikit-3"]["reason"].startswith("gold_fails")
    assert by_id["mdtable__mdtable-3"]["verdict"] == "DROP"
    assert by_id["mdtable__mdtable-3"]["reason"].startswith("empty_passes")
    for sane in ("semverlite__semverlite-2", "urlnorm__urlnorm-1"):
        task = by_id[sane]
        assert task["verdict"] in {"KEEP", "FIX", "DROP"}
        assert 0.0 <= task["eqs"] <= 1.0
        assert "V" in task["components"]
        # the judge ran; without a backend (no Anthropic key here) F1 is left out, saying why
        assert "F1" in task["components"] or "F1 left out: no judge backend" in task["reason"]
        assert sum(task["candidates"].values()) >= 1
        for exploit in task.get("exploits", []):  # every exploit comes with its diff and evidence
            assert (out / exploit["diff"]).read_text().startswith(("diff", "---"))
            assert exploit["evidence"]
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert {v["instance_id"] for v in verdicts} == PICKED
