"""The report as one self-contained HTML page a curator opens with no network: the dataset at a
glance (hackable share with its 95 % interval, verdict counts, EQS histogram, V against H), the
verdict table, and per task each score component with what it was computed from and the evidence
behind the verdict (exploit and over-strict diffs in collapsible sections).

Everything taken from tasks, patches, logs or models is escaped; the page loads nothing (inline
CSS and SVG, no script)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from html import escape

from hackaudit.cli.report_figures import (
    VERDICT_COLOURS,
    Point,
    histogram_svg,
    scatter_svg,
    wilson_interval,
)
from hackaudit.cli.report_model import (
    TaskReport,
    caveats,
    coverage_text,
    evidence_path,
    not_verified,
    pool_cost_text,
    rejected_correct,
    repair_coverage,
    unverified_details,
)
from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    RepairCompleted,
    TaskScored,
)

VERDICTS = ("KEEP", "FIX", "DROP", "ERROR")
DIFF_LINES_SHOWN = 400

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;
background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{margin:0 0 4px}h2{margin:28px 0 10px}h3{margin:0 0 8px;font-size:17px}
.meta{color:#555}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:12px 16px;min-width:150px}
.card .big{font-size:26px;font-weight:600}
.figures{display:flex;flex-wrap:wrap;gap:16px}
figure{background:#fff;border:1px solid #dde1e6;border-radius:8px;margin:0;padding:8px}
figcaption{color:#555;font-size:12px;padding:4px}
svg text{font-size:11px;fill:#333}svg .tick{fill:#666;font-size:10px}
svg .axis{stroke:#888;stroke-width:1}svg .bar{fill:#3f6fb5}
table{border-collapse:collapse;background:#fff;width:100%}
th,td{border:1px solid #dde1e6;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-weight:600;
font-size:12px}
.none{background:#9e9e9e}
article{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:14px 18px;margin:14px 0}
details{margin:6px 0}details>summary{cursor:pointer;font-weight:600}
details details{margin-left:16px}details details>summary{font-weight:500}
pre.diff{background:#fbfbfc;border:1px solid #e3e6ea;padding:8px;overflow-x:auto;font-size:12px}
pre.diff .add{color:#1b5e20;background:#e8f5e9}pre.diff .del{color:#b71c1c;background:#ffebee}
pre.diff .hunk{color:#6a1b9a}
.evidence{white-space:pre-wrap;background:#fffbe6;border-left:3px solid #f0c000;padding:4px 8px}
.left-out{color:#777;font-style:italic;white-space:nowrap}
table.components td:first-child{width:290px}table.components td:nth-child(2){width:80px}
.not-verified{color:#8a4b00;font-weight:600}
.unverified{background:#fff4e5;border-left:3px solid #e08a00;padding:4px 10px;margin:8px 0}
"""


def render_html(tasks: list[TaskReport], *, missing_stages: list[str], problems: list[str]) -> str:
    """The whole page for these tasks (in the order given)."""
    body = [
        "<h1>hackaudit report</h1>",
        f'<p class="meta">{len(tasks)} task(s).'
        + (
            " Stages not built, so not part of these verdicts: "
            f"{escape(', '.join(missing_stages))}."
            if missing_stages
            else ""
        )
        + "</p>",
        _dataset(tasks),
        _verdict_table(tasks),
        '<h2 id="tasks">Tasks</h2>',
        *(_task(i, item) for i, item in enumerate(tasks)),
    ]
    if problems:
        body += ["<h2>Input problems</h2><ul>", *(f"<li>{escape(p)}</li>" for p in problems)]
        body.append("</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>hackaudit report</title>"
        f"<style>{CSS}</style></head><body><main>\n" + "\n".join(body) + "\n</main></body></html>\n"
    )


# --- the dataset ---------------------------------------------------------------------------


def _badge(verdict: str | None) -> str:
    if verdict is None:
        return '<span class="verdict none">no verdict</span>'
    colour = VERDICT_COLOURS.get(verdict, "#9e9e9e")
    return f'<span class="verdict" style="background:{colour}">{escape(verdict)}</span>'


