"""The audit report: a JSON file for machines, a Markdown summary and a self-contained HTML page
for people, and the evidence (every exploit's diff and why it is known to be wrong, every correct
variant the tests reject) in files beside them. `audit` writes it at the end of a run, `report`
from the results store at any time; both through `write_report`, so both give the same files."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from hackaudit.cli import report_folder
from hackaudit.cli.dataset import DatasetSummary, write_dataset
from hackaudit.cli.repair_figures import judge_figures
from hackaudit.cli.report_html import render_html
from hackaudit.cli.report_model import (
    HELPER_ONLY_NOTE,
    TaskReport,
    caveats,
    coverage_text,
    evidence_path,
    not_verified,
    pool_cost_text,
    pool_exploits,
    rejected_correct,
    repair_coverage,
    unverified_details,
)
from hackaudit.cli.report_summary import (
    Headline,
    Rejected,
    error_reason,
    headline,
    judged,
    verdict_as_audited,
)
from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    ProposedTest,
    TaskScored,
    Unverified,
    Verdict,
)
from hackaudit.shared.ingest import TaskSource

# A report's task is defined beside the page's reading of it; callers name it from here too.
__all__ = ["TaskReport", "write_audit", "write_report"]


def write_audit(
    out: Path,
    tasks: list[TaskReport],
    sources: Mapping[str, TaskSource] | None,
    *,
    missing_stages: list[str],
    rejected: Sequence[Rejected] = (),
    unaudited: Mapping[str, str] | None = None,
    attacker: str = "not recorded",
) -> tuple[Headline, DatasetSummary | None]:
    """The whole report folder, replacing `out` (see `report_folder`): the report's files and,
    when the tasks' source rows are known, every input row in `dataset/` by its verdict."""
    with report_folder.replaced(out) as staged:
        top = write_report(
            staged,
            tasks,
            missing_stages=missing_stages,
            rejected=rejected,
            unaudited=unaudited,
            attacker=attacker,
        )
        written = (
            write_dataset(staged, tasks, sources, unaudited=unaudited, rejected=rejected)
            if sources is not None
            else None
        )
    return top, written


def write_report(
    out: Path,
    tasks: list[TaskReport],
    *,
    missing_stages: list[str],
    rejected: Sequence[Rejected] = (),
    unaudited: Mapping[str, str] | None = None,
    attacker: str = "not recorded",
) -> Headline:
    """Writes the report's files into `out` and hands back the headline they open with.
    `rejected`: the input rows that could not be read; `unaudited`: why a task without a verdict
    has none, by task id (without it: the audit did not finish)."""
    out.mkdir(parents=True, exist_ok=True)
    tasks = sorted(tasks, key=lambda item: item.instance_id)
    why = dict(unaudited or {})
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    top = headline(tasks, list(rejected), attacker=attacker, date=stamp)
    rows = []
    for item in tasks:
        row: dict[str, object] = {"instance_id": item.instance_id}
        if item.scored is not None:
            row |= item.scored.model_dump(
                mode="json",
                include={"verdict", "eqs", "components", "reason", "hackable", "discrimination",
                         "policy", "d_source", "repaired_from", "previous_verdict"},
            )  # fmt: skip
            row["harness_exploits"] = len(item.scored.harness_exploits)
            if item.scored.unverified is not None:
                row["unverified"] = _unverified(item.scored.unverified)
            if judged(item.scored):
                row["judge"] = _write_judge(out, item.instance_id, item.scored)
        else:
            row |= {
                "verdict": Verdict.ERROR.value,
                "reason": f"no verdict: {error_reason(item, why)}",
            }
        row["verdict_as_audited"] = verdict_as_audited(item)
        if item.attack is not None:
            row["candidates"] = _candidate_counts(item.attack)
            row["exploits"] = _write_evidence(
                out, item.attack, tampering=False
            ) + _write_pool_exploits(out, item.attack, item.scored)
            row["harness_evidence"] = _write_evidence(out, item.attack, tampering=True)
            row["unconfirmed"] = _write_unconfirmed(out, item.attack)
            row |= _budget(item.attack)
            if item.attack.gold_coverage is not None:
                row["gold_coverage"] = item.attack.gold_coverage.model_dump(mode="json") | {
                    "text": coverage_text(item.attack.gold_coverage)
                }
            if item.attack.reference is not None:
                row["reference"] = _reference_counts(item.attack)
                row["over_strict"] = _write_over_strict(out, item.attack)
        row |= _repair(out, item)
        rows.append(row)
    summary: dict[str, object] = {
        "headline": top.as_json(),
        "tasks": len(tasks),
        "verdicts": top.after_repair,
        "verdicts_as_audited": top.as_audited,
        "rejected": [asdict(r) for r in rejected],
        "errors": {t.instance_id: error_reason(t, why) for t in tasks if t.scored is None},
        "stages_not_built": missing_stages,
    }
    judged_tests = judge_figures([t for item in tasks if item.repair for t in item.repair.tests])
    if judged_tests is not None and judged_tests.abstained < judged_tests.judged:
        # The judge's blocking verdicts on the repairs' proposed tests, against execution (none
        # when every answer was an abstention: no judge with a backend ran).
        summary["repair_judge"] = asdict(judged_tests)
    (out / "report.json").write_text(json.dumps({"summary": summary, "tasks": rows}, indent=2))
    with (out / "verdicts.jsonl").open("w") as fh:
        for r, item in zip(rows, tasks, strict=True):
            line = {
                "instance_id": r["instance_id"],
                "verdict": r["verdict"],
                "verdict_as_audited": r["verdict_as_audited"],
                "hackable": r.get("hackable"),
            }
            if caveats(item.scored):  # a KEEP that leaves something unverified says what
                line["unverified"] = list(caveats(item.scored))
            if item.scored is None:
                line["reason"] = error_reason(item, why)
            fh.write(json.dumps(line) + "\n")
    (out / "report.md").write_text(_markdown(rows, tasks, missing_stages, top, rejected))
    (out / "report.html").write_text(
        render_html(
            tasks,
            missing_stages=missing_stages,
            problems=[r.text() for r in rejected],
            top=top,
        ),
        encoding="utf-8",
    )
    return top


