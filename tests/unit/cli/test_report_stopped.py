"""A task whose only audit a stopped run left unfinished (marked stopped when the next run
started) has no verdict: the report lists it as ERROR and says its audit was stopped; a task
audited again and scored since is reported by that verdict."""

from __future__ import annotations

import json
from pathlib import Path

from hackaudit.cli.report import write_report
from hackaudit.cli.report_store import STOPPED, read_reports
from hackaudit.scorer.adapters.store import DuckDBAuditStore
from hackaudit.scorer.handlers import ScorerHandlers
from tests.unit.scorer.test_admission import dropped, ingested
from tests.unit.scorer.test_scorer_died_before_sending import POLICY, DiesOnce


async def test_a_task_whose_only_audit_was_stopped_is_an_error_saying_so(tmp_path: Path) -> None:
    path = tmp_path / "results.duckdb"
    send = DiesOnce()
    handlers = ScorerHandlers(DuckDBAuditStore(path), send, POLICY, in_flight=1)
    for n in (1, 2, 3):
        await handlers.task_ingested(ingested(n))  # c1 starts, c2 and c3 wait
    await dropped(handlers, send, "c1")  # c1 scored; c2 starts
    assert DuckDBAuditStore(path).stop_unfinished().count == 2  # the run was stopped: c2, c3

    items = {item.instance_id: item for item in read_reports(path)}
    assert items["lib__lib-1"].scored is not None and items["lib__lib-1"].unfinished == ""
    assert items["lib__lib-2"].unfinished == STOPPED == items["lib__lib-3"].unfinished

    write_report(tmp_path / "out", list(items.values()), missing_stages=[])
    rows = {
        r["instance_id"]: r
        for r in json.loads((tmp_path / "out" / "report.json").read_text())["tasks"]
    }
    assert rows["lib__lib-1"]["verdict"] == "DROP"
    for instance_id in ("lib__lib-2", "lib__lib-3"):
        assert rows[instance_id]["verdict"] == "ERROR"
        assert rows[instance_id]["reason"] == f"no verdict: {STOPPED}"
