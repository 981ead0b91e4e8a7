"""The results store: audit state per task and the scores issued, in DuckDB (or in memory).

DuckDB lets one process at a time open a file for writing, and an open connection holds the file's
lock. So the scorer opens a connection per operation (one short transaction) and lets go of the
file between them; readers (`hackaudit report`, `status`, the meta-analysis) open it read-only in
between, and either side retries for a moment while the other holds it. That costs the scorer the
opening of the file on every load and save (`scripts/bench-store.py` measures it; a task's audit
makes a handful of them, next to minutes of test runs).

Several scorer processes may share a file: each save checks that the audit's row is still the
version this process loaded, and a stale save raises `StaleAuditError` (transient: the message
is redelivered and the step taken again on the newer state), so no update is lost.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

import duckdb

from hackaudit.scorer.domain.audit import IN_FLIGHT, UNFINISHED, AuditState, Stage, stop
from hackaudit.shared.contracts import TaskScored
from hackaudit.shared.errors import HackauditError, TransientError
from hackaudit.shared.logs import get_logger

log = get_logger("hackaudit.scorer.store")

WRITE_WAIT_S = 30.0  # a save waits this long for readers to let go before the message is retried
READ_WAIT_S = 10.0  # a reader waits this long for a save to finish


class ResultsStoreError(HackauditError):
    """The results store cannot be read: missing, not a results store, or held too long."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ResultsStoreBusyError(ResultsStoreError, TransientError):
    """Another process held the file's lock longer than the wait allowed."""


class StaleAuditError(TransientError):
    """Another scorer saved this audit after this one loaded it: take the step again."""


@dataclass(frozen=True)
class StoppedAudits:
    """The audits `stop_unfinished` marked stopped, by correlation id."""

    correlation_ids: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.correlation_ids)


class AuditStore(Protocol):
    def load(self, correlation_id: str) -> AuditState | None: ...
    def save(self, state: AuditState) -> None: ...
    def scores(self) -> list[TaskScored]: ...
    def in_flight(self) -> int:
        """Audits started and not yet given their verdict."""
        ...

    def queued(self, limit: int | None) -> list[str]:
        """The correlation ids of up to `limit` (None: all) queued audits, first queued first."""
        ...

    def stop_unfinished(self) -> StoppedAudits:
        """Mark every queued or in-flight audit stopped (`Stage.STOPPED`), all at once: a run
        that starts afresh gives up on what an earlier, stopped run left unfinished."""
        ...