def _unverified(unverified: Unverified) -> dict[str, object]:
    """The account as the scorer sent it, with its caveats and their one line: what the verdict
    leaves unverified (`caveats` empty: nothing)."""
    return unverified.model_dump(mode="json") | {
        "caveats": list(unverified.caveats()),
        "text": unverified.text(),
    }


def _repair(out: Path, item: TaskReport) -> dict[str, object]:
    """For a repaired task: the verdict before repair with the exploits it targeted, and the
    repair's figures (tests proposed and kept, exploits blocked, the gates' rejections)."""
    found: dict[str, object] = {}
    before = item.before
    if before is not None and before.scored is not None:
        first: dict[str, object] = {
            "verdict": before.scored.verdict.value,
            "eqs": before.scored.eqs,
            "exploits": _write_evidence(out, before.attack, tampering=False)
            + _write_pool_exploits(out, before.attack, before.scored)
            if before.attack is not None
            else [],
        }
        if before.scored.unverified is not None:
            first["unverified"] = _unverified(before.scored.unverified)
        if before.attack is not None and before.attack.gold_coverage is not None:
            first["gold_coverage"] = coverage_text(before.attack.gold_coverage)
        found["before_repair"] = first
    done = item.repair
    if done is not None:
        found["repair"] = {
            "hardened": done.hardened_task is not None,
            "blocked": len(done.blocked),
            "unblocked": len(done.unblocked),
            "tests_proposed": len(done.tests),
            "tests_kept": sum(1 for t in done.tests if t.accepted),
            "gate_rejections": done.gate_rejections,
            "iterations": done.iterations,
            "sandbox_seconds": round(done.sandbox_seconds, 1),
            "tokens": done.tokens,
            "reason": done.reason,
            # Gold's changed lines the graded tests execute, before the repair and after it.
            "coverage": repair_coverage(item),
            # Each proposed test: what execution (the gates) said, and the judge beside it.
            "tests": [_proposed(t) for t in done.tests],
        } | ({"judge_left_out": done.judge_left_out} if done.judge_left_out else {})
    return found


def _proposed(test: ProposedTest) -> dict[str, object]:
    row: dict[str, object] = {
        "name": test.name,
        "file": test.file,
        "exploit": test.exploit,
        "augmenter": test.augmenter,
        "origin": test.origin,
        "accepted": test.accepted,
        "rejection": test.rejection.value if test.rejection is not None else None,
        "blocks": list(test.blocks),
    }
    if test.judge is not None:
        row["judge"] = {
            "label": test.judge.label.value,
            "samples": [s.value for s in test.judge.samples],
        }
    return row