def _verdict_of(item: TaskReport) -> str | None:
    return item.scored.verdict.value if item.scored is not None else None


def _dataset(tasks: list[TaskReport]) -> str:
    flags = [t.scored.hackable for t in tasks if t.scored and t.scored.hackable is not None]
    hackable, judged = sum(flags), len(flags)
    interval = wilson_interval(hackable, judged)
    share = (
        f'<div class="big">{hackable / judged:.0%}</div>{hackable} of {judged} tasks'
        f"<br>95 % Wilson interval {interval[0]:.0%}–{interval[1]:.0%}"
        if interval is not None
        else '<div class="big">–</div>no task with a hackable flag yet'
    )
    counts = Counter(_verdict_of(t) for t in tasks)
    cards = [f'<div class="card" id="hackable-share"><b>Hackable share</b>{share}</div>']
    unverified = sum(1 for t in tasks if caveats(t.scored))
    for verdict in VERDICTS:
        note = (
            f'<span class="not-verified">{unverified} not verified</span>'
            if verdict == "KEEP" and unverified
            else ""
        )
        cards.append(
            f'<div class="card verdict-count" data-verdict="{verdict}">{_badge(verdict)}'
            f'<div class="big">{counts.get(verdict, 0)}</div>{note}</div>'
        )
    if counts.get(None):
        cards.append(
            f'<div class="card verdict-count" data-verdict="none">{_badge(None)}'
            f'<div class="big">{counts[None]}</div>audit not finished</div>'
        )
    eqs_values = [t.scored.eqs for t in tasks if t.scored and t.scored.eqs is not None]
    points = [
        Point(t.instance_id, t.scored.components["H"], t.scored.components["V"], _verdict_of(t))
        for t in tasks
        if t.scored and "H" in t.scored.components and "V" in t.scored.components
    ]
    return (
        '<h2 id="dataset">Dataset</h2><div class="cards">'
        + "".join(cards)
        + '</div><div class="figures">'
        f'<figure id="eqs-histogram">{histogram_svg(eqs_values)}<figcaption>EQS of '
        f"{len(eqs_values)} scored task(s), bins of 0.1</figcaption></figure>"
        f'<figure id="v-against-h">{scatter_svg(points)}<figcaption>V against H for '
        f"{len(points)} task(s) with both; colour: verdict</figcaption></figure></div>"
    )


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _verdict_table(tasks: list[TaskReport]) -> str:
    head = "".join(
        f"<th>{c}</th>"
        for c in ("task", "verdict", "EQS", "V", "H", "F1", "D", "hackable", "over-strict")
    )
    rows = []
    for i, item in enumerate(tasks):
        s = item.scored
        parts = s.components if s else {}
        strict = s is not None and s.discrimination is not None and s.discrimination.over_strict
        hackable = "–" if s is None or s.hackable is None else ("yes" if s.hackable else "no")
        cells = [
            f'<td><a href="#task-{i}">{escape(item.instance_id)}</a></td>',
            f"<td>{_badge(_verdict_of(item))}{_not_verified_mark(s)}</td>",
            f'<td class="num">{_number(s.eqs if s else None)}</td>',
            *(f'<td class="num">{_number(parts.get(k))}</td>' for k in ("V", "H", "F1", "D")),
            f"<td>{hackable}</td>",
            f"<td>{'yes' if strict else ''}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<h2 id="verdicts">Verdicts</h2><table class="verdict-table"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


# --- one task ------------------------------------------------------------------------------


def _task(index: int, item: TaskReport) -> str:
    s, attack = item.scored, item.attack
    parts = [
        f'<article id="task-{index}"><h3>{escape(item.instance_id)} {_badge(_verdict_of(item))}'
    ]
    if s is not None and s.eqs is not None:
        parts.append(f" EQS {s.eqs:.3f}")
    if not_verified(s):  # a KEEP with caveats: what it leaves unverified, in its heading
        parts.append(f'<span class="not-verified">{escape(not_verified(s))}</span>')
    parts.append("</h3>")
    if s is None:
        parts.append("<p>No verdict: the audit did not finish.</p>")
    else:
        parts.append(_unverified(s))
        parts.append(f'<p class="reason">{escape(s.reason)}</p>')
        parts.append(_components(s, attack))
        if s.policy:
            parts.append(f'<p class="policy"><b>Policy:</b> {escape(s.policy)}</p>')
    parts.append(_repair(item))
    if attack is not None:
        parts.append(_evidence(attack, s))
        parts.append(_coverage(attack))
    elif s is not None and s.discrimination is not None and s.discrimination.rejected_correct:
        ids = ", ".join(s.discrimination.rejected_correct)
        parts.append(f"<p><b>Over-strict:</b> rejects correct variant(s) {escape(ids)}</p>")
    parts.append("</article>")
    return "".join(parts)


def _not_verified_mark(s: TaskScored | None) -> str:
    """Beside a KEEP with caveats in the verdict table, so that it is never read bare."""
    found = caveats(s)
    if not found:
        return ""
    title = escape("not verified: " + ", ".join(found), quote=True)
    return f' <span class="not-verified" title="{title}">not verified</span>'


def _unverified(s: TaskScored) -> str:
    """What the verdict leaves unverified, each gap with its evidence (nothing when none)."""
    unverified = s.unverified
    if unverified is None or not unverified.caveats():
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in unverified_details(unverified))
    return (
        f'<div class="unverified"><p><b>Not verified:</b> '
        f"{escape(', '.join(unverified.caveats()))}</p><ul>{items}</ul></div>"
    )


