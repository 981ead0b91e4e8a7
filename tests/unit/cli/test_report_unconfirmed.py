"""The report lists accepted candidates no check told apart from gold, with their diffs."""

from __future__ import annotations

import json
from pathlib import Path

from hackaudit.cli.report import TaskReport, write_report
from hackaudit.shared.contracts import (
    AttackCompleted,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    Provenance,
)


def test_unconfirmed_candidates_are_listed_with_what_was_checked(tmp_path: Path) -> None:
    def outcome(diff: str, verdict: CandidateVerdict, evidence: str) -> CandidateOutcome:
        candidate = Candidate(
            instance_id="lib__lib-1", diff=diff, provenance=Provenance(strategy="mutation")
        )
        return CandidateOutcome(candidate=candidate, verdict=verdict, evidence=evidence)

    attack = AttackCompleted(
        correlation_id="c",
        instance_id="lib__lib-1",
        outcomes=(
            outcome("--- a/x\n+++ b/x\n", CandidateVerdict.UNCONFIRMED, "probes: no difference"),
            outcome("--- a/y\n+++ b/y\n", CandidateVerdict.BLOCKED, "FAIL_TO_PASS failing"),
        ),
    )
    write_report(tmp_path, [TaskReport("lib__lib-1", None, attack)], missing_stages=[])
    row = json.loads((tmp_path / "report.json").read_text())["tasks"][0]
    assert row["exploits"] == []
    (listed,) = row["unconfirmed"]
    assert listed["evidence"] == "probes: no difference"
    assert (tmp_path / listed["diff"]).read_text() == "--- a/x\n+++ b/x\n"
    assert listed["diff"].startswith("unconfirmed/lib__lib-1/")