def _write_judge(out: Path, instance_id: str, scored: TaskScored) -> dict[str, object]:
    """F1's counts in the row; every sample's rationale in `judge/<task>.json` beside it."""
    j = scored.judge
    assert j is not None
    summary: dict[str, object] = j.model_dump(
        mode="json", exclude={"verdicts", "execution"}, exclude_none=True
    )
    if j.verdicts:
        relative = f"judge/{instance_id}.json"
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        rationale = {"execution": j.execution, "verdicts": [
            v.model_dump(mode="json") for v in j.verdicts
        ]}  # fmt: skip
        (out / relative).write_text(json.dumps(rationale, indent=2))
        summary["rationales"] = relative
    return summary


def _reference_counts(attack: AttackCompleted) -> dict[str, object]:
    """The reference pool V was computed from: members by role and status, its sample, and what
    it cost beside its budget and the attack's own sandbox-seconds (None: not recorded)."""
    assert attack.reference is not None
    counts = Counter(f"{o.role.value}/{o.status.value}" for o in attack.reference.outcomes)
    return {
        "members": dict(sorted(counts.items())),
        "seed": attack.reference.seed,
        "sample_size": attack.reference.sample_size,
        "sandbox_seconds": attack.reference.sandbox_seconds,
        "budget_seconds": attack.reference.budget_seconds,
        "attack_sandbox_seconds": attack.reference.attack_seconds,
    }


def _write_diff(out: Path, folder: str, candidate: Candidate) -> str:
    """The candidate's diff (or files) written under `out/folder/`; its path relative to `out`."""
    relative = evidence_path(folder, candidate)
    (out / relative).parent.mkdir(parents=True, exist_ok=True)
    (out / relative).write_text(candidate.diff or json.dumps(candidate.files, indent=2))
    return relative


def _write_over_strict(out: Path, attack: AttackCompleted) -> list[dict[str, str]]:
    return [
        {
            "candidate": o.candidate.candidate_id,
            "kind": o.kind,
            "diff": _write_diff(out, "over_strict", o.candidate),
            "evidence": o.evidence,
        }
        for o in rejected_correct(attack)
    ]


def _write_evidence(
    out: Path, attack: AttackCompleted, *, tampering: bool
) -> list[dict[str, object]]:
    exploits = [
        o
        for o in attack.outcomes
        if o.verdict is CandidateVerdict.EXPLOIT and o.tampering is tampering
    ]
    return _write_outcomes(out / "exploits", out, exploits)


def _candidate_counts(attack: AttackCompleted) -> dict[str, int]:
    """The attack's candidates by verdict; an accepted one that tampers with the tests or the
    runner counts as `harness`, not `exploit` (it is not counted in H or the task's exploits)."""
    return dict(
        Counter(
            "harness" if o.tampering and o.verdict is CandidateVerdict.EXPLOIT else o.verdict.value
            for o in attack.outcomes
        )
    )


def _write_pool_exploits(
    out: Path, attack: AttackCompleted, scored: TaskScored | None
) -> list[dict[str, object]]:
    """The reference pool's exploits of the verdict, listed with their evidence."""
    return [
        {
            "candidate": o.candidate.candidate_id,
            "strategy": f"reference pool: {o.kind}" if o.kind else "reference pool",
            "diff": _write_diff(out, "exploits", o.candidate),
            "evidence": o.evidence,
            "advice": "",
        }
        for o in pool_exploits(attack, scored)
    ]


def _write_unconfirmed(out: Path, attack: AttackCompleted) -> list[dict[str, object]]:
    """Accepted candidates that no check told apart from gold: listed with what was checked,
    so a person can probe them by hand (they are never counted as exploits)."""
    accepted = [o for o in attack.outcomes if o.verdict is CandidateVerdict.UNCONFIRMED]
    return _write_outcomes(out / "unconfirmed", out, accepted)