def _repair(item: TaskReport) -> str:
    """What the repairer did for the task, and the verdict it had before."""
    done = item.repair
    if done is None:
        return ""
    before = item.before.scored if item.before is not None else None
    head = (
        f'<p class="repair"><b>Repaired:</b> {_badge(before.verdict.value)} before, '
        f"{len(done.blocked)} exploit(s) blocked, {len(done.unblocked)} not; "
        if before is not None
        else f'<p class="repair"><b>Repair:</b> nothing hardened ({escape(done.reason)}); '
    )
    kept = [t for t in done.tests if t.accepted]
    rejected = ", ".join(f"{escape(k)} {v}" for k, v in sorted(done.gate_rejections.items()))
    head += (
        f"{len(kept)} of {len(done.tests)} proposed test(s) kept"
        + (f" (rejected: {rejected})" if rejected else "")
        + f"; {done.iterations} iteration(s), {done.sandbox_seconds:.0f} sandbox-seconds</p>"
    )
    gained = repair_coverage(item)
    if gained:
        head += f'<p class="repair"><b>Coverage:</b> {escape(gained)}</p>'
    if before is not None and done.unblocked:
        head += (
            f'<p class="repair"><b>Not blocked:</b> {escape(", ".join(done.unblocked))}'
            + (f" — {escape(done.reason)}" if done.reason else "")
            + "</p>"
        )
    tests = "".join(
        f"<details><summary>{escape(t.file)}::{escape(t.name)} ({escape(t.augmenter)})</summary>"
        f"<pre>{escape(t.source)}</pre></details>"
        for t in kept
    )
    tests += _judged_tests(done)
    exploits = ""
    if item.before is not None and item.before.attack is not None:
        exploits = _outcomes(
            "Exploits the repair targeted", "exploits",
            [o for o in item.before.attack.outcomes
             if o.verdict is CandidateVerdict.EXPLOIT and not o.tampering],
        )  # fmt: skip
    return head + tests + exploits


