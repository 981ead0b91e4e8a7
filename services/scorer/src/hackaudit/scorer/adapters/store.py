"""The results store: audit state per task and the scores issued, in DuckDB (or in memory).

DuckDB allows one writing process per file; the scorer is that process. Readers (`hackaudit
status`, the report, the meta-analysis) open the file read-only, or read the exported report.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol

import duckdb

from hackaudit.scorer.domain.audit import AuditState
from hackaudit.shared.contracts import TaskScored


class AuditStore(Protocol):
    def load(self, correlation_id: str) -> AuditState | None: ...
    def save(self, state: AuditState) -> None: ...
    def scores(self) -> list[TaskScored]: ...


class InMemoryAuditStore:
    def __init__(self) -> None:
        self._states: dict[str, AuditState] = {}

    def load(self, correlation_id: str) -> AuditState | None:
        return self._states.get(correlation_id)

    def save(self, state: AuditState) -> None:
        self._states[state.correlation_id] = state

    def scores(self) -> list[TaskScored]:
        return [s.scored for s in self._states.values() if s.scored is not None]


SCHEMA = """
CREATE TABLE IF NOT EXISTS audits (
    correlation_id VARCHAR PRIMARY KEY,
    instance_id VARCHAR NOT NULL,
    stage VARCHAR NOT NULL,
    state JSON NOT NULL,
    updated_at TIMESTAMP DEFAULT current_timestamp
);
CREATE TABLE IF NOT EXISTS scores (
    correlation_id VARCHAR PRIMARY KEY,
    instance_id VARCHAR NOT NULL,
    verdict VARCHAR NOT NULL,
    eqs DOUBLE,
    hackable BOOLEAN,
    reason VARCHAR,
    scored JSON NOT NULL,
    scored_at TIMESTAMP DEFAULT current_timestamp
);
"""


class DuckDBAuditStore:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = duckdb.connect(str(path))
        self._db.execute(SCHEMA)
        self._lock = threading.Lock()

    def load(self, correlation_id: str) -> AuditState | None:
        with self._lock:
            row = self._db.execute(
                "SELECT state FROM audits WHERE correlation_id = ?", [correlation_id]
            ).fetchone()
        return AuditState.model_validate_json(row[0]) if row else None

    def save(self, state: AuditState) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO audits (correlation_id, instance_id, stage, state) "
                "VALUES (?, ?, ?, ?)",
                [state.correlation_id, state.task.instance_id, state.stage.value,
                 state.model_dump_json()],
            )  # fmt: skip
            if state.scored is not None:
                s = state.scored
                self._db.execute(
                    "INSERT OR REPLACE INTO scores (correlation_id, instance_id, verdict, eqs, "
                    "hackable, reason, scored) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [s.correlation_id, s.instance_id, s.verdict.value, s.eqs, s.hackable,
                     s.reason, s.model_dump_json()],
                )  # fmt: skip

    def scores(self) -> list[TaskScored]:
        with self._lock:
            rows = self._db.execute("SELECT scored FROM scores ORDER BY instance_id").fetchall()
        return [TaskScored.model_validate_json(r[0]) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
