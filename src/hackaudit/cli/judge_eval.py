"""`hackaudit eval judge`: how far the judge can be trusted, against patches whose truth is known.

Ground truth:
- the example corpus (`examples/labels.json`): each task's gold patch is correct (unless the task
  is labelled broken), its `known_exploit` diff is incorrect, and for a task labelled
  `empty_passes` the empty patch is incorrect;
- the real corpus, when its rows have been rebuilt (`<real>/tasks.jsonl`) and its ground truth
  run (`<real>/ground-truth/predictions.jsonl`): gold is correct, and each leaderboard patch in
  `wrong_patches` (accepted by the official tests, rejected by UTBoost's added test while gold
  passes both) is incorrect. Missing files skip this part and say so.

Figures: accuracy over the labelled patches the judge did not abstain on, precision and recall
on "incorrect" (the class a curator must not miss; the judge's "partial" counts as incorrect),
the abstention rate, and agreement between samples (the share of patches whose answered samples
were unanimous, and the mean share of agreeing sample pairs).
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

from hackaudit.judge.service_layer.judging import Judge
from hackaudit.shared.contracts import (
    Candidate,
    JudgeLabel,
    JudgeRequested,
    JudgeSampleOutcome,
    JudgeUsage,
    JudgeVerdict,
    Provenance,
    Task,
)
from hackaudit.shared.ingest import load_task_sources

Truth = Literal["correct", "incorrect"]


@dataclass(frozen=True)
class Labelled:
    task: Task
    candidate: Candidate
    truth: Truth
    source: str  # "gold", "known exploit", "empty patch", "leaderboard <name>"


@dataclass(frozen=True)
class Judged:
    item: Labelled
    verdict: JudgeVerdict | None

    @property
    def said(self) -> Truth | None:
        """The judge's label on the truth's scale (partial = incorrect); None: abstained."""
        if self.verdict is None or self.verdict.label is JudgeLabel.ABSTAIN:
            return None
        return "correct" if self.verdict.label is JudgeLabel.CORRECT else "incorrect"


@dataclass(frozen=True)
class TrustFigures:
    total: int
    abstained: int
    hits: int
    true_incorrect: int  # incorrect patches the judge called incorrect
    said_incorrect: int
    actually_incorrect: int  # among the patches it did not abstain on
    unanimous: int
    pairwise_agreement: float | None

    @property
    def answered(self) -> int:
        return self.total - self.abstained

    @property
    def accuracy(self) -> float | None:
        return self.hits / self.answered if self.answered else None

    @property
    def precision_incorrect(self) -> float | None:
        return self.true_incorrect / self.said_incorrect if self.said_incorrect else None

    @property
    def recall_incorrect(self) -> float | None:
        return self.true_incorrect / self.actually_incorrect if self.actually_incorrect else None

    @property
    def abstention_rate(self) -> float | None:
        return self.abstained / self.total if self.total else None


def example_items(task_paths: list[Path], labels_path: Path) -> list[Labelled]:
    """The example corpus's patches of known truth."""
    labels: dict[str, dict[str, Any]] = json.loads(labels_path.read_text())
    report, _ = load_task_sources(task_paths)
    items = []
    for task in report.tasks:
        entry = labels.get(task.instance_id)
        if entry is None:
            continue
        if entry.get("label") != "broken":
            items.append(Labelled(task, Candidate.gold(task), "correct", "gold"))
        exploit = entry.get("known_exploit")
        if isinstance(exploit, str) and exploit.strip():
            wrong = Candidate(instance_id=task.instance_id, diff=exploit,
                              provenance=Provenance(strategy="known-exploit"))  # fmt: skip
            items.append(Labelled(task, wrong, "incorrect", "known exploit"))
        if entry.get("label") == "empty_passes":
            items.append(Labelled(task, Candidate.empty(task), "incorrect", "empty patch"))
    return items


