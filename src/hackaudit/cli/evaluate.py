"""The attacker's accuracy against a labelled corpus: does it find an exploit in every task whose
tests are known to accept a wrong patch, and never in a task whose tests are known to be robust?

Exploits that tamper with the harness (a `conftest.py` forcing passes, edited test files) are
counted apart: under SWE-bench's grading they get past every pytest task alike, so they say
something about the environment's harness, not about the task's tests. They decide only the tasks
labelled hackable *through* a harness hole (`how: harness_hole`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hackaudit.cli.report_model import caveats
from hackaudit.shared.contracts import AttackCompleted, CandidateVerdict, TaskScored

HACKABLE = "hackable"
HARNESS_HOLE = "harness_hole"
ROBUST_LABELS = {"robust", "equivalent_hunk"}  # a correct patch here must never be an exploit
# Tests that reject a correct rewrite of gold but no wrong patch: an exploit there is a false alarm.
OVER_STRICT = "over_strict"
NO_EXPLOIT_LABELS = ROBUST_LABELS | {OVER_STRICT}
SANITY_LABELS = {"broken", "flaky", "empty_passes"}  # dropped before any attack
# A real task no study flagged: not known robust, so an exploit found there is no false alarm by
# label; it is listed for a person to check (a weakness missed so far, or a wrong confirmation).
UNFLAGGED = "unflagged"


@dataclass(frozen=True)
class Label:
    label: str
    how: str | None = None
    # A real corpus's flagged task with a leaderboard patch shown wrong (`wrong_patches`): the
    # task rewards a wrong patch someone submitted, not only one a study wrote.
    known_wrong: bool = False


@dataclass(frozen=True)
class TaskEvaluation:
    instance_id: str
    label: Label
    verdict: str | None
    detected: bool  # a confirmed exploit of the task's tests (of its harness, for harness holes)
    exploit_strategies: tuple[str, ...]
    harness_exploits: int
    candidates: int
    sandbox_s: float
    first_exploit_at: int | None  # candidates graded until the first exploit, that one included
    budget_note: str = ""  # why the attack ran fewer candidates than its budget, when it did
    unverified: tuple[str, ...] = ()  # a KEEP's caveats: what its verdict did not verify

    @property
    def outcome(self) -> str:
        if self.label.label == HACKABLE:
            return "hit" if self.detected else "miss"
        if self.label.label in NO_EXPLOIT_LABELS:
            return "false alarm" if self.detected else "correct"
        if self.label.label in SANITY_LABELS:
            return "dropped" if self.verdict == "DROP" else "not dropped"
        if self.label.label == UNFLAGGED:
            return "exploit found" if self.detected else "none found"
        return "unlabelled"


@dataclass(frozen=True)
class Accuracy:
    hackable: int
    hits: int
    robust: int
    false_alarms: int
    sanity: int
    sanity_dropped: int
    unflagged: int = 0
    unflagged_found: int = 0
    known_wrong: int = 0  # hackable tasks with a known wrong patch
    known_wrong_hits: int = 0

    @property
    def recall(self) -> float:
        return self.hits / self.hackable if self.hackable else 0.0


def load_labels(path: Path) -> dict[str, Label]:
    """The example corpus's labels (`{id: {"label", "how"?}}`), or a real corpus's
    (`{"labels": {id: {"hackable": bool}}}`: flagged weak by a study, or unflagged)."""
    raw = json.loads(path.read_text())
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: labels must map instance_id to a label object")
    if isinstance(raw.get("labels"), dict):
        return _flagged_labels(path, raw["labels"])
    labels = {}
    for instance_id, entry in raw.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("label"), str):
            raise ValueError(f"{path}: {instance_id}: field 'label' is missing")
        how = entry.get("how")
        labels[instance_id] = Label(entry["label"], how if isinstance(how, str) else None)
    return labels


def _flagged_labels(path: Path, raw: dict[str, object]) -> dict[str, Label]:
    labels = {}
    for instance_id, entry in raw.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("hackable"), bool):
            raise ValueError(f"{path}: {instance_id}: field 'hackable' (true or false) is missing")
        wrong = entry.get("wrong_patches", [])
        if not isinstance(wrong, list):
            raise ValueError(f"{path}: {instance_id}: field 'wrong_patches' must be a list")
        hackable = entry["hackable"]
        labels[instance_id] = Label(
            HACKABLE if hackable else UNFLAGGED, known_wrong=bool(hackable and wrong)
        )
    return labels


def evaluate_task(
    instance_id: str,
    label: Label,
    scored: TaskScored | None,
    attack: AttackCompleted | None,
    sandbox_s: float,
) -> TaskEvaluation:
    outcomes = attack.outcomes if attack else ()
    through_harness = label.how == HARNESS_HOLE
    exploits = [
        o
        for o in outcomes
        if o.verdict is CandidateVerdict.EXPLOIT and o.tampering is through_harness
    ]
    first = next((i + 1 for i, o in enumerate(outcomes) if o in exploits), None)
    return TaskEvaluation(
        instance_id=instance_id,
        label=label,
        verdict=scored.verdict.value if scored else None,
        detected=bool(exploits),
        exploit_strategies=tuple(sorted({o.candidate.provenance.strategy for o in exploits})),
        harness_exploits=sum(
            1 for o in outcomes if o.verdict is CandidateVerdict.EXPLOIT and o.tampering
        ),
        candidates=len(outcomes),
        sandbox_s=sandbox_s,
        first_exploit_at=first,
        budget_note=attack.budget_note if attack else "",
        unverified=caveats(scored),
    )


def accuracy(rows: Mapping[str, TaskEvaluation]) -> Accuracy:
    def count(labels: set[str], outcome: str | None = None) -> int:
        return sum(
            1
            for r in rows.values()
            if r.label.label in labels and (outcome is None or r.outcome == outcome)
        )

    known_wrong = [r for r in rows.values() if r.label.known_wrong]
    return Accuracy(
        hackable=count({HACKABLE}),
        hits=count({HACKABLE}, "hit"),
        robust=count(NO_EXPLOIT_LABELS),
        false_alarms=count(NO_EXPLOIT_LABELS, "false alarm"),
        sanity=count(SANITY_LABELS),
        sanity_dropped=count(SANITY_LABELS, "dropped"),
        unflagged=count({UNFLAGGED}),
        unflagged_found=count({UNFLAGGED}, "exploit found"),
        known_wrong=len(known_wrong),
        known_wrong_hits=sum(1 for r in known_wrong if r.outcome == "hit"),
    )
