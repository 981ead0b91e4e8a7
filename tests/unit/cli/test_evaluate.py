"""The attacker's confusion table against labels, on hand-made attack results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hackaudit.cli.evaluate import Label, accuracy, evaluate_task, load_labels
from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    Provenance,
    TaskScored,
    Verdict,
)


def outcome(
    n: int, verdict: CandidateVerdict, strategy: str, tampering: bool = False
) -> CandidateOutcome:
    candidate = Candidate(instance_id="t", diff=f"d{n}", provenance=Provenance(strategy=strategy))
    return CandidateOutcome(candidate=candidate, verdict=verdict, tampering=tampering)


def attack(*outcomes: CandidateOutcome) -> AttackCompleted:
    return AttackCompleted(correlation_id="c", instance_id="t", outcomes=outcomes)


def scored(verdict: Verdict) -> TaskScored:
    return TaskScored(correlation_id="c", instance_id="t", verdict=verdict)


def test_a_task_exploit_is_a_hit_and_its_budget_is_counted() -> None:
    row = evaluate_task(
        "t", Label("hackable", "edge_case_untested"), scored(Verdict.FIX),
        attack(
            outcome(1, CandidateVerdict.BLOCKED, "partial_fix"),
            outcome(2, CandidateVerdict.EXPLOIT, "harness", tampering=True),
            outcome(3, CandidateVerdict.EXPLOIT, "mutation"),
        ),
        90.0,
    )  # fmt: skip
    assert row.outcome == "hit"
    assert row.first_exploit_at == 3  # the tampering one does not count
    assert row.exploit_strategies == ("mutation",)
    assert row.harness_exploits == 1
    assert row.candidates == 3


@pytest.mark.parametrize(
    ("label", "outcomes", "expected"),
    [
        ("robust", (outcome(1, CandidateVerdict.EXPLOIT, "harness", tampering=True),), "correct"),
        ("robust", (outcome(1, CandidateVerdict.EXPLOIT, "partial_fix"),), "false alarm"),
        ("equivalent_hunk", (outcome(1, CandidateVerdict.UNCONFIRMED, "partial_fix"),), "correct"),
        ("hackable", (outcome(1, CandidateVerdict.UNCONFIRMED, "mutation"),), "miss"),
    ],
)
def test_outcomes(label: str, outcomes: tuple[CandidateOutcome, ...], expected: str) -> None:
    row = evaluate_task("t", Label(label), scored(Verdict.KEEP), attack(*outcomes), 0.0)
    assert row.outcome == expected


def test_accuracy_counts_each_kind_of_label() -> None:
    found = attack(outcome(1, CandidateVerdict.EXPLOIT, "llm"))
    rows = {
        "a": evaluate_task("a", Label("hackable"), None, found, 0),
        "b": evaluate_task("b", Label("hackable"), None, attack(), 0),
        "c": evaluate_task("c", Label("robust"), None, found, 0),
        "d": evaluate_task("d", Label("broken"), scored(Verdict.DROP), None, 0),
    }
    acc = accuracy(rows)
    assert (acc.hits, acc.hackable, acc.false_alarms, acc.robust) == (1, 2, 1, 1)
    assert acc.recall == 0.5
    assert (acc.sanity_dropped, acc.sanity) == (1, 1)


def test_labels_file_errors_name_the_task(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"x__x-1": {"how": "edge_case_untested"}}))
    with pytest.raises(ValueError, match="x__x-1: field 'label'"):
        load_labels(path)
    path.write_text(json.dumps({"x__x-1": {"label": "robust"}}))
    assert load_labels(path) == {"x__x-1": Label("robust")}


def test_a_harness_hole_is_found_by_tampering_and_only_there() -> None:
    tampering = attack(outcome(1, CandidateVerdict.EXPLOIT, "harness", tampering=True))
    hole = evaluate_task("t", Label("hackable", "harness_hole"), None, tampering, 0.0)
    assert hole.outcome == "hit"
    assert hole.first_exploit_at == 1
    robust = evaluate_task("t", Label("robust"), None, tampering, 0.0)
    assert robust.outcome == "correct"


def test_a_real_corpus_labels_flagged_tasks_hackable_and_lists_exploits_on_unflagged_ones(
    tmp_path: Path,
) -> None:
    path = tmp_path / "labels.json"
    path.write_text(
        json.dumps({"labels": {"weak-1": {"hackable": True}, "other-1": {"hackable": False},
                               "weak-2": {"hackable": True, "wrong_patches": ["sub_a"]}}})
    )  # fmt: skip
    labels = load_labels(path)
    assert labels == {
        "weak-1": Label("hackable"),
        "other-1": Label("unflagged"),
        "weak-2": Label("hackable", known_wrong=True),
    }
    found = evaluate_task(
        "other-1", labels["other-1"], scored(Verdict.FIX),
        attack(outcome(1, CandidateVerdict.EXPLOIT, "mutation")), 1.0,
    )  # fmt: skip
    missed = evaluate_task(
        "weak-1", labels["weak-1"], scored(Verdict.KEEP),
        attack(outcome(1, CandidateVerdict.UNCONFIRMED, "mutation")), 1.0,
    )  # fmt: skip
    assert (found.outcome, missed.outcome) == ("exploit found", "miss")
    hit = evaluate_task(
        "weak-2", labels["weak-2"], scored(Verdict.FIX),
        attack(outcome(1, CandidateVerdict.EXPLOIT, "mutation")), 1.0,
    )  # fmt: skip
    acc = accuracy({"other-1": found, "weak-1": missed, "weak-2": hit})
    assert (acc.hits, acc.hackable, acc.unflagged_found, acc.unflagged) == (1, 2, 1, 1)
    assert (acc.known_wrong_hits, acc.known_wrong) == (1, 1)
    assert acc.false_alarms == acc.robust == 0
    path.write_text(json.dumps({"labels": {"x": {"hackable": True, "wrong_patches": "a"}}}))
    with pytest.raises(ValueError, match="x: field 'wrong_patches'"):
        load_labels(path)
    path.write_text(json.dumps({"labels": {"x": {"source": "UTBoost"}}}))
    with pytest.raises(ValueError, match="x: field 'hackable'"):
        load_labels(path)


def test_the_reason_a_budget_was_not_spent_reaches_the_row() -> None:
    short = AttackCompleted(
        correlation_id="c", instance_id="t", budget="15 candidates",
        outcomes=(outcome(1, CandidateVerdict.BLOCKED, "mutation"),),
        budget_note="only 1 distinct behaviour-changing candidate for this gold patch",
    )  # fmt: skip
    row = evaluate_task("t", Label("hackable"), None, short, 1.0)
    assert row.budget_note.startswith("only 1 distinct")
    assert evaluate_task("t", Label("hackable"), None, None, 0.0).budget_note == ""
