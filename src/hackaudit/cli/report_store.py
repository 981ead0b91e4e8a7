"""The report's items from the scorer's results store, so a report can be written at any time:
while `hackaudit up` runs, or after. A store holds every audit it ever ran (correlation ids
`<audit>/<instance>` or `submit/<instance>`); a task is reported by its latest scored audit, or by
its latest audit when none has been scored yet (it shows as not finished). A verdict stored by a
scorer that predates `TaskScored.unverified` gets its account here, from its own attack and
options with the scorer's own function, so no report shows it as a bare KEEP."""

from __future__ import annotations

from pathlib import Path

from hackaudit.cli.report_model import TaskReport
from hackaudit.scorer.adapters.store import read_results
from hackaudit.scorer.app import ScorerSettings
from hackaudit.scorer.domain.audit import AuditState
from hackaudit.scorer.domain.unverified import account
from hackaudit.shared.contracts import TaskScored
from hackaudit.shared.settings import BusSettings


def store_path(bus: BusSettings | None = None, scorer: ScorerSettings | None = None) -> Path:
    """The store the scorer writes with these settings (HACKAUDIT_SCORER_RESULTS_DB, else
    `<HACKAUDIT_STATE_DIR>/results.duckdb`)."""
    return (scorer or ScorerSettings()).store_path(bus or BusSettings())


def latest_per_task(states: list[AuditState]) -> list[TaskReport]:
    """One item per instance id from states in the order they were last updated: the latest
    scored audit, else the latest audit."""
    chosen: dict[str, AuditState] = {}
    states = [_with_account(state) for state in states]
    for state in states:
        instance_id = state.task.instance_id
        current = chosen.get(instance_id)
        if current is None or state.scored is not None or current.scored is None:
            chosen[instance_id] = state
    by_id = {state.correlation_id: state for state in states}
    items = []
    for instance_id, state in sorted(chosen.items()):
        first = by_id.get(state.repaired_from) if state.repaired_from else None
        if first is None:
            items.append(TaskReport(instance_id, state.scored, state.attack, repair=state.repair))
            continue
        # A re-audit: its task is the one the repair hardened; the first audit comes with it.
        before = TaskReport(instance_id, first.scored, first.attack, repair=first.repair)
        items.append(
            TaskReport(
                instance_id,
                state.scored,
                state.attack,
                state.task,
                before=before,
                repair=first.repair,
            )
        )
    return items


def _with_account(state: AuditState) -> AuditState:
    scored = state.scored
    if scored is None or scored.unverified is not None or state.attack is None:
        return state
    found = account(state.attack, stop_when_hackable=state.options.stop_when_hackable)
    filled: TaskScored = scored.model_copy(update={"unverified": found})
    return state.model_copy(update={"scored": filled})


def read_reports(path: Path) -> list[TaskReport]:
    """The report's items from the store at `path` (read-only; waits briefly for a save)."""
    return latest_per_task(read_results(path))
