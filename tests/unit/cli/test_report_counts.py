"""Every file of a report tells the same story: for an audit with hackable, repaired, dropped,
errored and unfinished tasks and rejected input rows, report.md, report.json, report.html,
verdicts.jsonl and `dataset/` agree on every count, each input row ends in exactly one
`dataset/` file, and the headline is the dataset as it came in (before repair)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from hackaudit.cli.report import write_audit
from hackaudit.cli.report_folder import FolderRefused
from hackaudit.cli.report_model import TaskReport
from hackaudit.cli.report_store import latest_per_task
from hackaudit.cli.report_summary import Rejected
from hackaudit.shared.contracts import TaskScored, Verdict
from hackaudit.shared.ingest import load_task_sources
from tests.reportdata import sample_states

ROW = json.loads(
    (
        Path(__file__).resolve().parents[1] / "ingest" / "fixtures" / "good" / "swebench_list.json"
    ).read_text()
)[0]
REPAIRED = "calc__calc-7"
NO_IMAGE = "calc__calc-8"


def _items() -> list[TaskReport]:
    """The sample store's tasks (KEEP; FIX hackable; DROP over-strict; ERROR; one unfinished;
    DROP hackable), a task repaired from FIX to KEEP, and one whose image could not be built."""
    items = latest_per_task(sample_states())
    fix = next(i for i in items if i.scored is not None and i.scored.verdict is Verdict.FIX)
    assert fix.scored is not None
    first = TaskReport(
        REPAIRED,
        fix.scored.model_copy(update={"instance_id": REPAIRED}),
        fix.attack,
    )
    again = TaskScored(
        correlation_id=f"re/{REPAIRED}",
        instance_id=REPAIRED,
        verdict=Verdict.KEEP,
        eqs=1.0,
        hackable=False,
        components={"V": 1.0, "H": 0.0},
        previous_verdict=Verdict.FIX,
        reason="re-audit of the hardened task",
    )
    repaired = TaskReport(REPAIRED, again, None, before=first)
    return [*items, repaired, TaskReport(NO_IMAGE, None, None)]


def _task_file(folder: Path, ids: list[str]) -> Path:
    """A JSONL task file with a row per task, a malformed line and a row without a patch."""
    lines = [json.dumps(ROW | {"instance_id": i}) for i in ids]
    lines.insert(2, "{not json")
    broken = {k: v for k, v in ROW.items() if k != "patch"} | {"instance_id": "calc__calc-99"}
    lines.append(json.dumps(broken))
    path = folder / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def audit(tmp_path: Path) -> tuple[Path, list[TaskReport]]:
    items = _items()
    path = _task_file(tmp_path, [i.instance_id for i in items])
    ingested, sources = load_task_sources([path])
    assert len(ingested.problems) == 2
    out = tmp_path / "report"
    write_audit(
        out,
        items,
        sources,
        missing_stages=[],
        rejected=[Rejected.of(p) for p in ingested.problems],
        unaudited={NO_IMAGE: "no image: the build failed"},
        attacker="the offline strategies only",
    )
    return out, items


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_every_file_agrees_on_every_count(audit: tuple[Path, list[TaskReport]]) -> None:
    out, _ = audit
    summary = json.loads((out / "report.json").read_text())["summary"]
    top = summary["headline"]
    expected_after = {
        "KEEP": 2,
        "FIX": 1,
        "DROP": 2,
        "ERROR": 3,
    }  # ERROR: scored, unfinished, no image
    expected_first = {"KEEP": 1, "FIX": 2, "DROP": 2, "ERROR": 3}
    assert top["after_repair"] == summary["verdicts"] == expected_after
    assert top["as_audited"] == summary["verdicts_as_audited"] == expected_first
    assert (top["rows"], top["tasks"], top["rejected"], top["errors"]) == (10, 8, 2, 3)
    # hackable as audited: the FIX, the hackable DROP and the repaired task (before repair)
    assert (top["hackable"]["tasks"], top["hackable"]["of"]) == (3, 5)
    assert (top["hackable_after_repair"]["tasks"], top["hackable_after_repair"]["of"]) == (2, 5)
    assert (top["repaired"], top["still_fix"], top["partial"]) == (1, 1, True)

    verdicts = _lines(out / "verdicts.jsonl")
    assert Counter(v["verdict"] for v in verdicts) == expected_after
    assert Counter(v["verdict_as_audited"] for v in verdicts) == expected_first
    assert all(v["verdict"] is not None for v in verdicts)
    assert {str(v["instance_id"]): v.get("reason") for v in verdicts if v["verdict"] == "ERROR"}[
        NO_IMAGE
    ] == "no image: the build failed"

    folder = out / "dataset"
    split = {
        name: len(_lines(folder / f"{name}.jsonl")) for name in ("keep", "fix", "drop", "error")
    }
    assert split == {k.lower(): n for k, n in expected_after.items()}
    rejected = _lines(folder / "rejected.jsonl")
    assert [(r["file"].endswith("tasks.jsonl"), r["line"]) for r in rejected] == [
        (True, 3),
        (True, 10),
    ]
    assert rejected[1]["instance_id"] == "calc__calc-99" and rejected[1]["field"] == "patch"
    # every input row in exactly one dataset file
    assert sum(split.values()) + len(rejected) == top["rows"] == 10
    written = json.loads((out / "report.json").read_text())["dataset"]["counts"]
    assert written == {**split, "rejected": 2}

    markdown = (out / "report.md").read_text()
    assert markdown.startswith("# hackaudit report\n\n**Hackable as audited: 60% (3 of 5 tasks")
    assert "verdicts as audited: 1 KEEP, 2 FIX, 2 DROP, 3 ERROR." in markdown
    assert "After repair: 1 FIX → KEEP, 1 still FIX, 0 FIX → DROP" in markdown
    table = re.findall(r"^\| (calc__\S+) \| (\w+)[^|]* \| (\w+) \|", markdown, re.M)
    assert Counter(v for _, v, _ in table) == expected_after
    assert Counter(v for _, _, v in table) == expected_first
    assert "## Rejected input rows" in markdown and "tasks.jsonl:3" in markdown

    page = (out / "report.html").read_text()
    cards = dict(re.findall(r'data-verdict="(\w+)">.*?<div class="big">(\d+)</div>', page))
    assert cards == {**{k: str(n) for k, n in expected_after.items()}, "rejected": "2"}
    lead = re.search(r'<p class="lead"><b>Hackable as audited:</b> (.*?)</p>', page)
    assert lead and lead.group(1).startswith("60% (3 of 5 tasks assessed")
    body = page.split('<table class="verdict-table">', 1)[1].split("</tbody>", 1)[0]
    row = r'<span class="verdict"[^>]*>(\w+)</span>.*?<td class="as-audited">(\w+)<'
    rows = re.findall(row, body, re.S)
    assert Counter(v for v, _ in rows) == expected_after
    assert Counter(v for _, v in rows) == expected_first
    assert 'id="rejected"' in page and "tasks.jsonl:3" in page


def test_a_pool_exploit_is_listed_with_its_evidence(tmp_path: Path) -> None:
    # calc-2's FIX comes from the attack; its exploits are listed in md and json with the diff
    out = tmp_path / "report"
    write_audit(out, _items(), None, missing_stages=[])
    rows = {r["instance_id"]: r for r in json.loads((out / "report.json").read_text())["tasks"]}
    fix = rows["calc__calc-2"]
    assert fix["candidates"]["harness"] == 1 and fix["candidates"]["exploit"] == 1
    assert len(fix["exploits"]) == 1 and (out / fix["exploits"][0]["diff"]).is_file()
    assert "## Confirmed exploits" in (out / "report.md").read_text()


def test_no_judge_figures_without_a_judge(audit: tuple[Path, list[TaskReport]]) -> None:
    out, _ = audit
    data = json.loads((out / "report.json").read_text())
    assert "repair_judge" not in data["summary"]
    assert all("judge" not in row for row in data["tasks"])
    assert data["summary"]["headline"]["run"]["judge"] == "none (F1 left out)"


def test_out_is_replaced_whole_and_never_over_something_else(
    audit: tuple[Path, list[TaskReport]], tmp_path: Path
) -> None:
    out, items = audit
    (out / "dataset" / "stale.jsonl").write_text("{}\n")
    write_audit(out, items[:2], None, missing_stages=[])
    assert not (out / "dataset").exists()  # no source rows this time: no dataset, nothing stale
    assert len(_lines(out / "verdicts.jsonl")) == 2
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_text("meow")
    with pytest.raises(FolderRefused, match="photos"):
        write_audit(other, items, None, missing_stages=[])
    assert (other / "cat.jpg").read_text() == "meow"


def test_without_a_repair_the_headline_says_so_and_shows_no_figure_after_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "report"
    write_audit(out, latest_per_task(sample_states()), None, missing_stages=[])
    markdown = (out / "report.md").read_text()
    assert "No repair ran in this audit" in markdown and "After repair" not in markdown
    page = (out / "report.html").read_text()
    assert 'id="hackable-after-repair"' not in page and 'id="repair-moves"' not in page
    assert (
        json.loads((out / "report.json").read_text())["summary"]["headline"]["repair_ran"] is False
    )
