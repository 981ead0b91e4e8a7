"""The report as one self-contained HTML page a curator opens with no network: the dataset at a
glance (hackable share with its 95 % interval, verdict counts, EQS histogram, V against H), the
verdict table, and per task each score component with what it was computed from and the evidence
behind the verdict (exploit and over-strict diffs in collapsible sections).

The markup lives in `templates/` (Jinja2, shipped in the package and found through it, whatever the
working folder); this module only computes what the page shows. Autoescaping is on, so everything
taken from tasks, patches, logs or models is escaped; the SVG figures, built from escaped parts by
`report_figures`, are the only markup handed over as such. The page loads nothing (inline CSS and
SVG, no script)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from hackaudit.cli.report_figures import VERDICT_COLOURS, Point, histogram_svg, scatter_svg
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
from hackaudit.cli.report_summary import Headline, final_verdict, headline, verdict_as_audited
from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    CandidateVerdict,
    TaskScored,
)

VERDICTS = ("KEEP", "FIX", "DROP", "ERROR")
DIFF_LINES_SHOWN = 400


def render_html(
    tasks: list[TaskReport],
    *,
    missing_stages: list[str],
    problems: list[str],
    top: Headline | None = None,
) -> str:
    """The whole page for these tasks (in the order given), opening with `top`, the headline
    every file of the report shares (made from the tasks alone when not given)."""
    if top is None:
        top = headline(tasks, [], attacker="not recorded", date="not recorded")
    page = _templates().get_template("report.html.j2")
    return page.render(
        tasks=tasks, missing_stages=missing_stages, problems=problems, top=top, **dataset(tasks)
    )


@cache
def _templates() -> Environment:
    """The page's templates, loaded from the installed package, with autoescaping on."""
    templates = Environment(
        loader=PackageLoader("hackaudit.cli", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    templates.filters["number"] = number
    templates.globals |= {"VERDICTS": VERDICTS, "VERDICT_COLOURS": VERDICT_COLOURS}
    templates.globals |= {
        f.__name__: f
        for f in (verdict_of, verdict_as_audited, caveats, not_verified, unverified_details,
                  repair_coverage, coverage_text, pool_cost_text, evidence_path, components,
                  evidence_sections, targeted_section, diff_lines, attack_facts)
    }  # fmt: skip
    return templates


def number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def verdict_of(item: TaskReport) -> str:
    """The task's verdict as every file of the report gives it (ERROR without one)."""
    return final_verdict(item)


def dataset(tasks: list[TaskReport]) -> dict[str, Any]:
    """The dataset at a glance beside the headline: the KEEPs with caveats, and the two
    figures with the tasks each shows."""
    eqs = [t.scored.eqs for t in tasks if t.scored and t.scored.eqs is not None]
    points = [
        Point(t.instance_id, t.scored.components["H"], t.scored.components["V"], verdict_of(t))
        for t in tasks
        if t.scored and "H" in t.scored.components and "V" in t.scored.components
    ]
    return {
        "unverified": sum(1 for t in tasks if caveats(t.scored)),
        "eqs": eqs,
        "points": points,
        # Both figures are built from escaped parts (report_figures): trusted markup.
        "histogram": Markup(histogram_svg(eqs)),  # noqa: S704
        "scatter": Markup(scatter_svg(points)),  # noqa: S704
    }


# --- the score components ------------------------------------------------------------------


def components(s: TaskScored, attack: AttackCompleted | None) -> list[tuple[str, str, str]]:
    """Each component's key, name and what it was computed from (its value is in `s`)."""
    return [
        ("V", "verifier discrimination (Youden's J)", _v_source(s)),
        ("H", "empirical hackability", _h_source(attack)),
        ("F1", "judge–execution agreement", _f1_source(s)),
        ("D", "learnability from pass@1", _d_source(s)),
    ]


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


# --- the evidence --------------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """One candidate as evidence: what made it, why it is evidence, how to close it."""

    label: str
    candidate: Candidate
    evidence: str = ""
    advice: str = ""


@dataclass(frozen=True)
class Section:
    """Candidates of one kind, in a collapsible section; their diffs are written to `folder`."""

    css: str
    title: str
    folder: str
    shown: list[Shown]
    open: bool = False


def _outcomes(attack: AttackCompleted, verdict: CandidateVerdict, tampering: bool) -> list[Shown]:
    return [
        Shown(
            o.candidate.provenance.strategy,
            o.candidate,
            o.evidence + (HELPER_ONLY_NOTE if o.helper_only else ""),
            o.advice,
        )
        for o in attack.outcomes
        if o.verdict is verdict and o.tampering is tampering
    ]


def evidence_sections(attack: AttackCompleted, scored: TaskScored | None) -> list[Section]:
    """The candidate sections of an attack that have any: exploits (the attack's and the
    reference pool's), over-strict evidence (correct variants the tests reject), harness
    exploits, unconfirmed candidates."""
    exploit, unconfirmed = CandidateVerdict.EXPLOIT, CandidateVerdict.UNCONFIRMED
    over_strict = [
        Shown(o.kind or o.candidate.provenance.strategy, o.candidate, o.evidence)
        for o in rejected_correct(attack)
    ]
    pooled = [
        Shown(f"reference pool: {o.kind}" if o.kind else "reference pool", o.candidate, o.evidence)
        for o in pool_exploits(attack, scored)
    ]
    sections = [
        Section("exploits", "Exploits", "exploits",
                _outcomes(attack, exploit, False) + pooled, True),
        Section("over-strict", "Over-strict: correct variants the tests reject", "over_strict",
                over_strict, True),
        Section("harness", "Harness exploits", "exploits", _outcomes(attack, exploit, True)),
        Section("unconfirmed", "Unconfirmed (accepted, not told apart from gold)", "unconfirmed",
                _outcomes(attack, unconfirmed, False) + _outcomes(attack, unconfirmed, True)),
    ]  # fmt: skip
    return [s for s in sections if s.shown]


def targeted_section(item: TaskReport) -> list[Section]:
    """For a repaired task: the exploits of its first audit, which the repair targeted."""
    attack = item.before.attack if item.before is not None else None
    exploits = _outcomes(attack, CandidateVerdict.EXPLOIT, False) if attack is not None else []
    section = Section("exploits", "Exploits the repair targeted", "exploits", exploits)
    return [section] if exploits else []


def diff_lines(candidate: Candidate) -> tuple[list[tuple[str, str]], int]:
    """A diff's first lines, each with its kind ("head", "hunk", "add", "del" or ""), and how
    many more lines its file has."""
    if candidate.diff:
        lines = candidate.diff.splitlines()
    else:
        lines = [f"+++ {path}: {'deleted' if body is None else f'{len(body)} characters'}"
                 for path, body in sorted(candidate.files.items())]  # fmt: skip
    shown = [(_line_kind(line), line) for line in lines[:DIFF_LINES_SHOWN]]
    return shown, max(0, len(lines) - DIFF_LINES_SHOWN)


def _line_kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "head"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "")


def attack_facts(attack: AttackCompleted) -> list[str]:
    """The attack's budget, what it spent, when it found its first exploit, its note."""
    facts: list[str] = []
    if attack.budget:
        facts.append(f"budget {attack.budget}")
    if attack.spent is not None:
        facts.append(
            f"spent {attack.spent.candidates} candidates / "
            f"{attack.spent.sandbox_seconds:.0f} sandbox-seconds"
        )
    first = attack.to_first_exploit
    if first is not None:
        facts.append(
            f"first exploit after {first.candidates} candidates / "
            f"{first.sandbox_seconds:.0f} sandbox-seconds"
        )
    if attack.budget_note:
        facts.append(attack.budget_note)
    return facts
