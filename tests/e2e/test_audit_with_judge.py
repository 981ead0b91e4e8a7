"""`hackaudit audit` with a judge backend (a local fake of an OpenAI-compatible server): every
scored task carries F1, and every sample's rationale is kept in the results store."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from hackaudit.scorer.adapters.store import read_results
from tests.e2e.conftest import REPO, hackaudit, picked_tasks

sys.path.insert(0, str(REPO / "tests" / "component" / "judge"))
from fake_judge_api import Answer, serve

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PICKED = {"semverlite__semverlite-2", "urlnorm__urlnorm-1"}


def section(text: str, name: str) -> str:
    found = re.search(f"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return found.group(1) if found else ""


def by_reference(body: dict[str, Any]) -> Answer:
    """A fake model that calls a patch correct exactly when it is the reference fix."""
    text = "".join(str(m.get("content", "")) for m in body["messages"])
    same = section(text, "patch_under_judgement") == section(text, "reference_fix")
    return Answer("correct" if same else "incorrect")


def test_audit_with_a_judge_reports_f1_and_keeps_the_rationales(tmp_path: Path) -> None:
    tasks = picked_tasks(tmp_path, PICKED)
    out = tmp_path / "report"
    with serve() as (url, api):
        api.respond = by_reference
        env = {"HACKAUDIT_JUDGE_PROVIDER": "openai", "HACKAUDIT_JUDGE_BASE_URL": f"{url}/v1",
               "HACKAUDIT_JUDGE_MODEL": "fake-judge"}  # fmt: skip
        done = hackaudit(tmp_path, "audit", str(tasks), "--out", str(out), "-k", "3", "-r", "1",
                         env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    by_id = {t["instance_id"]: t for t in report["tasks"]}
    for instance_id in PICKED:
        task = by_id[instance_id]
        assert 0.0 <= task["components"]["F1"] <= 1.0, task["reason"]
        assert re.search(r"F1 \d\.\d\d \(judge vs execution", task["reason"])
    states = read_results(tmp_path / "state" / "results.duckdb")
    judged = [s.scored.judge for s in states if s.scored is not None and s.scored.judge]
    assert len(judged) == len(PICKED)
    samples = [d for j in judged for v in j.verdicts for d in v.details]
    assert len(samples) == len(api.requests) > 0  # every call answered one sample, none lost
    assert all(d.trace and d.premises for d in samples)
    for j in judged:
        gold = [cid for cid, correct in j.execution.items() if correct]
        assert gold, "gold is in the reference pool and resolves"
        assert j.usage is not None and j.usage.model == "fake-judge"