def _judged_tests(done: RepairCompleted) -> str:
    """Every proposed test: what execution said (the gates), and the judge's verdict beside it."""
    if not any(t.judge is not None for t in done.tests) and not done.judge_left_out:
        return ""
    if not any(t.judge is not None for t in done.tests):
        return f'<p class="repair">Judge: {escape(done.judge_left_out)}</p>'
    rows = "".join(
        f"<tr><td>{escape(t.name)}</td>"
        f"<td>{'kept' if t.accepted else escape(t.rejection.value if t.rejection else '')}</td>"
        f"<td>{escape(t.judge.label.value) if t.judge else '–'}"
        f"{' (' + escape(', '.join(s.value for s in t.judge.samples)) + ')' if t.judge else ''}"
        "</td></tr>"
        for t in done.tests
    )
    return (
        '<details class="repair-judge"><summary>Proposed tests: execution and the judge'
        "</summary><table><tr><th>test</th><th>execution (gates)</th>"
        f"<th>judge: blocks the exploit?</th></tr>{rows}</table></details>"
    )


def _components(s: TaskScored, attack: AttackCompleted | None) -> str:
    rows = [
        ("V", "verifier discrimination (Youden's J)", _v_source(s)),
        ("H", "empirical hackability", _h_source(attack)),
        ("F1", "judge–execution agreement", _f1_source(s)),
        ("D", "learnability from pass@1", _d_source(s)),
    ]
    body = []
    for key, name, source in rows:
        value = s.components.get(key)
        shown = _number(value) if value is not None else '<span class="left-out">left out</span>'
        body.append(
            f'<tr data-component="{key}"><td>{key} — {name}</td><td class="num">{shown}</td>'
            f"<td>{escape(source)}</td></tr>"
        )
    return (
        '<table class="components"><thead><tr><th>component</th><th>value</th>'
        "<th>computed from</th></tr></thead><tbody>" + "".join(body) + "</tbody></table>"
    )


def _v_source(s: TaskScored) -> str:
    d = s.discrimination
    if d is None:
        return (
            "no reference pool recorded" if "V" in s.components else "left out: no reference pool"
        )
    return (
        f"TPR {d.tpr:.2f}, TNR {d.tnr:.2f}, balanced accuracy {d.balanced_accuracy:.2f}; "
        f"pool: C+ {d.correct} counted ({d.correct_left_out} left out), "
        f"C− {d.incorrect} counted ({d.incorrect_left_out} left out)"
        + (f"; rejects {len(d.rejected_correct)} correct variant(s)" if d.rejected_correct else "")
        + (
            f"; accepts {len(d.accepted_incorrect)} incorrect variant(s)"
            if d.accepted_incorrect
            else ""
        )
    )


def _h_source(attack: AttackCompleted | None) -> str:
    if attack is None:
        return "no attack recorded"
    counted = [o for o in attack.outcomes if not o.tampering]
    exploits = sum(o.verdict is CandidateVerdict.EXPLOIT for o in counted)
    blocked = sum(o.verdict is CandidateVerdict.BLOCKED for o in counted)
    if not exploits + blocked:
        return "left out: no confirmed-incorrect candidate evaluated"
    return f"{exploits} exploit(s) / {exploits + blocked} confirmed-incorrect candidates evaluated"


def _f1_source(s: TaskScored) -> str:
    j = s.judge
    if j is None:
        return "" if "F1" in s.components else "left out: no judge"
    if j.f1 is None:
        return f"left out: {j.left_out or 'no judge'}"
    asked = j.true_positive + j.false_positive + j.false_negative + j.true_negative
    return (
        f"judge against execution over {asked} candidate(s): TP {j.true_positive}, "
        f"FP {j.false_positive}, FN {j.false_negative}, TN {j.true_negative}"
        + (f"; {j.abstained} abstained" if j.abstained else "")
    )


def _d_source(s: TaskScored) -> str:
    if "D" not in s.components:
        return "left out: no pass@1 data"
    return s.d_source or "pass@1 data (source not recorded)"


def _evidence(attack: AttackCompleted, s: TaskScored | None) -> str:
    def of(verdict: CandidateVerdict, tampering: bool) -> list[CandidateOutcome]:
        return [o for o in attack.outcomes if o.verdict is verdict and o.tampering is tampering]

    sections = [
        _outcomes("Exploits", "exploits", of(CandidateVerdict.EXPLOIT, False), open_=True),
        _over_strict(attack),
        _outcomes("Harness exploits", "exploits", of(CandidateVerdict.EXPLOIT, True)),
        _outcomes("Unconfirmed (accepted, not told apart from gold)", "unconfirmed",
                  of(CandidateVerdict.UNCONFIRMED, False) + of(CandidateVerdict.UNCONFIRMED, True)),
        _reference_pool(attack),
        _judge(s),
        _budget(attack),
    ]  # fmt: skip
    return "".join(sections)


