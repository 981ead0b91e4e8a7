"""Loading resolved lists from the three layouts, and rejecting bad files by name and field."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hackaudit.analysis.errors import InputFileError
from hackaudit.analysis.inputs import load_resolved, parse_date

if TYPE_CHECKING:
    from tests.unit.analysis.conftest import TinyInputs


def _resolved_map(path: Path) -> dict[str, frozenset[str]]:
    return {s.submission_id: s.resolved for s in load_resolved(path).submissions}


@pytest.mark.parametrize(
    "layout", ["matrix_csv", "submissions_json", "mapping_json", "experiments"]
)
def test_every_layout_yields_the_same_resolved_sets(tiny: TinyInputs, layout: str) -> None:
    assert _resolved_map(getattr(tiny, layout)) == tiny.expected_resolved


@pytest.mark.parametrize(
    ("layout", "declares_tasks"),
    [
        ("matrix_csv", True),
        ("submissions_json", True),
        ("mapping_json", False),
        ("experiments", False),
    ],
)
def test_layouts_that_list_their_tasks_say_so(
    tiny: TinyInputs, layout: str, declares_tasks: bool
) -> None:
    task_ids = load_resolved(getattr(tiny, layout)).task_ids
    assert task_ids == (frozenset(tiny.tasks) if declares_tasks else None)


def test_submission_dates_come_from_the_record_or_folder_name(tiny: TinyInputs) -> None:
    for layout in ("matrix_csv", "submissions_json", "experiments"):
        first = load_resolved(getattr(tiny, layout)).submissions[0]
        assert first.date == date(2024, 1, 1), layout


def test_records_without_ids_or_with_a_count_mismatch_are_excluded_with_reasons(
    tiny: TinyInputs,
) -> None:
    loaded = load_resolved(tiny.submissions_json)
    reasons = {e.submission_id: e.reason for e in loaded.excluded}
    assert reasons == {
        "20250101_unknown": "no resolved instance ids in the source",
        "20250102_bad": "resolved ids disagree with the leaderboard count",
    }
    assert len(loaded.submissions) == len(tiny.expected_resolved)


def test_experiments_folder_without_results_is_reported(tiny: TinyInputs) -> None:
    loaded = load_resolved(tiny.experiments)
    assert [(e.submission_id, e.reason) for e in loaded.excluded] == [
        ("20250909_no_results", "no results/results.json")
    ]


def test_excluded_on_request(tiny: TinyInputs) -> None:
    loaded = load_resolved(tiny.matrix_csv, exclude=["20240101_rag_claude"])
    assert "20240101_rag_claude" not in {s.submission_id for s in loaded.submissions}
    assert loaded.excluded[-1].reason == "excluded on request"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-10-22", date(2024, 10, 22)),
        ("20241022", date(2024, 10, 22)),
        ("20241022_agent_x", date(2024, 10, 22)),
        ("20241399_agent", None),
        ("agent_20241022", None),
        ("", None),
    ],
)
def test_parse_date(text: str, expected: date | None) -> None:
    assert parse_date(text) == expected


BAD_FILES = [
    # (file name, content, expected field, expected problem)
    ("m.csv", "folder,a,b\nx,1,2\n", "b", "'2' is not 0 or 1"),
    ("m.csv", "folder,a,b\nx,1\n", None, "line 2 has 2 cells"),
    ("m.csv", "folder\n", None, "header row and at least one submission"),
    ("s.json", "{not json", None, "not valid JSON"),
    ("s.json", '{"submissions": {"a": 1}}', "submissions", "expected a list"),
    (
        "s.json",
        '{"submissions": [{"folder": "x", "resolved_ids": "a"}]}',
        "submissions[0].resolved_ids",
        "list of task id strings",
    ),
    ("s.json", '{"submissions": [{"resolved_ids": []}]}', "submissions[0]", "needs a folder"),
    ("s.json", '{"x": [1, 2]}', "x", "list of task id strings"),
    ("s.json", "3", None, "expected a JSON object"),
    ("s.txt", "hello", None, "expected a .csv matrix"),
]


@pytest.mark.parametrize(("name", "content", "field", "problem"), BAD_FILES)
def test_bad_resolved_files_are_rejected_naming_file_and_field(
    tmp_path: Path, name: str, content: str, field: str | None, problem: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        load_resolved(path)
    assert caught.value.path == path
    assert caught.value.field == field
    assert problem in str(caught.value)
    assert str(path) in str(caught.value)


def test_missing_path_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        load_resolved(tmp_path / "absent.json")


def test_results_json_without_resolved_list_is_named(tmp_path: Path) -> None:
    results = tmp_path / "evaluation" / "verified" / "sub" / "results" / "results.json"
    results.parent.mkdir(parents=True)
    results.write_text(json.dumps({"resolved_ids": []}), encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        load_resolved(tmp_path)
    assert (caught.value.path, caught.value.field) == (results, "resolved")


def test_empty_experiments_folder_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "evaluation" / "verified").mkdir(parents=True)
    with pytest.raises(InputFileError, match=r"no <submission>/results/results\.json"):
        load_resolved(tmp_path)
