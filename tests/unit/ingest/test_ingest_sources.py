"""load_task_sources: each valid task's row as read, its file, position and flavour, so the task
can be written back in its own format."""

from __future__ import annotations

import json
from pathlib import Path

from hackaudit.shared.ingest import load_task_sources, load_tasks


def test_every_valid_task_keeps_its_row_as_read_and_where_it_came_from(fixtures: Path) -> None:
    report, sources = load_task_sources([fixtures / "good"])

    assert report == load_tasks([fixtures / "good"])
    assert list(sources) == [t.instance_id for t in report.tasks]
    second = sources["calc__calc-4"]
    assert second.path == fixtures / "good" / "nested" / "swebench_lists.jsonl"
    assert (second.number, second.format, second.flavour) == (2, "jsonl", "swebench")
    assert second.row == json.loads(second.path.read_text().splitlines()[1])
    r2egym = sources["calc__calc-2222222222222222222222222222222222222222"]
    assert (r2egym.flavour, r2egym.format) == ("r2egym", "jsonl")
    assert "parsed_commit_content" in r2egym.row  # the row before conversion
    mapped = sources["calc__calc-6"]
    assert mapped.row["environment"]["source"] == "../repos/calc"  # not made absolute
    listed = sources["calc__calc-2"]
    assert (listed.path.name, listed.number, listed.format) == ("swebench_list.json", 2, "json")


def test_a_duplicate_keeps_the_source_of_the_first(tmp_path: Path, fixtures: Path) -> None:
    rows = json.loads((fixtures / "good" / "swebench_list.json").read_text())
    copy = tmp_path / "again.jsonl"
    copy.write_text(json.dumps(rows[0]) + "\n")

    report, sources = load_task_sources([fixtures / "good" / "swebench_list.json", copy])

    assert len(report.problems) == 1
    assert sources[rows[0]["instance_id"]].path.name == "swebench_list.json"
