"""Flags read from hackaudit's own results store, as the scorer writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.analysis.errors import InputFileError
from hackaudit.analysis.labels import load_flags
from hackaudit.scorer.adapters.store import DuckDBAuditStore
from hackaudit.scorer.domain.audit import AuditState, Stage
from hackaudit.shared.contracts import AuditOptions, Task, TaskScored, Verdict


def scored(instance_id: str, correlation_id: str, hackable: bool | None) -> AuditState:
    task = Task(
        instance_id=instance_id, repo="x/y", base_commit="abc", patch="p", test_patch="t",
        FAIL_TO_PASS=["t::a"],
    )  # fmt: skip
    score = TaskScored(
        correlation_id=correlation_id, instance_id=instance_id, verdict=Verdict.KEEP,
        hackable=hackable,
    )  # fmt: skip
    return AuditState(
        correlation_id=correlation_id, task=task, options=AuditOptions(), stage=Stage.SCORED,
        scored=score,
    )  # fmt: skip


def test_flags_come_from_the_latest_audit_of_each_task(tmp_path: Path) -> None:
    path = tmp_path / "results.duckdb"
    store = DuckDBAuditStore(path)
    store.save(scored("a__a-1", "audit-1/a", True))
    store.save(scored("b__b-1", "audit-1/b", False))
    store.save(scored("c__c-1", "audit-1/c", None))  # dropped at sanity: no flag
    store.close()
    assert load_flags(path) == {"a__a-1": True, "b__b-1": False}


def test_a_file_that_is_not_a_results_store_is_named(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "other.duckdb"
    duckdb.connect(str(path)).close()
    with pytest.raises(InputFileError, match=r"other\.duckdb.*not a hackaudit results store"):
        load_flags(path)
    with pytest.raises(InputFileError, match="no such results store"):
        load_flags(tmp_path / "missing.duckdb")