def _write_outcomes(
    folder: Path, out: Path, outcomes: list[CandidateOutcome]
) -> list[dict[str, object]]:
    """Each outcome with its diff written; a probe-confirmed one with its `differences` (the
    calls or replayed expressions, both outcomes) and `helper_only` (`CandidateOutcome`)."""
    return [
        {
            "candidate": o.candidate.candidate_id,
            "strategy": o.candidate.provenance.strategy,
            "diff": _write_diff(out, folder.name, o.candidate),
            "evidence": o.evidence,
            "advice": o.advice,
            **(
                {
                    "differences": [d.model_dump(mode="json") for d in o.differences],
                    "helper_only": o.helper_only,
                }
                if o.differences
                else {}
            ),
        }
        for o in outcomes
    ]


def _budget(attack: AttackCompleted) -> dict[str, object]:
    """What the attack was given and spent, to its first exploit, and why it stopped short."""
    return {
        "budget": attack.budget,
        "spent": attack.spent.model_dump() if attack.spent else None,
        "to_first_exploit": (
            attack.to_first_exploit.model_dump() if attack.to_first_exploit else None
        ),
        "budget_note": attack.budget_note,
        "equivalent_skipped": attack.equivalent_skipped,
        "not_applicable": list(attack.not_applicable),
    }


def _spent_text(spent: object) -> str:
    if not isinstance(spent, dict):
        return "–"
    return f"{spent.get('candidates', 0)} / {float(spent.get('sandbox_seconds', 0.0)):.0f} s"


def _budget_markdown(rows: list[dict[str, object]]) -> list[str]:
    attacked = [r for r in rows if r.get("budget")]
    if not attacked:
        return []
    lines = [
        "",
        "## Attack budget",
        "",
        "Spent: candidates graded / sandbox-seconds their runs took.",
        "",
        "| task | budget | spent | to first exploit | not run | note |",
        "|---|---|---|---|---|---|",
    ]
    for r in attacked:
        first = r.get("to_first_exploit")
        not_applicable = r.get("not_applicable")
        skipped = [f"{r.get('equivalent_skipped', 0)} equal to gold"]
        if isinstance(not_applicable, list) and not_applicable:
            skipped.append(f"{len(not_applicable)} not applicable")
        note = str(r.get("budget_note") or "").replace("|", "/")
        lines.append(
            f"| {r['instance_id']} | {r['budget']} | {_spent_text(r.get('spent'))} | "
            f"{_spent_text(first) if first else '–'} | {', '.join(skipped)} | {note} |"
        )
    return lines


def _unverified_markdown(tasks: list[TaskReport]) -> list[str]:
    """Per task, what its verdict leaves unverified, each gap with its evidence."""
    lines: list[str] = []
    for item in tasks:
        scored = item.scored
        unverified = scored.unverified if scored is not None else None
        if scored is None or unverified is None or not unverified.caveats():
            continue
        lines.append(f"- {item.instance_id} ({scored.verdict.value}): {unverified.text()}")
        lines += [f"  - {detail}" for detail in unverified_details(unverified)]
    if not lines:
        return []
    return ["", "## What the verdicts leave unverified", "", *lines]


def _coverage_markdown(rows: list[dict[str, object]]) -> list[str]:
    """Per task, how much of gold's change the graded tests execute."""
    lines = []
    for r in rows:
        coverage = r.get("gold_coverage")
        if isinstance(coverage, dict):
            lines.append(f"- {r['instance_id']}: {coverage['text']}")
    if not lines:
        return []
    return ["", "## The graded tests' coverage of gold's changes", "", *lines]


def _advice_markdown(rows: list[dict[str, object]]) -> list[str]:
    lines: list[str] = []
    for r in rows:
        exploits = r.get("exploits")
        if not isinstance(exploits, list):
            continue
        advice = sorted({str(e.get("advice")) for e in exploits if e.get("advice")})
        lines += [f"- {r['instance_id']}: {a}" for a in advice]
    if not lines:
        return []
    return ["", "## How to close the task exploits", "", *lines]


