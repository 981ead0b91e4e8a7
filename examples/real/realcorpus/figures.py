"""The figures of a dataset-wide audit (docs/verified-audit.md), computed from what the caller
read: hackaudit's report rows, the shared per-instance flags, the selection, the corpus build's
report and, when there is one, the results store's times. No I/O here.

The hackable rate follows the report's own headline (`hackaudit.cli.report_summary`): a task
counts as assessed when its first verdict says whether it is hackable (a task whose gold fails or
is flaky, or that could not be audited, was not assessed; a task the empty patch passes was, and is
hackable), and every share is `Share.count` with its 95 % Wilson interval. Strata (repository,
difficulty) are the same rule on fewer rows, so they add up to the overall counts."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hackaudit.attacker.domain.confirm.confirmation import Check
from hackaudit.cli.commands.audit import IN_PROGRESS, NOT_IN_STORE
from hackaudit.cli.progress import merged_spans
from hackaudit.cli.report_store import STOPPED
from hackaudit.cli.report_summary import VERDICTS, Share

SEED = (14, 49)  # the seed's sample of Verified tasks: 14 of 49 hackable (28.5 %)
UTBOOST = (26, 500)  # UTBoost's weak-test instances among the 500 Verified tasks
BEHAVIOUR = "behaviour"
HELPER_ONLY = "behaviour of a private helper only"
SOURCE_ONLY = "source-only trick"
EMPTY_PATCH = "empty patch passes"
KINDS = (BEHAVIOUR, SOURCE_ONLY, HELPER_ONLY, EMPTY_PATCH)
# Evidence from running the candidate against gold's behaviour (the attacker's checks).
BEHAVIOURAL_CHECKS = tuple(c.value for c in (Check.PROBES, Check.SUITE, Check.HELD_BACK))
DIFFICULTY_ORDER = ("<15 min fix", "15 min - 1 hour", "1-4 hours", ">4 hours")
UNKNOWN = "unknown"
SLOTS = 2  # run slots per worker
WORKERS = (1, 4, 16, 64)
PROJECTED_TASKS = (500, 5000)
RUN_GAP_S = 1800.0  # nothing in flight for this long: the run was stopped and resumed later
EVIDENCE_CHARS = 200
# An ERROR row of a report written while the audit goes on (`report --allow-partial`) whose
# reason says its audit is queued, running or was stopped: not a failure, a task to come.
PENDING = "not audited yet"
PENDING_REASONS = (IN_PROGRESS, NOT_IN_STORE, STOPPED)
COUNTED = (*VERDICTS, PENDING)


@dataclass(frozen=True)
class TaskFacts:
    """One audited task as the figures read it (its verdict and exploits as audited)."""

    instance_id: str
    repo: str
    difficulty: str
    verdict: str
    hackable: bool | None  # None: not assessed
    utboost: bool | None  # None: the instance is not in the shared flags
    exploits: tuple[Mapping[str, Any], ...]
    harness: int
    d: float | None
    reason: str
    sandbox: Mapping[str, float] = field(default_factory=dict)  # seconds by the field read
    kinds: Mapping[str, float] = field(default_factory=dict)  # seconds by kind of run

    @property
    def assessed(self) -> bool:
        return self.hackable is not None


def repo_of(instance_id: str) -> str:
    """`owner__name-123` -> `owner/name` (for an id the shared flags do not hold)."""
    return instance_id.rpartition("-")[0].replace("__", "/", 1) or instance_id


def task_facts(
    rows: Sequence[Mapping[str, Any]], instances: Mapping[str, Mapping[str, Any]]
) -> list[TaskFacts]:
    """Each report row with its repository, difficulty and UTBoost flag (`instances`: the
    shared flags by instance id)."""
    facts = []
    for row in rows:
        instance_id = str(row["instance_id"])
        shared = instances.get(instance_id, {})
        utboost = shared.get("utboost_insufficient_tests")
        before = row.get("before_repair")
        components = row.get("components") or {}
        facts.append(
            TaskFacts(
                instance_id=instance_id,
                repo=str(shared.get("repo") or repo_of(instance_id)),
                difficulty=str(shared.get("difficulty") or UNKNOWN),
                verdict=verdict_as_audited(row),
                hackable=hackable_as_audited(row),
                utboost=None if utboost is None else bool(utboost),
                exploits=tuple((before if isinstance(before, dict) else row).get("exploits") or ()),
                harness=int(row.get("harness_exploits") or 0),
                d=components.get("D"),
                reason=str(row.get("reason") or ""),
                sandbox=sandbox_seconds(row),
                kinds=seconds_by_kind(row),
            )
        )
    return facts


def verdict_as_audited(row: Mapping[str, Any]) -> str:
    """The task's first verdict: before repair when it was repaired (ERROR: none; `PENDING`:
    none yet, its audit is to come or to finish)."""
    before = row.get("before_repair")
    if isinstance(before, dict) and before.get("verdict"):
        return str(before["verdict"])
    verdict = str(row.get("verdict_as_audited") or row.get("verdict") or "ERROR")
    reason = str(row.get("reason") or "")
    if verdict == "ERROR" and any(reason.endswith(why) for why in PENDING_REASONS):
        return PENDING
    return verdict


def hackable_as_audited(row: Mapping[str, Any]) -> bool | None:
    """Whether the first verdict found the task hackable; None: not assessed. The report row's
    `hackable` is its last verdict's: for a repaired task, the first verdict was hackable when it
    listed exploits (an audit run with --no-repair has no repaired task)."""
    before = row.get("before_repair")
    if isinstance(before, dict) and before.get("verdict"):
        return bool(before.get("exploits"))
    hackable = row.get("hackable")
    return None if hackable is None else bool(hackable)


def sandbox_seconds(row: Mapping[str, Any]) -> dict[str, float]:
    """The task's sandbox-seconds as its report row gives them, by the field read: the attack's
    (`spent.by_kind` summed: grading, probes, suite, gold's coverage; else `spent.sandbox_seconds`)
    and the reference pool's (`reference.sandbox_seconds`, kept apart from the attack's). Gold's
    coverage is inside `spent.by_kind`, so `gold_coverage.sandbox_seconds` is not added again;
    the sanity runs (gold's repeats, the empty patch) are in no report field."""
    found: dict[str, float] = {}
    spent = row.get("spent")
    if isinstance(spent, dict):
        by_kind = spent.get("by_kind") or {}
        if by_kind:
            found["spent.by_kind"] = float(sum(by_kind.values()))
        else:
            found["spent.sandbox_seconds"] = float(spent.get("sandbox_seconds") or 0.0)
    reference = row.get("reference")
    if isinstance(reference, dict) and reference.get("sandbox_seconds") is not None:
        found["reference.sandbox_seconds"] = float(reference["sandbox_seconds"])
    return found


def seconds_by_kind(row: Mapping[str, Any]) -> dict[str, float]:
    """The same sandbox-seconds by kind of run: the attack's kinds as `spent.by_kind` names them
    (`grade`: the candidates graded; `probe`, `suite`: the checks of accepted candidates;
    `coverage`: gold's coverage) and `reference` for the reference pool."""
    found: dict[str, float] = {}
    spent = row.get("spent")
    if isinstance(spent, dict):
        found |= {str(k): float(v) for k, v in (spent.get("by_kind") or {}).items()}
    reference = row.get("reference")
    if isinstance(reference, dict) and reference.get("sandbox_seconds") is not None:
        found["reference"] = found.get("reference", 0.0) + float(reference["sandbox_seconds"])
    return found


def share_json(share: Share) -> dict[str, Any]:
    return {
        "tasks": share.tasks,
        "of": share.of,
        "share": share.share,
        "interval95": list(share.interval95) if share.interval95 else None,
        "text": share_text(share),
    }


def share_text(share: Share) -> str:
    """The share as `k of n (p %, lo–hi %)`; `k of 0` when nothing was counted."""
    if share.share is None or share.interval95 is None:
        return f"{share.tasks} of {share.of}"
    low, high = share.interval95
    return f"{share.tasks} of {share.of} ({share.share:.1%}, {low:.1%}–{high:.1%})".replace(
        "%", " %"
    )


def _hackable_share(facts: Iterable[TaskFacts]) -> Share:
    assessed = [f for f in facts if f.assessed]
    return Share.count(sum(bool(f.hackable) for f in assessed), len(assessed))


def _difficulty_key(label: str) -> tuple[int, str]:
    order = DIFFICULTY_ORDER.index(label) if label in DIFFICULTY_ORDER else len(DIFFICULTY_ORDER)
    return order, label


def _strata(facts: Sequence[TaskFacts], key: str) -> dict[str, list[TaskFacts]]:
    groups: dict[str, list[TaskFacts]] = defaultdict(list)
    for f in facts:
        groups[getattr(f, key)].append(f)
    order = sorted(groups, key=_difficulty_key if key == "difficulty" else str)
    return {label: groups[label] for label in order}


def hackable_rates(facts: Sequence[TaskFacts]) -> dict[str, Any]:
    """Figure 1: the hackable rate as audited, overall and by stratum, beside the references."""
    assessed = [f for f in facts if f.assessed]
    flagged = [f for f in assessed if f.utboost is not None]
    return {
        "overall": share_json(_hackable_share(facts)),
        "by_repository": {
            repo: share_json(_hackable_share(group))
            for repo, group in _strata(facts, "repo").items()
        },
        "by_difficulty": {
            label: share_json(_hackable_share(group))
            for label, group in _strata(facts, "difficulty").items()
        },
        "references": {
            "seed (sampled Verified tasks)": share_json(Share.count(*SEED)),
            "UTBoost (all Verified tasks)": share_json(Share.count(*UTBOOST)),
            "UTBoost on the same audited tasks": share_json(
                Share.count(sum(bool(f.utboost) for f in flagged), len(flagged))
            ),
        },
    }


def _counts(facts: Iterable[TaskFacts]) -> dict[str, int]:
    found = Counter(f.verdict for f in facts)
    return {v: found.get(v, 0) for v in COUNTED}


def verdict_counts(facts: Sequence[TaskFacts]) -> dict[str, Any]:
    """Figure 2: verdicts as audited, overall and by repository (`PENDING` apart from ERROR);
    mean D per verdict."""
    mean_d: dict[str, float | None] = {}
    for verdict in VERDICTS:
        values = [f.d for f in facts if f.verdict == verdict and f.d is not None]
        mean_d[verdict] = statistics.fmean(values) if values else None
    return {
        "overall": _counts(facts),
        "by_repository": {repo: _counts(group) for repo, group in _strata(facts, "repo").items()},
        "mean_d": mean_d,
    }


def exploit_kind(facts: TaskFacts) -> str | None:
    """What decided a hackable task, the strongest evidence first: an exploit shown wrong by
    what the code's callers see (differential probes of public calls or replayed tests, the
    wider suite, held-back tests); else a source-only trick (incorrect by construction); else
    an exploit seen only in private helpers the probes call directly (the report's
    `helper_only`: wrong only if the helper is ever given such an input); else the empty patch
    passing its tests (no exploit listed). None: not hackable."""
    if not facts.hackable:
        return None
    behavioural = [
        e for e in facts.exploits if str(e.get("evidence") or "").startswith(BEHAVIOURAL_CHECKS)
    ]
    if any(not e.get("helper_only") for e in behavioural):
        return BEHAVIOUR
    if len(behavioural) < len(facts.exploits):
        return SOURCE_ONLY
    return HELPER_ONLY if behavioural else EMPTY_PATCH


def exploit_kinds(facts: Sequence[TaskFacts]) -> dict[str, Any]:
    """Figure 3: the hackable rate split by the kind of exploit that decided each task; the
    harness's holes apart."""
    assessed = [f for f in facts if f.assessed]
    hackable = [f for f in assessed if f.hackable]
    kinds = Counter(exploit_kind(f) for f in hackable)
    harness = [f for f in facts if f.harness]
    return {
        "hackable": len(hackable),
        "assessed": len(assessed),
        "kinds": {
            kind: {
                "tasks": kinds.get(kind, 0),
                "rate": share_json(Share.count(kinds.get(kind, 0), len(assessed))),
                "share_of_hackable": kinds.get(kind, 0) / len(hackable) if hackable else None,
                "instance_ids": sorted(f.instance_id for f in hackable if exploit_kind(f) == kind),
            }
            for kind in KINDS
        },
        "harness": {
            "tasks": len(harness),
            "not_otherwise_hackable": sum(1 for f in harness if not f.hackable),
            "instance_ids": sorted(f.instance_id for f in harness),
        },
    }


def _listed(facts: TaskFacts) -> dict[str, Any]:
    entry: dict[str, Any] = {"instance_id": facts.instance_id, "verdict": facts.verdict}
    if facts.hackable:
        first = facts.exploits[0] if facts.exploits else {}
        entry["diff"] = first.get("diff")
        entry["evidence"] = str(first.get("evidence") or facts.reason)[:EVIDENCE_CHARS]
    return entry


def agreement(facts: Sequence[TaskFacts]) -> dict[str, Any]:
    """Figure 4: hackaudit's hackable against UTBoost's flag on the audited, assessed tasks
    that UTBoost's flags cover."""
    both = [f for f in facts if f.assessed and f.utboost is not None]
    cells = {
        "flagged_and_found": [f for f in both if f.utboost and f.hackable],
        "flagged_and_missed": [f for f in both if f.utboost and not f.hackable],
        "hackable_not_flagged": [f for f in both if not f.utboost and f.hackable],
        "neither": [f for f in both if not f.utboost and not f.hackable],
    }
    return {
        "tasks": len(both),
        "counts": {name: len(group) for name, group in cells.items()},
        "lists": {
            name: [_listed(f) for f in group] for name, group in cells.items() if name != "neither"
        },
    }


def flag_maps(facts: Sequence[TaskFacts]) -> tuple[dict[str, bool], dict[str, bool]]:
    """`{instance_id: bool}` for hackaudit (hackable as audited) and UTBoost, over the same
    tasks: the audited, assessed ones the shared flags cover."""
    both = sorted((f for f in facts if f.assessed and f.utboost is not None), key=_id)
    return (
        {f.instance_id: bool(f.hackable) for f in both},
        {f.instance_id: bool(f.utboost) for f in both},
    )


def _id(facts: TaskFacts) -> str:
    return facts.instance_id


@dataclass(frozen=True)
class AuditTime:
    """One audit's times from the results store (None: not recorded)."""

    instance_id: str
    started_at: datetime | None
    scored_at: datetime | None


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    rank = q * (len(ordered) - 1)  # linear interpolation between the closest ranks
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def runs_of(
    times: Sequence[AuditTime], gap_s: float = RUN_GAP_S
) -> list[tuple[datetime, datetime]]:
    """The separate runs: the audits' [started, scored] spans merged, split where nothing was
    in flight for longer than `gap_s` (a run stopped, then resumed)."""
    spans = [(t.started_at, t.scored_at) for t in times if t.started_at and t.scored_at]
    return merged_spans(spans, gap_s)


def cost(
    facts: Sequence[TaskFacts], times: Sequence[AuditTime] | None, slots: int = SLOTS
) -> dict[str, Any]:
    """Figure 5: time to a verdict, sandbox-seconds per task, the run's wall time, and a
    projection to larger datasets on more workers."""
    measured = [f for f in facts if f.sandbox]
    per_task = [sum(f.sandbox.values()) for f in measured]
    fields = sorted({name for f in measured for name in f.sandbox})
    sandbox: dict[str, Any] = {
        "tasks": len(measured),
        "fields_summed": fields,
        "total_s": sum(per_task),
        "mean_per_task_s": statistics.fmean(per_task) if per_task else None,
        "median_per_task_s": statistics.median(per_task) if per_task else None,
        "by_field_s": {name: sum(f.sandbox.get(name, 0.0) for f in measured) for name in fields},
        "by_kind_s": _by_kind(measured),
    }
    if times is None:
        return {"sandbox": sandbox, "store": None}
    audited = {f.instance_id for f in facts}
    mine = [t for t in times if t.instance_id in audited]
    seconds = [
        (t.scored_at - t.started_at).total_seconds()
        for t in mine
        if t.started_at is not None and t.scored_at is not None
    ]
    runs = runs_of(mine)
    starts = [t.started_at for t in mine if t.started_at]
    ends = [t.scored_at for t in mine if t.scored_at]
    first_to_last = (max(ends) - min(starts)).total_seconds() if starts and ends else None
    summed = sum((end - start).total_seconds() for start, end in runs)
    wall = summed if len(runs) > 1 else first_to_last
    store: dict[str, Any] = {
        "audits": len(mine),
        "to_verdict_s": {
            "tasks": len(seconds),
            "median": statistics.median(seconds) if seconds else None,
            "p90": _percentile(seconds, 0.9) if seconds else None,
            "max": max(seconds) if seconds else None,
        },
        "wall": {
            "first_to_last_s": first_to_last,
            "runs": [[start.isoformat(), end.isoformat()] for start, end in runs],
            "runs_summed_s": summed if runs else None,
            "used_s": wall,
            "rule": (
                f"{len(runs)} runs told apart by a gap of more than {gap_text(RUN_GAP_S)} with "
                "no audit in flight: their spans summed"
                if len(runs) > 1
                else f"one run (no gap of more than {gap_text(RUN_GAP_S)} with no audit in "
                "flight): first start to last verdict"
            ),
        },
    }
    timed = {t.instance_id for t in mine if t.started_at is not None and t.scored_at is not None}
    timed_total = sum(sum(f.sandbox.values()) for f in measured if f.instance_id in timed)
    store |= _projection(sandbox, timed_total, wall, len(seconds), slots)
    return {"sandbox": sandbox, "store": store}


def _by_kind(facts: Sequence[TaskFacts]) -> dict[str, float]:
    """Sandbox-seconds summed by kind of run, the largest first."""
    found: Counter[str] = Counter()
    for f in facts:
        found.update(f.kinds)
    return dict(found.most_common())


def gap_text(seconds: float) -> str:
    return f"{seconds / 60:.0f} min"


def _projection(
    sandbox: Mapping[str, Any], timed_total: float, wall: float | None, scored: int, slots: int
) -> dict[str, Any]:
    """`timed_total`: the sandbox-seconds of the tasks whose audits the store timed (a report
    gathered from several runs may hold tasks whose store is not given)."""
    per_task = sandbox["mean_per_task_s"]
    if not wall or not scored or per_task is None or not timed_total:
        return {"per_100_tasks": None, "utilisation": None, "projection": None}
    utilisation = timed_total / (wall * slots)
    return {
        "per_100_tasks": {
            "sandbox_hours": 100 * per_task / 3600,
            "wall_hours": 100 * wall / scored / 3600,
        },
        "utilisation": utilisation,
        "projection": {
            "model": (
                f"wall hours = tasks × {per_task:.0f} sandbox-seconds per task ÷ (workers × "
                f"{slots} slots × {utilisation:.2f} measured slot utilisation) ÷ 3600"
            ),
            "hours": {
                str(tasks): {
                    str(n): tasks * per_task / (n * slots * utilisation) / 3600 for n in WORKERS
                }
                for tasks in PROJECTED_TASKS
            },
            "sandbox_hours": {str(t): t * per_task / 3600 for t in PROJECTED_TASKS},
        },
    }


def not_audited(
    selected: Sequence[str],
    facts: Sequence[TaskFacts],
    errors: Mapping[str, str],
    corpus: Mapping[str, Any] | None,
) -> list[dict[str, str]]:
    """Figure 6: every selected task without a verdict, and why: the report's ERROR reason,
    else the corpus build's failure (not built, or its classification failed), else not in the
    audited task files."""
    with_verdict = {f.instance_id for f in facts if f.verdict not in ("ERROR", PENDING)}
    corpus_tasks = (corpus or {}).get("tasks") or {}
    found = []
    for instance_id in selected:
        if instance_id in with_verdict:
            continue
        why = errors.get(instance_id) or _corpus_failure(corpus_tasks.get(instance_id))
        why = why or "not in the audited task files"
        found.append({"instance_id": instance_id, "why": why})
    return found


def _corpus_failure(entry: Any) -> str:
    if not isinstance(entry, dict):
        return ""
    if entry.get("built") is False:
        problems = entry.get("problems") or ["not built"]
        return "corpus: " + _first_line(problems)
    if entry.get("pending_classification"):
        problems = (entry.get("classification") or {}).get("problems") or ["not classified yet"]
        return "classification: " + _first_line(problems)
    return ""


def _first_line(problems: Sequence[Any]) -> str:
    return str(problems[0]).splitlines()[0][:EVIDENCE_CHARS]


def figures(
    rows: Sequence[Mapping[str, Any]],
    instances: Mapping[str, Mapping[str, Any]],
    *,
    selected: Sequence[str],
    errors: Mapping[str, str],
    corpus: Mapping[str, Any] | None,
    times: Sequence[AuditTime] | None,
    headline: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every figure, machine-readable."""
    facts = task_facts(rows, instances)
    rates = hackable_rates(facts)
    overall = rates["overall"]
    check = (headline or {}).get("hackable")
    return {
        "tasks": len(facts),
        "hackable": rates,
        "headline_agrees": (
            None
            if not isinstance(check, dict)
            else (check.get("tasks"), check.get("of")) == (overall["tasks"], overall["of"])
        ),
        "verdicts": verdict_counts(facts),
        "kinds": exploit_kinds(facts),
        "agreement": agreement(facts),
        "cost": cost(facts, times),
        "not_audited": not_audited(selected, facts, errors, corpus),
    }
