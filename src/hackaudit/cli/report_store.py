"""The report's items from the scorer's results store, so a report can be written at any time:
while `hackaudit up` runs, or after. A store holds every audit it ever ran (correlation ids
`<audit>/<instance>` or `submit/<instance>`); a task is reported by its latest scored audit, or by
its latest audit when none has been scored yet (it shows as not finished; an audit a stopped
one-shot run left unfinished, marked stopped when the next one started, says so). A verdict
stored by a scorer that predates `TaskScored.unverified` gets its account here, from its own
attack and options with the scorer's own function, so no report shows it as a bare KEEP.

`resumable` is what `audit --resume` skips: the tasks whose latest finished audit ran on the same
task, options and hackaudit version, with the report items those audits give.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hackaudit.cli.report_model import TaskReport
from hackaudit.scorer.adapters.store import read_results
from hackaudit.scorer.app import ScorerSettings
from hackaudit.scorer.domain.audit import AuditState, Stage
from hackaudit.scorer.domain.unverified import account
from hackaudit.shared.contracts import AuditOptions, Task, TaskScored, Verdict
from hackaudit.shared.settings import BusSettings

STOPPED = (
    "its audit was stopped: the run that audited it was stopped before its verdict, and a later "
    "run gave it up (audit it again, e.g. with `hackaudit audit --resume`)"
)


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
        item = (
            TaskReport(instance_id, state.scored, state.attack, repair=state.repair)
            if first is None
            else _reaudit_item(first, state)
        )
        if state.scored is None and state.stage is Stage.STOPPED:
            item = replace(item, unfinished=STOPPED)
        items.append(item)
    return items


def _reaudit_item(first: AuditState, reaudit: AuditState) -> TaskReport:
    """A re-audit: its task is the one the repair hardened; the first audit comes with it."""
    instance_id = first.task.instance_id
    before = TaskReport(instance_id, first.scored, first.attack, repair=first.repair)
    return TaskReport(
        instance_id,
        reaudit.scored,
        reaudit.attack,
        reaudit.task,
        before=before,
        repair=first.repair,
    )


def resumable(
    states: list[AuditState], tasks: list[Task], options: AuditOptions
) -> dict[str, TaskReport]:
    """The tasks (by instance id) that need not be audited again, each with its report item,
    from `states` in the order they were last updated (the store's order).

    A task is resumed when its latest finished audit ran on the same task (`same_task`), with equal
    `options` (budget, judge, repair: as this run sets them) and under the hackaudit version
    `options` names (an audit that recorded none never matches). Finished: scored and, when the
    audit repairs, a FIX with exploits also repaired and, when the repair hardened the task,
    re-audited. Its item is the one the audit would have given, re-audit included."""
    if not options.hackaudit_version:
        return {}
    states = [_with_account(state) for state in states]
    reaudits = {s.repaired_from: s for s in states if s.repaired_from and s.scored is not None}
    wanted = {task.instance_id: task for task in tasks}
    latest: dict[str, AuditState] = {}
    for state in states:
        first = state.task.instance_id in wanted and not state.repaired_from
        if first and _finished(state, reaudits.get(state.correlation_id)):
            latest[state.task.instance_id] = state
    found = {}
    for instance_id, state in latest.items():
        if not same_task(state.task, wanted[instance_id]) or state.options != options:
            continue
        reaudit = reaudits.get(state.correlation_id)
        if reaudit is not None and state.repair is not None and state.repair.hardened_task:
            found[instance_id] = _reaudit_item(state, reaudit)
        else:
            found[instance_id] = TaskReport(
                instance_id, state.scored, state.attack, repair=state.repair
            )
    return found


def same_task(stored: Task, ingested: Task) -> bool:
    """Whether an audit stored with `stored` ran on the task `ingested` as read from its file:
    equal in every field, the image aside when the file names none (the image built from the
    task's environment was set on the task the audit ran on)."""
    if ingested.image is None:
        stored = stored.model_copy(update={"image": None})
    return stored == ingested


def _finished(state: AuditState, reaudit: AuditState | None) -> bool:
    """Whether a first audit's verdict is final: as `progress.AuditTracker` waits for it."""
    scored = state.scored
    if scored is None:
        return False
    if not state.options.repair or scored.verdict is not Verdict.FIX or not scored.exploits:
        return True
    if state.repair is None:
        return False
    return state.repair.hardened_task is None or reaudit is not None


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