def _judge(s: TaskScored | None) -> str:
    """Every candidate the judge was asked about: its vote beside execution's label, and each
    sample's premises, trace and conclusion."""
    j = s.judge if s is not None else None
    if j is None or not j.verdicts:
        return ""
    items = []
    for v in j.verdicts:
        executed = j.execution.get(v.candidate_id)
        execution = "–" if executed is None else ("correct" if executed else "not correct")
        samples = []
        for n, sample in enumerate(v.details, 1):
            premises = "".join(f"<li>{escape(p)}</li>" for p in sample.premises)
            body = (
                f"<ul>{premises}</ul><p><b>trace</b> {escape(sample.trace)}</p>"
                f"<p><b>conclusion</b> {escape(sample.conclusion)}</p>"
                if sample.outcome.value == "answered"
                else f"<p>{escape(sample.outcome.value)}: {escape(sample.detail)}</p>"
            )
            samples.append(
                f"<details><summary>sample {n}: {escape(sample.label.value)}</summary>{body}"
                "</details>"
            )
        reason = f" ({escape(v.reason)})" if v.reason else ""
        items.append(
            f"<details><summary>{escape(v.candidate_id)} — judge {escape(v.label.value)}{reason}, "
            f"execution {execution}</summary>{''.join(samples)}</details>"
        )
    usage = ""
    if j.usage is not None:
        u = j.usage
        cost = f"${u.cost_usd:.4f}" if u.priced else "unpriced"
        usage = (
            f"<p>{escape(u.backend)} {escape(u.model)}: {u.calls} call(s), {u.cache_hits} from "
            f"cache, {u.input_tokens} input and {u.output_tokens} output tokens, {cost}</p>"
        )
    return (
        f'<details class="judge"><summary>Judge ({len(j.verdicts)} candidate(s) asked)</summary>'
        + usage
        + "".join(items)
        + "</details>"
    )


def _outcomes(
    title: str, folder: str, outcomes: list[CandidateOutcome], *, open_: bool = False
) -> str:
    if not outcomes:
        return ""
    items = []
    for o in outcomes:
        notes = f'<div class="evidence">{escape(o.evidence)}</div>' if o.evidence else ""
        if o.advice:
            notes += f"<p><b>How to close it:</b> {escape(o.advice)}</p>"
        label = o.candidate.provenance.strategy
        items.append(_candidate(o.candidate, label, folder, notes, open_=open_))
    attr = " open" if open_ else ""
    css = title.split(" ")[0].lower()
    return (
        f'<details class="{css}"{attr}><summary>{escape(title)} ({len(outcomes)})</summary>'
        + "".join(items)
        + "</details>"
    )


def _over_strict(attack: AttackCompleted) -> str:
    rejected = rejected_correct(attack)
    if not rejected:
        return ""
    items = [
        _candidate(
            o.candidate,
            o.kind or o.candidate.provenance.strategy,
            "over_strict",
            f'<div class="evidence">{escape(o.evidence)}</div>' if o.evidence else "",
            open_=True,
        )
        for o in rejected
    ]
    return (
        '<details class="over-strict" open><summary>Over-strict: correct variants the tests '
        f"reject ({len(rejected)})</summary>" + "".join(items) + "</details>"
    )


def _candidate(
    candidate: Candidate, label: str, folder: str, notes: str, *, open_: bool = False
) -> str:
    path = evidence_path(folder, candidate)
    return (
        f"<details{' open' if open_ else ''}><summary>{escape(label)} — "
        f"<code>{escape(candidate.candidate_id)}</code>"
        f"</summary>{notes}{_diff(candidate)}"
        f'<p><a href="{escape(path, quote=True)}">{escape(path)}</a></p></details>'
    )


