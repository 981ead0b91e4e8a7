"""A KEEP that leaves something unverified is never shown bare: every report form (json, md,
html, the progress line) says what was not verified, with its evidence."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hackaudit.cli.main import app
from hackaudit.cli.progress import AuditTracker, PlainProgress
from hackaudit.cli.report import TaskReport, write_report
from hackaudit.cli.report_model import caveats, not_verified, verdict_text
from hackaudit.cli.report_store import latest_per_task
from hackaudit.shared import subjects
from hackaudit.shared.contracts import (
    AttackCompleted,
    BudgetUse,
    HunkCoverage,
    TaskScored,
    UnreachedCandidate,
    Unverified,
    Verdict,
)
from tests.reportdata import sample_states

ID = "lib__lib-1"
GAPS = Unverified(
    unconfirmed=("c-1", "c-2"),
    unreached=(UnreachedCandidate(candidate_id="c-1", lines=("pkg/printer.py:40",)),),
    reach_not_measured=1,
    candidates_run=4,
    budget="15 candidates (3 rounds of 5)",
    budget_use=BudgetUse.SHORT,
    budget_note="only 4 distinct behaviour-changing candidates exist for a 2-line gold patch",
    coverage_measured=True,
    gold_hunks=3,
    never_executed=(HunkCoverage(path="pkg/printer.py", start=40, lines=(40, 41)),),
)
CAVEATS = (
    "2 accepted candidates unconfirmed, 1 accepted candidate unreached by any test or probe, "
    "only 4 candidates run of a budget of 15 candidates (3 rounds of 5), "
    "1 of 3 gold hunks never executed by the graded tests"
)
NOTHING = Unverified(budget="15 candidates", budget_use=BudgetUse.SPENT, coverage_measured=True)


def keep(
    unverified: Unverified | None, verdict: Verdict = Verdict.KEEP, correlation_id: str = "c"
) -> TaskScored:
    return TaskScored(
        correlation_id=correlation_id,
        instance_id=ID,
        verdict=verdict,
        eqs=1.0,
        hackable=False,
        unverified=unverified,
    )


def report(tmp_path: Path, scored: TaskScored) -> tuple[dict[str, object], str, str]:
    attack = AttackCompleted(correlation_id="c", instance_id=ID)
    write_report(tmp_path, [TaskReport(ID, scored, attack)], missing_stages=[])
    row = json.loads((tmp_path / "report.json").read_text())["tasks"][0]
    return row, (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()


def test_a_keep_with_caveats_is_never_a_bare_keep() -> None:
    assert caveats(keep(GAPS)) == GAPS.caveats()
    assert verdict_text(keep(GAPS)) == f"KEEP (EQS 1.000) — not verified: {CAVEATS}"
    assert verdict_text(keep(NOTHING)) == "KEEP (EQS 1.000)"
    assert verdict_text(keep(None)) == "KEEP (EQS 1.000)"  # a scorer that predates the account
    # the verdict line is about a KEEP's trust; other verdicts carry the account in the report
    assert not_verified(keep(GAPS, Verdict.FIX)) == ""


def test_report_json_carries_the_structured_account(tmp_path: Path) -> None:
    row, _, _ = report(tmp_path, keep(GAPS))
    found = row["unverified"]
    assert isinstance(found, dict)
    assert found["text"] == f"not verified: {CAVEATS}"
    assert found["caveats"] == list(GAPS.caveats())
    assert found["unconfirmed"] == ["c-1", "c-2"]
    assert found["unreached"] == [{"candidate_id": "c-1", "lines": ["pkg/printer.py:40"]}]
    assert found["budget_use"] == "short" and found["candidates_run"] == 4
    assert found["never_executed"][0]["path"] == "pkg/printer.py"
    (line,) = (tmp_path / "verdicts.jsonl").read_text().splitlines()
    assert json.loads(line) == {
        "instance_id": ID,
        "verdict": "KEEP",
        "verdict_as_audited": "KEEP",
        "hackable": False,
        "unverified": list(GAPS.caveats()),
    }
    assert Unverified.model_validate(
        {k: v for k, v in found.items() if k not in ("caveats", "text")}
    ) == GAPS  # fmt: skip


def test_report_md_shows_it_in_the_verdict_table_and_per_task(tmp_path: Path) -> None:
    _, markdown, _ = report(tmp_path, keep(GAPS))
    assert f"| {ID} | KEEP — not verified: {CAVEATS} | KEEP | 1.000 |" in markdown
    section = markdown.split("## What the verdicts leave unverified", 1)[1]
    assert f"- {ID} (KEEP): not verified: {CAVEATS}" in section
    assert "  - accepted, not shown to differ from gold: c-1, c-2" in section
    assert (
        "  - unreached (no test or probe executes it on gold): c-1 — pkg/printer.py:40" in section
    )
    assert "  - reach not measured for 1 unconfirmed candidate(s)" in section
    assert "  - 4 candidate(s) run of a budget of 15 candidates (3 rounds of 5): only 4" in section
    assert (
        "  - gold hunk never executed by the graded tests: pkg/printer.py:40 (lines 40, 41)"
        in section
    )


def test_report_html_shows_it_in_the_table_and_the_task(tmp_path: Path) -> None:
    _, _, html = report(tmp_path, keep(GAPS))
    assert '<span class="not-verified" title="not verified: 2 accepted' in html
    assert '<div class="big">1</div><span class="not-verified">1 not verified</span>' in html
    assert f' EQS 1.000<span class="not-verified"> — not verified: {CAVEATS}</span></h3>' in html
    assert f"<p><b>Not verified:</b> {CAVEATS}</p>" in html
    assert (
        "<li>unreached (no test or probe executes it on gold): c-1 — pkg/printer.py:40</li>" in html
    )
    assert (
        "<li>gold hunk never executed by the graded tests: pkg/printer.py:40 (lines 40, 41)</li>"
        in html
    )


def test_a_keep_with_nothing_unverified_is_shown_as_before(tmp_path: Path) -> None:
    row, markdown, html = report(tmp_path, keep(NOTHING))
    assert isinstance(row["unverified"], dict) and row["unverified"]["caveats"] == []
    assert json.loads((tmp_path / "verdicts.jsonl").read_text()) == {
        "instance_id": ID,
        "verdict": "KEEP",
        "verdict_as_audited": "KEEP",
        "hackable": False,
    }
    assert f"| {ID} | KEEP | KEEP | 1.000 |" in markdown
    assert "leave unverified" not in markdown
    assert 'not-verified"' not in html and "Not verified" not in html


def test_an_unmeasured_coverage_is_said_in_the_details(tmp_path: Path) -> None:
    unmeasured = NOTHING.model_copy(
        update={"coverage_measured": False, "coverage_note": "coverage run\n timeout"}
    )
    _, markdown, _ = report(tmp_path, keep(unmeasured))
    assert "not verified: the graded tests' coverage of gold not measured" in markdown
    assert "  - graded tests' coverage of gold not measured: coverage run timeout" in markdown


def test_the_progress_line_of_a_scored_keep_says_what_was_not_verified() -> None:
    tracker = AuditTracker({"a/1": ID})
    scored = keep(GAPS, correlation_id="a/1")
    tracker.observe(subjects.TASK_SCORED, scored.model_dump_json().encode())
    lines = PlainProgress().lines(tracker, 5)
    assert f"[0:05] scored {ID}: KEEP (EQS 1.000) — not verified: {CAVEATS}" in lines


def test_eval_verdicts_counts_and_names_a_keep_that_leaves_something_unverified(
    tmp_path: Path,
) -> None:
    report(tmp_path, keep(GAPS))
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({ID: {"label": "hackable", "how": "edge_case_untested"}}))

    done = CliRunner().invoke(app, ["eval", "verdicts", str(tmp_path), "--labels", str(labels)])

    assert done.exit_code == 1  # a hackable task kept: not what its label needs
    output = " ".join(done.output.split())  # however the console wraps it
    assert "┃ KEEP not verified ┃" in output
    assert "│ hackable │ 1 │ 0 │ 0 │ 0 │ 0 │ 1 │ 0 │ FIX │ 0/1 │" in output
    assert f"{ID} (hackable): KEEP — not verified: {CAVEATS}, needed FIX" in output


def test_a_verdict_stored_without_an_account_gets_it_from_its_attack() -> None:
    states = {s.task.instance_id: s for s in sample_states()}
    kept = states["calc__calc-1"]  # a KEEP whose attack measured no coverage of gold
    assert kept.scored is not None and kept.scored.unverified is None and kept.attack is not None

    items = {i.instance_id: i for i in latest_per_task(list(states.values()))}

    found = items["calc__calc-1"].scored
    assert found is not None and found.unverified is not None
    assert found.unverified.caveats() == ("the graded tests' coverage of gold not measured",)
    assert found.verdict is Verdict.KEEP and found.eqs == kept.scored.eqs
    assert items["calc__calc-4"].scored is not None  # an ERROR at sanity: no attack, no account
    assert items["calc__calc-4"].scored.unverified is None
