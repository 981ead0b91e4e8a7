"""load_tasks over SWE-bench JSON, JSONL, parquet and folders: valid rows kept, bad ones named."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from hackaudit.shared.ingest import load_tasks

BAD_FILES = sorted((Path(__file__).parent / "fixtures" / "bad").iterdir())


def _row(instance_id: str, **fields: object) -> dict[str, object]:
    row: dict[str, object] = {
        "instance_id": instance_id,
        "repo": "calc/calc",
        "base_commit": "a" * 40,
        "patch": "diff --git a/x.py b/x.py\n",
        "test_patch": "",
        "FAIL_TO_PASS": ["tests/test_x.py::test_x"],
    }
    row.update(fields)
    return row


@pytest.mark.parametrize("path", BAD_FILES, ids=[p.name for p in BAD_FILES])
def test_a_bad_task_is_reported_with_its_id_and_the_offending_field(path: Path) -> None:
    expected_field = path.name.split("--")[0]

    report = load_tasks([path])

    assert report.tasks == []
    assert len(report.problems) == 1
    problem = report.problems[0]
    assert problem.field is not None
    assert problem.field == expected_field or problem.field.startswith(expected_field + "[")
    assert problem.instance_id
    assert problem.source.startswith(str(path))


def test_the_good_folder_loads_recursively_in_sorted_order(fixtures: Path) -> None:
    report = load_tasks([fixtures / "good"])

    assert report.problems == []
    assert [t.instance_id for t in report.tasks] == [
        "calc__calc-6",
        "calc__calc-3",
        "calc__calc-4",
        "calc__calc-2222222222222222222222222222222222222222",
        "calc__calc-5",
        "calc__calc-1",
        "calc__calc-2",
    ]


def test_test_lists_are_read_from_json_strings_and_from_lists(fixtures: Path) -> None:
    report = load_tasks([fixtures / "good" / "swebench_list.json", fixtures / "good" / "nested"])
    by_id = {t.instance_id: t for t in report.tasks}

    assert by_id["calc__calc-1"].fail_to_pass == ("tests/test_ops.py::test_add",)
    assert by_id["calc__calc-1"].pass_to_pass == ()
    assert by_id["calc__calc-3"].pass_to_pass == ("tests/test_ops.py::test_sub",)
    assert by_id["calc__calc-1"].version == "1.0"


def test_a_relative_environment_source_becomes_absolute_against_the_task_file(
    fixtures: Path,
) -> None:
    report = load_tasks([fixtures / "good" / "nested" / "swebench_lists.jsonl"])
    task = next(t for t in report.tasks if t.environment is not None)

    assert task.environment is not None
    assert task.environment.source == str((fixtures / "repos" / "calc").resolve())


def test_bad_rows_do_not_stop_the_good_ones_in_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    rows = [_row("ok-1"), _row("bad-2", FAIL_TO_PASS=[]), "not a row", _row("ok-4")]
    path.write_text(json.dumps(rows))

    report = load_tasks([path])

    assert [t.instance_id for t in report.tasks] == ["ok-1", "ok-4"]
    assert [(p.source, p.instance_id, p.field) for p in report.problems] == [
        (f"{path}:row 2", "bad-2", "FAIL_TO_PASS"),
        (f"{path}:row 3", None, None),
    ]


def test_a_broken_jsonl_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(_row("one")) + "\n\n{broken\n" + json.dumps(_row("two")) + "\n")

    report = load_tasks([path])

    assert [t.instance_id for t in report.tasks] == ["one", "two"]
    assert len(report.problems) == 1
    assert report.problems[0].source == f"{path}:line 3"
    assert "not valid JSON" in report.problems[0].message


def test_unreadable_and_missing_files_are_reported_and_the_rest_go_on(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps([_row("kept")]))
    broken = tmp_path / "broken.json"
    broken.write_text('[{"instance_id": "x",')
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    other = tmp_path / "notes.txt"
    other.write_text("hello")

    report = load_tasks([broken, binary, other, tmp_path / "absent.json", good])

    assert [t.instance_id for t in report.tasks] == ["kept"]
    sources = [p.source for p in report.problems]
    assert sources == [f"{broken}:line 1", str(binary), str(other), str(tmp_path / "absent.json")]


def test_duplicate_instance_ids_are_reported_and_the_first_is_kept(tmp_path: Path) -> None:
    first = tmp_path / "a.jsonl"
    first.write_text(json.dumps(_row("dup", problem_statement="first")) + "\n")
    second = tmp_path / "b.json"
    second.write_text(json.dumps([_row("dup", problem_statement="second"), _row("other")]))

    report = load_tasks([tmp_path])

    assert [(t.instance_id, t.problem_statement) for t in report.tasks] == [
        ("dup", "first"),
        ("other", ""),
    ]
    [problem] = report.problems
    assert (problem.source, problem.instance_id, problem.field) == (
        f"{second}:row 1",
        "dup",
        "instance_id",
    )
    assert f"{first}:line 1" in problem.message


def test_parquet_exports_load_with_string_and_list_test_fields(tmp_path: Path) -> None:
    rows = [
        _row("pq-1", FAIL_TO_PASS='["t::a"]', PASS_TO_PASS='["t::b"]', version="3.0"),
        _row("pq-2", FAIL_TO_PASS='["t::c"]', PASS_TO_PASS="[]", version="3.1"),
        _row("pq-3", FAIL_TO_PASS="[]", PASS_TO_PASS="[]", version="3.1"),
    ]
    path = tmp_path / "data" / "test-00000-of-00001.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), path)
    lists = tmp_path / "lists.parquet"
    created = dt.datetime(2023, 5, 1, 12, 30, tzinfo=dt.UTC)
    pq.write_table(
        pa.Table.from_pylist([_row("pq-4", PASS_TO_PASS=["t::e"], created_at=created)]), lists
    )

    report = load_tasks([tmp_path / "data", lists])

    assert [t.instance_id for t in report.tasks] == ["pq-1", "pq-2", "pq-4"]
    assert report.tasks[0].pass_to_pass == ("t::b",)
    assert report.tasks[2].pass_to_pass == ("t::e",)
    assert report.tasks[2].created_at == "2023-05-01T12:30:00+00:00"
    [problem] = report.problems
    assert (problem.source, problem.field) == (f"{path}:row 3", "FAIL_TO_PASS")


def test_a_corrupt_parquet_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 this is not parquet")

    report = load_tasks([path])

    assert report.tasks == []
    assert [p.source for p in report.problems] == [str(path)]
    assert "cannot read parquet" in report.problems[0].message


def test_a_task_round_trips_through_its_swebench_row(tmp_path: Path, fixtures: Path) -> None:
    original = load_tasks([fixtures / "good" / "single_object.json"]).tasks
    path = tmp_path / "again.jsonl"
    path.write_text("".join(json.dumps(t.swebench_row()) + "\n" for t in original))

    assert load_tasks([path]).tasks == original
