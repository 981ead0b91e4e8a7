"""Loading per-task flags and strata from JSON mappings, records and CSV."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hackaudit.analysis.errors import InputFileError
from hackaudit.analysis.labels import load_flags, load_strata, parse_flag

if TYPE_CHECKING:
    from tests.unit.analysis.conftest import TinyInputs


@pytest.mark.parametrize("shape", ["flags_json", "flags_csv", "records_json"])
def test_flags_from_every_shape(tiny: TinyInputs, shape: str) -> None:
    assert load_flags(getattr(tiny, shape)) == {t: t in tiny.flagged for t in tiny.tasks}


@pytest.mark.parametrize("shape", ["strata_csv", "records_json"])
def test_strata_from_every_shape(tiny: TinyInputs, shape: str) -> None:
    assert load_strata(getattr(tiny, shape)) == {t: t.split("-")[0] for t in tiny.tasks}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        ("yes", True),
        (" FALSE ", False),
        ("1", True),
        ("n", False),
    ],
)
def test_flag_values(value: object, expected: bool) -> None:
    assert parse_flag(value, Path("f.json"), "x") is expected


def test_records_with_null_values_leave_the_task_out(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(
        '[{"id": "a", "difficulty": "easy"}, {"id": "b", "difficulty": null}]', encoding="utf-8"
    )
    assert load_strata(path) == {"a": "easy"}


def test_flag_field_can_be_chosen(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"instances": [{"instance_id": "a", "weak": 1}]}', encoding="utf-8")
    assert load_flags(path, field="weak") == {"a": True}


BAD_LABEL_FILES = [
    ("f.json", '{"a": "maybe"}', "a", "is not a boolean flag"),
    ("f.json", '{"a": 2}', "a", "is not a boolean flag"),
    (
        "f.json",
        '[{"instance_id": "a", "other": true}]',
        "utboost_insufficient_tests",
        "none of the columns",
    ),
    ("f.json", '[{"name": "a", "flagged": true}]', "instance_id", "none of the columns"),
    ("f.json", '[{"instance_id": 3, "flagged": true}]', "[0].instance_id", "missing task id"),
    ("f.json", '[{"instance_id": "a", "flagged": "x"}]', "[0].flagged", "not a boolean"),
    ("f.json", "[]", None, "no records"),
    ("f.json", '"text"', None, "expected a JSON object"),
    ("f.csv", "instance_id,flagged\na,perhaps\n", "line 2: flagged", "not a boolean"),
    ("f.csv", "task,flagged\na,1\n", "instance_id", "none of the columns"),
    ("f.csv", "instance_id,flagged\n", None, "no data rows"),
]


@pytest.mark.parametrize(("name", "content", "field", "problem"), BAD_LABEL_FILES)
def test_bad_flag_files_are_rejected_naming_file_and_field(
    tmp_path: Path, name: str, content: str, field: str | None, problem: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        load_flags(path)
    assert (caught.value.path, caught.value.field) == (path, field)
    assert problem in str(caught.value)


def test_bad_stratum_value_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"a": ["list"]}', encoding="utf-8")
    with pytest.raises(InputFileError, match="not a stratum label") as caught:
        load_strata(path)
    assert caught.value.field == "a"


def test_missing_label_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="no such file"):
        load_flags(tmp_path / "absent.json")