def _diff(candidate: Candidate) -> str:
    if candidate.diff:
        lines = candidate.diff.splitlines()
    else:
        lines = [f"+++ {path}: {'deleted' if body is None else f'{len(body)} characters'}"
                 for path, body in sorted(candidate.files.items())]  # fmt: skip
    if not lines:
        return '<p class="left-out">no change at all</p>'
    shown = [_diff_line(line) for line in lines[:DIFF_LINES_SHOWN]]
    if len(lines) > DIFF_LINES_SHOWN:
        shown.append(f"… {len(lines) - DIFF_LINES_SHOWN} more lines in the diff file")
    return '<pre class="diff">' + "\n".join(shown) + "</pre>"


def _diff_line(line: str) -> str:
    text = escape(line)
    if line.startswith(("+++", "---")):
        return f"<b>{text}</b>"
    if line.startswith("@@"):
        return f'<span class="hunk">{text}</span>'
    if line.startswith("+"):
        return f'<span class="add">{text}</span>'
    if line.startswith("-"):
        return f'<span class="del">{text}</span>'
    return text


def _reference_pool(attack: AttackCompleted) -> str:
    pool = attack.reference
    if pool is None or not pool.outcomes:
        return ""
    rows = "".join(
        f"<tr><td>{escape(o.role.value)}</td><td>{escape(o.status.value)}</td>"
        f"<td>{escape(o.kind)}</td><td><code>{escape(o.candidate.candidate_id)}</code></td>"
        f'<td><div class="evidence">{escape(o.evidence)}</div></td></tr>'
        for o in pool.outcomes
    )
    return (
        f'<details class="reference-pool"><summary>Reference pool behind V '
        f"({len(pool.outcomes)} variants; {pool.sample_size} mutants asked for, seed "
        f"{pool.seed}; "
        f"{escape(pool_cost_text(pool.sandbox_seconds, pool.budget_seconds, pool.attack_seconds))})"
        "</summary>"
        "<table><thead><tr><th>role</th><th>status</th><th>kind</th><th>candidate</th>"
        f"<th>evidence</th></tr></thead><tbody>{rows}</tbody></table></details>"
    )


def _budget(attack: AttackCompleted) -> str:
    facts: list[str] = []
    if attack.budget:
        facts.append(f"budget {attack.budget}")
    if attack.spent is not None:
        facts.append(
            f"spent {attack.spent.candidates} candidates / "
            f"{attack.spent.sandbox_seconds:.0f} sandbox-seconds"
        )
    facts += _first_exploit(attack)
    if attack.budget_note:
        facts.append(attack.budget_note)
    if not facts:
        return ""
    return '<p class="budget"><b>Attack:</b> ' + escape("; ".join(facts)) + "</p>"


def _coverage(attack: AttackCompleted) -> str:
    """The graded tests' coverage of gold's changed lines, with the tests of each line."""
    coverage = attack.gold_coverage
    if coverage is None:
        return ""
    head = f'<p class="coverage"><b>Coverage of gold:</b> {escape(coverage_text(coverage))}</p>'
    rows = "".join(
        f"<tr><td>{escape(h.path)}:{line}</td><td>{_tests_cell(h.executed.get(line, ()))}</td></tr>"
        for h in coverage.hunks
        for line in h.lines
    )
    if not rows:
        return head
    return (
        f"{head}<details><summary>Changed lines and the graded tests that execute them"
        "</summary><table><thead><tr><th>line</th><th>tests</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></details>"
    )


def _tests_cell(tests: tuple[str, ...]) -> str:
    if not tests:
        return "never executed"
    return escape(", ".join(t or "(outside any test)" for t in tests))


def _first_exploit(attack: AttackCompleted) -> Iterable[str]:
    first = attack.to_first_exploit
    if first is not None:
        yield (
            f"first exploit after {first.candidates} candidates / "
            f"{first.sandbox_seconds:.0f} sandbox-seconds"
        )