class InMemoryAuditStore:
    def __init__(self) -> None:
        self._states: dict[str, AuditState] = {}

    def load(self, correlation_id: str) -> AuditState | None:
        return self._states.get(correlation_id)

    def save(self, state: AuditState) -> None:
        self._states[state.correlation_id] = state

    def scores(self) -> list[TaskScored]:
        return [s.scored for s in self._states.values() if s.scored is not None]

    def in_flight(self) -> int:
        return sum(s.stage in IN_FLIGHT for s in self._states.values())

    def queued(self, limit: int | None) -> list[str]:
        found = [cid for cid, s in self._states.items() if s.stage is Stage.QUEUED]
        return found if limit is None else found[:limit]

    def stop_unfinished(self) -> StoppedAudits:
        stopped = tuple(cid for cid, s in self._states.items() if s.stage in UNFINISHED)
        for cid in stopped:
            self._states[cid] = stop(self._states[cid])
        return StoppedAudits(stopped)


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
ALTER TABLE audits ADD COLUMN IF NOT EXISTS version BIGINT DEFAULT 0;
ALTER TABLE audits ADD COLUMN IF NOT EXISTS started_at TIMESTAMP;
ALTER TABLE audits ADD COLUMN IF NOT EXISTS scored_at TIMESTAMP;
"""


def _is_lock_conflict(exc: duckdb.Error) -> bool:
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


@contextlib.contextmanager
def connect(path: Path, *, read_only: bool, wait_s: float) -> Iterator[duckdb.DuckDBPyConnection]:
    """One short connection to the file, retried (5 ms doubling to 100 ms) while another process
    holds its lock; closed, and the lock released, on leaving the block."""
    deadline = time.monotonic() + wait_s
    delay = 0.005
    while True:
        try:
            db = duckdb.connect(str(path), read_only=read_only)
            break
        except duckdb.Error as exc:
            if not _is_lock_conflict(exc):
                raise
            if time.monotonic() >= deadline:
                raise ResultsStoreBusyError(
                    path, f"locked by another process for {wait_s:g}s"
                ) from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
    try:
        yield db
    finally:
        db.close()


class DuckDBAuditStore:
    """The scorer's store on a DuckDB file, holding the file only while it loads or saves."""

    def __init__(self, path: Path, *, wait_s: float = WRITE_WAIT_S):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._wait_s = wait_s
        self._lock = threading.Lock()
        self._loaded: dict[str, int] = {}  # the row version each audit had when last loaded here
        with self._connect() as db:
            db.execute(SCHEMA)

    def _connect(self) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        return connect(self._path, read_only=False, wait_s=self._wait_s)

    def load(self, correlation_id: str) -> AuditState | None:
        with self._lock, self._connect() as db:
            row = db.execute(
                "SELECT state, version FROM audits WHERE correlation_id = ?", [correlation_id]
            ).fetchone()
            self._loaded[correlation_id] = int(row[1]) if row else -1
        return AuditState.model_validate_json(row[0]) if row else None

    def save(self, state: AuditState) -> None:
        cid = state.correlation_id
        with self._lock, self._connect() as db:
            db.execute("BEGIN TRANSACTION")
            row = db.execute(
                "SELECT version, started_at, scored_at FROM audits WHERE correlation_id = ?",
                [cid],
            ).fetchone()
            stored = int(row[0]) if row else -1
            started, scored = (row[1], row[2]) if row else (None, None)
            if stored != self._loaded.get(cid, -1):
                db.execute("ROLLBACK")
                self._loaded.pop(cid, None)
                raise StaleAuditError(
                    f"audit {cid!r} was saved by another scorer since it was loaded"
                )
            # When the audit left the queue and when it was first scored, each kept once set.
            db.execute(
                "INSERT OR REPLACE INTO audits (correlation_id, instance_id, stage, state, "
                "version, updated_at, started_at, scored_at) VALUES (?, ?, ?, ?, ?, "
                "current_timestamp, coalesce(?, CASE WHEN ? THEN current_timestamp END), "
                "coalesce(?, CASE WHEN ? THEN current_timestamp END))",
                [cid, state.task.instance_id, state.stage.value, state.model_dump_json(),
                 stored + 1, started, state.stage is not Stage.QUEUED, scored,
                 state.scored is not None],
            )  # fmt: skip
            if state.scored is not None:
                s = state.scored
                db.execute(
                    "INSERT OR REPLACE INTO scores (correlation_id, instance_id, verdict, eqs, "
                    "hackable, reason, scored) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [s.correlation_id, s.instance_id, s.verdict.value, s.eqs, s.hackable,
                     s.reason, s.model_dump_json()],
                )  # fmt: skip
            db.execute("COMMIT")
            self._loaded[cid] = stored + 1

    def scores(self) -> list[TaskScored]:
        with self._lock, self._connect() as db:
            rows = db.execute("SELECT scored FROM scores ORDER BY instance_id").fetchall()
        return [TaskScored.model_validate_json(r[0]) for r in rows]

    def in_flight(self) -> int:
        with self._lock, self._connect() as db:
            row = db.execute(
                "SELECT count(*) FROM audits WHERE list_contains(?, stage)",
                [sorted(s.value for s in IN_FLIGHT)],
            ).fetchone()
        return int(row[0]) if row else 0

    def queued(self, limit: int | None) -> list[str]:
        # A queued audit is saved once, when it is ingested: `updated_at` is its place in line.
        with self._lock, self._connect() as db:
            rows = db.execute(
                "SELECT correlation_id FROM audits WHERE stage = ?"
                " ORDER BY updated_at, correlation_id LIMIT ?",
                [Stage.QUEUED.value, limit],
            ).fetchall()
        return [str(r[0]) for r in rows]

    def stop_unfinished(self) -> StoppedAudits:
        with self._lock, self._connect() as db:
            db.execute("BEGIN TRANSACTION")
            rows = db.execute(
                "SELECT correlation_id, state FROM audits WHERE list_contains(?, stage)"
                " ORDER BY updated_at, correlation_id",
                [sorted(s.value for s in UNFINISHED)],
            ).fetchall()
            for cid, text in rows:
                state = stop(AuditState.model_validate_json(text))
                db.execute(
                    "UPDATE audits SET stage = ?, state = ?, version = version + 1"
                    " WHERE correlation_id = ?",
                    [state.stage.value, state.model_dump_json(), cid],
                )
            db.execute("COMMIT")
        stopped = StoppedAudits(tuple(str(cid) for cid, _ in rows))
        for cid in stopped.correlation_ids:
            self._loaded.pop(cid, None)
        log.info("unfinished audits stopped", stopped=stopped.count, store=str(self._path))
        return stopped

    def close(self) -> None:
        """Nothing stays open between operations; kept so a service can close any store."""