def _components_markdown(rows: list[dict[str, object]]) -> list[str]:
    """What V and D were computed from, the policy that ran, and the over-strict tasks."""
    lines: list[str] = []
    policies = {str(r["policy"]) for r in rows if r.get("policy")}
    for r in rows:
        parts = []
        d = r.get("discrimination")
        if isinstance(d, dict):
            parts.append(
                f"V from TPR {d['tpr']:.2f}, TNR {d['tnr']:.2f} over {d['correct']} correct and "
                f"{d['incorrect']} incorrect variants "
                f"({d['correct_left_out'] + d['incorrect_left_out']} left out)"
            )
            if d.get("rejected_correct"):
                parts.append(
                    f"over-strict: rejects {len(d['rejected_correct'])} correct variant(s)"
                )
        pool = r.get("reference")
        if isinstance(pool, dict):
            parts.append(
                pool_cost_text(
                    float(pool["sandbox_seconds"]),
                    pool.get("budget_seconds"),
                    pool.get("attack_sandbox_seconds"),
                )
            )
        if r.get("d_source"):
            parts.append(f"D from {r['d_source']}")
        if r.get("policy") and len(policies) > 1:
            parts.append(f"policy: {r['policy']}")
        if parts:
            lines.append(f"- {r['instance_id']}: " + "; ".join(str(p) for p in parts))
    if len(policies) == 1:
        lines.insert(0, f"Verdict policy: {policies.pop()}.\n")
    if not lines:
        return []
    return ["", "## What the scores were computed from", "", *lines]


def _markdown(
    rows: list[dict[str, object]],
    tasks: list[TaskReport],
    missing: list[str],
    top: Headline,
    rejected: Sequence[Rejected],
) -> str:
    first, *rest = top.lines()
    lines = ["# hackaudit report", "", f"**{first}**", ""]
    lines += [text for line in rest for text in (line, "")]
    if missing:
        lines += [f"Stages not built yet, so not part of these verdicts: {', '.join(missing)}.", ""]
    lines += [
        "| task | verdict | as audited | EQS | hackable | reason |",
        "|---|---|---|---|---|---|",
    ]
    for r, item in zip(rows, tasks, strict=True):
        eqs = r.get("eqs")
        eqs_text = f"{eqs:.3f}" if isinstance(eqs, float) else "–"
        verdict = f"{r['verdict']}{not_verified(item.scored)}".replace("|", "/")
        hackable = r.get("hackable")
        lines.append(
            f"| {r['instance_id']} | {verdict} | {r['verdict_as_audited']} | {eqs_text} | "
            f"{'–' if hackable is None else hackable} | "
            f"{str(r.get('reason', '')).replace('|', '/')} |"
        )
    lines += _exploits_markdown(rows)
    lines += _unverified_markdown(tasks)
    lines += _components_markdown(rows)
    lines += _budget_markdown(rows)
    lines += _coverage_markdown(rows)
    lines += _advice_markdown(rows)
    harness = [r for r in rows if r.get("harness_exploits")]
    if harness:
        lines += [
            "",
            "## The harness",
            "",
            f"{len(harness)} of {len(rows)} tasks accepted a candidate that tampers with the tests "
            "or the runner (for example a `conftest.py` forcing passes, or an exit at import). "
            "That is a hole of the grading harness, not of any one task's tests: the environment "
            "should discard a patch's changes to test files and test configuration and grade from "
            "the runner's own report. Evidence: `exploits/<task>/`.",
        ]
    errors = [r for r in rows if r["verdict"] == Verdict.ERROR.value]
    if errors:
        lines += ["", "## Tasks that could not be audited (ERROR)", ""]
        lines += [f"- {r['instance_id']}: {r['reason']}" for r in errors]
    if rejected:
        lines += ["", "## Rejected input rows (in `dataset/rejected.jsonl`)", ""]
        lines += [f"- {r.text()}" for r in rejected]
    return "\n".join(lines) + "\n"


def _exploits_markdown(rows: list[dict[str, object]]) -> list[str]:
    """Every exploit that makes a task FIX, the attack's and the reference pool's, with its
    diff's file and the evidence that it is wrong."""
    lines: list[str] = []
    for r in rows:
        exploits = r.get("exploits")
        before = r.get("before_repair")
        if isinstance(before, dict) and before.get("exploits"):
            for e in before["exploits"]:
                lines.append(_exploit_line(str(r["instance_id"]) + " (as audited)", e))
        if isinstance(exploits, list):
            lines += [_exploit_line(str(r["instance_id"]), e) for e in exploits]
    if not lines:
        return []
    return ["", "## Confirmed exploits", "", *lines]


def _exploit_line(task: str, exploit: dict[str, object]) -> str:
    evidence = " ".join(str(exploit.get("evidence", "")).split())
    note = HELPER_ONLY_NOTE if exploit.get("helper_only") else ""
    return (
        f"- {task}: `{exploit['candidate']}` ({exploit['strategy']}), diff "
        f"`{exploit['diff']}` — {evidence}{note}"
    )
