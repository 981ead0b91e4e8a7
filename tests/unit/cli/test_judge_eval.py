"""`hackaudit eval judge`'s figures, computed by hand, and its ground truth readers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hackaudit.cli import judge_eval
from hackaudit.shared.contracts import (
    Candidate,
    JudgeLabel,
    JudgeSample,
    JudgeSampleOutcome,
    JudgeVerdict,
    Task,
)

TASK = Task(instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="+gold",
            test_patch="+t", FAIL_TO_PASS=["t::a"])  # fmt: skip
C, P, W, A = JudgeLabel.CORRECT, JudgeLabel.PARTIAL, JudgeLabel.INCORRECT, JudgeLabel.ABSTAIN


def row(truth: judge_eval.Truth, *samples: JudgeLabel | None) -> judge_eval.Judged:
    details = tuple(
        JudgeSample(label=s) if s is not None
        else JudgeSample(label=A, outcome=JudgeSampleOutcome.TIMEOUT)
        for s in samples
    )  # fmt: skip
    answered = [s for s in samples if s is not None]
    label = max(set(answered), key=answered.count) if answered else A
    if answered and answered.count(label) < 2:
        label = A
    item = judge_eval.Labelled(TASK, Candidate(instance_id=TASK.instance_id, diff=str(samples)),
                               truth, "gold")  # fmt: skip
    verdict = JudgeVerdict(candidate_id="x", samples=tuple(d.label for d in details),
                           label=label, details=details)  # fmt: skip
    return judge_eval.Judged(item, verdict)


def test_trust_figures_by_hand() -> None:
    rows = [
        row("correct", C, C, C),  # right, unanimous
        row("correct", C, P, P),  # said incorrect (partial): wrong
        row("incorrect", W, W, P),  # right
        row("incorrect", C, C, W),  # fooled: wrong
        row("incorrect", C, P, W),  # split: abstains
        row("incorrect", W, None, None),  # one answer: abstains
    ]
    f = judge_eval.figures(rows)
    assert (f.total, f.abstained, f.answered, f.hits) == (6, 2, 4, 2)
    assert f.accuracy == 0.5
    # "incorrect": said on rows 2 and 3, true on 3 -> precision 1/2; truly incorrect among the
    # answered: rows 3 and 4 -> recall 1/2
    assert (f.true_incorrect, f.said_incorrect, f.actually_incorrect) == (1, 2, 2)
    assert f.precision_incorrect == 0.5 and f.recall_incorrect == 0.5
    assert f.abstention_rate == pytest.approx(2 / 6)
    # pairs: 3/3, 1/3, 1/3, 1/3, 0/3 (row 6 has one answer: no pair) -> 6/15
    assert f.unanimous == 1
    assert f.pairwise_agreement == pytest.approx(6 / 15)


def test_real_corpus_is_skipped_cleanly_when_absent(tmp_path: Path) -> None:
    items, note = judge_eval.real_items(tmp_path / "nowhere", tmp_path / "labels.json")
    assert items == [] and note.startswith("real corpus skipped: missing")


def test_wrong_patches_are_read_as_a_list_or_its_printed_form() -> None:
    assert judge_eval._names("['a', 'b']") == ["a", "b"]
    assert judge_eval._names(["a"]) == ["a"]
    assert judge_eval._names("[]") == [] and judge_eval._names("not a list") == []


def test_example_truth_gold_exploits_and_empty_patch(tmp_path: Path) -> None:
    rows = [
        {"instance_id": f"lib__lib-{n}", "repo": "x/lib", "base_commit": "abc",
         "patch": f"+gold{n}", "test_patch": "+t", "FAIL_TO_PASS": ["t::a"]}
        for n in (1, 2, 3)
    ]  # fmt: skip
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = {
        "lib__lib-1": {"label": "hackable", "known_exploit": "+wrong"},
        "lib__lib-2": {"label": "broken"},
        "lib__lib-3": {"label": "empty_passes"},
    }
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    items = judge_eval.example_items([tmp_path / "tasks.jsonl"], tmp_path / "labels.json")
    got = {(i.task.instance_id, i.source, i.truth) for i in items}
    assert got == {
        ("lib__lib-1", "gold", "correct"),
        ("lib__lib-1", "known exploit", "incorrect"),
        ("lib__lib-3", "gold", "correct"),
        ("lib__lib-3", "empty patch", "incorrect"),
    }  # a broken task's gold is no known-correct patch
