"""`hackaudit audit --no-repair`: the verdicts as audited, no repairer started, none asked for.

The CLI as a subprocess with its embedded nats-server and the real Docker engine; a hackable
example task among them, so a repairer, had it run, would have had a FIX task to harden.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hackaudit.scorer.adapters.store import read_results

pytestmark = [pytest.mark.integration, pytest.mark.docker]

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.timeout(300)
def test_no_repair_leaves_every_verdict_as_audited(tmp_path: Path) -> None:
    if subprocess.run(["docker", "info"], capture_output=True, check=False).returncode != 0:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine")
    tasks = REPO / "examples" / "tasks" / "inikit.jsonl"
    env = {k: v for k, v in os.environ.items() if "ANTHROPIC" not in k and k != "NATS_URL"}
    env |= {"HACKAUDIT_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "250"}
    out = tmp_path / "report"

    done = subprocess.run(
        [sys.executable, "-m", "hackaudit.cli", "audit", str(tasks), "-k", "3", "-r", "1",
         "--gold-repeats", "1", "--no-repair", "--out", str(out), "--allow-partial"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=280, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    states = read_results(tmp_path / "state" / "results.duckdb")
    assert len(states) == 3
    assert all(not s.options.repair and not s.repaired_from for s in states)
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["headline"]["repair_ran"] is False
    assert "No repair ran in this audit" in (out / "report.md").read_text()
