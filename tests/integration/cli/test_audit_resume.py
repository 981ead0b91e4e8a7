"""`hackaudit audit --resume` after a stop, as a user runs it: the audit is stopped with Ctrl-C
once a task is scored, then run again with `--resume`; the tasks scored before are not audited
again, the progress has an ETA from the start (the pace of the first run), and the report lists
every task with its verdict.

Real processes throughout: the CLI as a subprocess with its embedded nats-server, the sandbox's
containers on the real Docker engine, the results store in this test's state folder.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hackaudit.scorer.adapters.store import read_results
from hackaudit.scorer.domain.audit import UNFINISHED, Stage

pytestmark = [pytest.mark.integration, pytest.mark.docker]

REPO = Path(__file__).resolve().parents[3]
HACKAUDIT = [sys.executable, "-m", "hackaudit.cli"]
BUDGET = ["-k", "1", "-r", "1", "--gold-repeats", "1"]
SCORED_LINE = re.compile(r"\] scored (\S+): ")


def _docker_or_skip() -> None:
    done = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=30)
    if done.returncode != 0:
        if os.environ.get("HACKAUDIT_REQUIRE_DOCKER"):
            pytest.fail("no Docker engine answers")
        pytest.skip("no Docker engine")


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "ANTHROPIC" not in k and k != "NATS_URL"}
    return env | {"HACKAUDIT_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "250"} | more


def _stopped_after_first_verdict(tmp_path: Path, tasks: Path) -> str:
    """Run the audit, one task at a time, and SIGINT it once a task is scored; its stderr."""
    stderr = tmp_path / "first.err"
    # One audit in flight at once: the others wait in line, so the stop finds them unscored.
    env = _env(tmp_path, HACKAUDIT_SCORER_AUDITS_IN_FLIGHT="1")
    with stderr.open("wb") as sink:
        process = subprocess.Popen(
            [*HACKAUDIT, "audit", str(tasks), *BUDGET, "--out", str(tmp_path / "first")],
            cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=sink,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while not SCORED_LINE.search(stderr.read_text(errors="replace")):
            assert process.poll() is None, stderr.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "no task scored in 90 s"
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        # Each service gives its handlers in flight up to 15 s, one service after another.
        code = process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    text = stderr.read_text(errors="replace")
    assert code == 128 + signal.SIGINT, text[-3000:]
    return text


@pytest.mark.timeout(360)
def test_a_stopped_audit_resumed_skips_the_tasks_already_scored(tmp_path: Path) -> None:
    _docker_or_skip()
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text((REPO / "examples" / "tasks" / "inikit.jsonl").read_text())
    ids = sorted(json.loads(line)["instance_id"] for line in tasks.read_text().splitlines())
    store = tmp_path / "state" / "results.duckdb"

    _stopped_after_first_verdict(tmp_path, tasks)
    before = read_results(store)
    scored = {s.task.instance_id for s in before if s.scored is not None}
    assert scored and scored < set(ids), "the stop should leave some task unscored"
    left = {s.correlation_id for s in before if s.stage in UNFINISHED}
    assert left, "the stop should leave an audit queued or in flight"

    out = tmp_path / "report"
    # One place in flight again: an audit the first run left in flight, were it still counted,
    # would hold it, and this run would never start its own.
    done = subprocess.run(
        [*HACKAUDIT, "audit", str(tasks), *BUDGET, "--out", str(out), "--resume"],
        cwd=tmp_path, env=_env(tmp_path, HACKAUDIT_SCORER_AUDITS_IN_FLIGHT="1"),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    said = " ".join(done.stderr.split())
    assert f"{len(left)} audit(s) left unfinished by an earlier run marked stopped" in said
    after = {s.correlation_id: s for s in read_results(store)}
    assert {cid: after[cid].stage for cid in left} == dict.fromkeys(left, Stage.STOPPED)
    assert not [s for s in after.values() if s.stage in UNFINISHED]
    assert (
        f"resuming: {len(scored)} of {len(ids)} task(s) already scored with the same inputs, "
        f"budget and version; auditing {len(ids) - len(scored)}"
    ) in said
    # Not run again: no verdict line in this run, one audit each in the store.
    assert not scored & set(SCORED_LINE.findall(done.stderr))
    audits = [s.task.instance_id for s in read_results(store) if not s.repaired_from]
    assert all(audits.count(instance_id) == 1 for instance_id in scored), audits
    assert set(SCORED_LINE.findall(done.stderr)) == set(ids) - scored
    assert f"done {len(ids)}/{len(ids)} · 0 remaining" in done.stderr
    # An ETA from the start, at the pace the first run kept, before this run scores anything.
    first_summary = next(line for line in done.stderr.splitlines() if " remaining · ETA " in line)
    assert f"done {len(scored)}/{len(ids)}" in first_summary, first_summary
    assert "ETA –" not in first_summary, first_summary

    # The report lists every task with a verdict; a resumed task as the store has it.
    report = json.loads((out / "report.json").read_text())
    verdicts = {t["instance_id"]: t["verdict"] for t in report["tasks"]}
    assert sorted(verdicts) == ids and "ERROR" not in verdicts.values(), verdicts
    stored = {s.task.instance_id: s.scored for s in before if s.scored is not None}
    for instance_id in scored:
        first = stored[instance_id]
        assert first is not None and verdicts[instance_id] == first.verdict.value
    lines = (out / "verdicts.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["instance_id"] for line in lines) == ids
