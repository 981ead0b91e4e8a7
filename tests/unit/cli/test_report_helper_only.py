"""A confirmed exploit seen only in private helpers called directly by the probes is marked as
such in the report (JSON, Markdown, HTML): its differences may lie outside every input the
helper's callers give it, so a reader checks them before trusting the verdict."""

from __future__ import annotations

import json
from pathlib import Path

from hackaudit.cli.report import TaskReport, write_report
from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    ProbeDifference,
    Provenance,
)

HELPER = ProbeDifference(
    origin="probe", expression="_format_float(1)", function="_format_float",
    gold="returns_1", candidate="returns_1_0",
)  # fmt: skip
METHOD = HELPER.model_copy(update={"function": "Card._format_value"})
PUBLIC = HELPER.model_copy(update={"function": "Card", "expression": "Card('A', 1.0)"})
DUNDER = HELPER.model_copy(update={"function": "Card.__str__"})
REPLAYED = ProbeDifference(
    origin="replay", expression="str(c)", function="_format_float", test="t.py::test_card"
)


def _exploit(name: str, *differences: ProbeDifference) -> CandidateOutcome:
    candidate = Candidate(
        instance_id="lib__lib-1", diff=f"--- a/{name}\n+++ b/{name}\n",
        provenance=Provenance(strategy="partial_fix"),
    )  # fmt: skip
    return CandidateOutcome(
        candidate=candidate,
        verdict=CandidateVerdict.EXPLOIT,
        evidence=f"differential probes: {name}",
        differences=differences,
    )


def test_only_direct_probe_calls_of_private_helpers_make_an_exploit_helper_only() -> None:
    assert HELPER.private_helper and METHOD.private_helper
    assert not PUBLIC.private_helper and not DUNDER.private_helper
    assert not REPLAYED.private_helper  # what a graded test does, whatever it calls
    assert _exploit("a", HELPER, METHOD).helper_only
    assert not _exploit("b", HELPER, PUBLIC).helper_only  # a caller sees it too
    assert not _exploit("c", HELPER, REPLAYED).helper_only
    assert not _exploit("d").helper_only  # no differences recorded: the wider suite, say


def test_the_report_marks_a_helper_only_exploit_and_keeps_its_differences(tmp_path: Path) -> None:
    attack = AttackCompleted(
        correlation_id="c",
        instance_id="lib__lib-1",
        outcomes=(_exploit("helper", HELPER), _exploit("public", PUBLIC, HELPER)),
    )
    write_report(tmp_path, [TaskReport("lib__lib-1", None, attack)], missing_stages=[])

    helper, public = json.loads((tmp_path / "report.json").read_text())["tasks"][0]["exploits"]
    assert helper["helper_only"] is True and public["helper_only"] is False
    assert helper["differences"] == [HELPER.model_dump(mode="json")]
    assert [d["function"] for d in public["differences"]] == ["Card", "_format_float"]
    note = "only private helpers called directly by the probes differ"
    md = (tmp_path / "report.md").read_text()
    (helper_line,) = [line for line in md.splitlines() if "differential probes: helper" in line]
    (public_line,) = [line for line in md.splitlines() if "differential probes: public" in line]
    assert note in helper_line and note not in public_line
    html = (tmp_path / "report.html").read_text()
    assert html.count(note) == 1