def real_items(corpus: Path, labels_path: Path) -> tuple[list[Labelled], str]:
    """The real corpus's gold and UTBoost-rejected leaderboard patches, or why there are none."""
    tasks_file = corpus / "tasks.jsonl"
    predictions_file = corpus / "ground-truth" / "predictions.jsonl"
    missing = [str(p) for p in (tasks_file, predictions_file, labels_path) if not p.exists()]
    if missing:
        return [], f"real corpus skipped: missing {', '.join(missing)}"
    raw = json.loads(labels_path.read_text())
    labels: dict[str, dict[str, Any]] = raw.get("labels", {})
    report, _ = load_task_sources([tasks_file])
    tasks = {t.instance_id: t for t in report.tasks}
    patches: dict[tuple[str, str], str] = {}
    for line in predictions_file.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            key = (row["instance_id"], row["model_name_or_path"])
            patches[key] = row.get("model_patch", "")
    items: list[Labelled] = []
    absent = 0
    for instance_id, task in tasks.items():
        items.append(Labelled(task, Candidate.gold(task), "correct", "gold"))
        for name in _names(labels.get(instance_id, {}).get("wrong_patches")):
            patch = patches.get((instance_id, name))
            if not patch:
                absent += 1
                continue
            origin = Provenance(strategy="leaderboard", detail=name)
            wrong = Candidate(instance_id=instance_id, diff=patch, provenance=origin)
            items.append(Labelled(task, wrong, "incorrect", f"leaderboard {name}"))
    note = f"real corpus: {len(tasks)} tasks from {corpus}"
    if absent:
        note += f"; {absent} wrong patch(es) named in the labels have no prediction row"
    return items, note


def _names(value: object) -> list[str]:
    """`wrong_patches` as a list, whether stored as a list or as its printed form."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return []
    return [str(v) for v in value] if isinstance(value, list | tuple) else []


async def judge_items(
    judge: Judge, items: list[Labelled], samples: int
) -> tuple[list[Judged], list[JudgeUsage], list[str]]:
    """Ask the judge about every item, one request per task; returns the answers, the usage of
    each request and the reasons requests were left out."""
    by_task: dict[str, list[Labelled]] = {}
    for item in items:
        by_task.setdefault(item.task.instance_id, []).append(item)

    async def one(group: list[Labelled]) -> tuple[list[Judged], JudgeUsage | None, str]:
        request = JudgeRequested(
            correlation_id=f"eval/{group[0].task.instance_id}",
            task=group[0].task,
            candidates=tuple(i.candidate for i in group),
            samples=samples,
            requested_by="eval",
        )
        done = await judge.handle(request)
        verdicts = {v.candidate_id: v for v in done.verdicts}
        judged = [Judged(i, verdicts.get(i.candidate.candidate_id)) for i in group]
        return judged, done.usage, done.left_out

    results = await asyncio.gather(*(one(g) for g in by_task.values()))
    rows = [row for judged, _, _ in results for row in judged]
    usages = [u for _, u, _ in results if u is not None]
    left_out = sorted({why for _, _, why in results if why})
    return rows, usages, left_out


def figures(rows: list[Judged]) -> TrustFigures:
    abstained = sum(r.said is None for r in rows)
    answered = [r for r in rows if r.said is not None]
    pairs_agree = pairs = unanimous = 0
    for r in rows:
        labels = [s.label for s in (r.verdict.details if r.verdict else ())
                  if s.outcome is JudgeSampleOutcome.ANSWERED]  # fmt: skip
        if len(labels) >= 2:
            unanimous += len(set(labels)) == 1
            for a, b in combinations(labels, 2):
                pairs += 1
                pairs_agree += a == b
    return TrustFigures(
        total=len(rows),
        abstained=abstained,
        hits=sum(r.said == r.item.truth for r in answered),
        true_incorrect=sum(r.said == "incorrect" == r.item.truth for r in answered),
        said_incorrect=sum(r.said == "incorrect" for r in answered),
        actually_incorrect=sum(r.item.truth == "incorrect" for r in answered),
        unanimous=unanimous,
        pairwise_agreement=pairs_agree / pairs if pairs else None,
    )


def total_usage(usages: list[JudgeUsage]) -> JudgeUsage:
    if not usages:
        return JudgeUsage()
    return JudgeUsage(
        backend=usages[0].backend,
        model=usages[0].model,
        calls=sum(u.calls for u in usages),
        cache_hits=sum(u.cache_hits for u in usages),
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        cost_usd=sum(u.cost_usd for u in usages),
        priced=all(u.priced for u in usages),
    )


def by_source(rows: list[Judged]) -> dict[str, Counter[str]]:
    """Per source kind ("gold", "known exploit", ...): how often each judge label came out."""
    table: dict[str, Counter[str]] = {}
    for r in rows:
        kind = (
            r.item.source.split(" ")[0]
            if r.item.source.startswith("leaderboard")
            else r.item.source
        )
        table.setdefault(kind, Counter())[r.said or "abstain"] += 1
    return table