# --- the read side: other processes, while a scorer runs ------------------------------------


@contextlib.contextmanager
def _reading(path: Path, wait_s: float) -> Iterator[duckdb.DuckDBPyConnection]:
    if not path.is_file():
        raise ResultsStoreError(
            path, "no results store here (has a scorer run with this state dir?)"
        )
    with connect(path, read_only=True, wait_s=wait_s) as db:
        try:
            yield db
        except duckdb.CatalogException as exc:
            raise ResultsStoreError(path, f"not a hackaudit results store: {exc}") from exc


def read_results(path: Path, *, wait_s: float = READ_WAIT_S) -> list[AuditState]:
    """Every audit in the store, finished or not, in the order they were last updated."""
    with _reading(path, wait_s) as db:
        rows = db.execute("SELECT state FROM audits ORDER BY updated_at, correlation_id").fetchall()
    return [AuditState.model_validate_json(r[0]) for r in rows]


@dataclass(frozen=True)
class AuditTimes:
    """When an audit left the queue (its sanity runs asked for) and when it was first scored;
    None when that has not happened (or the audit was stored before times were recorded)."""

    instance_id: str
    started_at: datetime | None
    scored_at: datetime | None

    @property
    def seconds_to_verdict(self) -> float | None:
        if self.started_at is None or self.scored_at is None:
            return None
        return (self.scored_at - self.started_at).total_seconds()


def read_audit_times(path: Path, *, wait_s: float = READ_WAIT_S) -> dict[str, AuditTimes]:
    """Every audit's times, by correlation id."""
    with _reading(path, wait_s) as db:
        columns = {r[0] for r in db.execute("DESCRIBE audits").fetchall()}
        if "started_at" not in columns:  # a store written before times were recorded
            rows = db.execute("SELECT correlation_id, instance_id, NULL, NULL FROM audits")
        else:
            rows = db.execute(
                "SELECT correlation_id, instance_id, started_at, scored_at FROM audits"
            )
        return {str(c): AuditTimes(str(i), a, b) for c, i, a, b in rows.fetchall()}


def read_verdict_counts(path: Path, *, wait_s: float = READ_WAIT_S) -> Counter[str]:
    """Verdicts of the latest score of each task (instance id), counted."""
    with _reading(path, wait_s) as db:
        rows = db.execute(
            "SELECT verdict, count(*) FROM (SELECT arg_max(verdict, scored_at) AS verdict "
            "FROM scores GROUP BY instance_id) GROUP BY verdict"
        ).fetchall()
    return Counter({str(verdict): int(n) for verdict, n in rows})


def read_stage_counts(path: Path, *, wait_s: float = READ_WAIT_S) -> Counter[str]:
    """Every audit in the store counted by its stage (`Stage` values, `stopped` included)."""
    with _reading(path, wait_s) as db:
        rows = db.execute("SELECT stage, count(*) FROM audits GROUP BY stage").fetchall()
    return Counter({str(stage): int(n) for stage, n in rows})
