"""The report shows, per task, how much of gold's change the graded tests execute."""

from __future__ import annotations

import json
from pathlib import Path

from hackaudit.cli.report import TaskReport, write_report
from hackaudit.shared.contracts import AttackCompleted, GoldCoverage, HunkCoverage

MEASURED = GoldCoverage(
    measured=True,
    hunks=(
        HunkCoverage(
            path="pkg/ops.py", start=2, lines=(2, 3), executed={2: ("tests.test_ops.test_add",)}
        ),
        HunkCoverage(path="pkg/ops.py", start=12, lines=(12,)),
    ),
    changed_lines=3,
    executed_lines=1,
)
MEASURED_LINE = (
    "graded tests execute 1 of 3 lines gold changes (statements);"
    " hunks never executed: pkg/ops.py:12"
)


def _report(tmp_path: Path, coverage: GoldCoverage) -> tuple[dict[str, object], str, str]:
    attack = AttackCompleted(correlation_id="c", instance_id="lib__lib-1", gold_coverage=coverage)
    write_report(tmp_path, [TaskReport("lib__lib-1", None, attack)], missing_stages=[])
    row = json.loads((tmp_path / "report.json").read_text())["tasks"][0]
    return row, (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()


def test_a_measured_map_is_in_every_report_file(tmp_path: Path) -> None:
    row, markdown, html = _report(tmp_path, MEASURED)
    found = row["gold_coverage"]
    assert isinstance(found, dict)
    assert found["text"] == MEASURED_LINE
    assert found["hunks"][0]["executed"] == {"2": ["tests.test_ops.test_add"]}
    assert f"- lib__lib-1: {MEASURED_LINE}" in markdown
    assert MEASURED_LINE in html
    assert "<td>pkg/ops.py:2</td><td>tests.test_ops.test_add</td>" in html
    assert "<td>pkg/ops.py:12</td><td>never executed</td>" in html


def test_an_unmeasured_map_says_why(tmp_path: Path) -> None:
    unmeasured = GoldCoverage(measured=False, reason="coverage run timeout: no coverage result")
    row, markdown, html = _report(tmp_path, unmeasured)
    line = "coverage not measured: coverage run timeout: no coverage result"
    assert isinstance(row["gold_coverage"], dict)
    assert row["gold_coverage"]["text"] == line
    assert f"- lib__lib-1: {line}" in markdown
    assert line in html


def test_every_hunk_executed_says_none(tmp_path: Path) -> None:
    full = MEASURED.model_copy(
        update={"hunks": MEASURED.hunks[:1], "changed_lines": 2, "executed_lines": 2}
    )
    full = full.model_copy(
        update={"hunks": (full.hunks[0].model_copy(update={"executed": {2: ("",), 3: ("",)}}),)}
    )
    _, markdown, html = _report(tmp_path, full)
    line = "graded tests execute 2 of 2 lines gold changes (statements); hunks never executed: none"
    assert line in markdown
    assert "(outside any test)" in html


def test_a_reason_quoting_a_log_stays_on_one_line(tmp_path: Path) -> None:
    reason = "coverage.py reported nothing: >\n  File x\n" + "SyntaxError: invalid syntax " * 20
    _, markdown, _ = _report(tmp_path, GoldCoverage(measured=False, reason=reason))
    (line,) = [ln for ln in markdown.splitlines() if "coverage not measured" in ln]
    assert line.startswith("- lib__lib-1: coverage not measured: coverage.py reported nothing: >")
    assert line.endswith("…") and len(line) < 360
