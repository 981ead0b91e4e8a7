"""External pass@1 files: per-task counts and 0/1 matrices become successes/attempts per task;
a bad file is refused with the file, line and column named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hackaudit.shared.contracts import PassAtOne, Task
from hackaudit.shared.ingest.pass_at_1 import (
    PassAtOneFileError,
    PassAtOneTable,
    read_pass_at_1,
    with_pass_at_1,
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _task(instance_id: str, pass_at_1: PassAtOne | None = None) -> Task:
    return Task(
        instance_id=instance_id,
        repo="calc/calc",
        base_commit="a" * 40,
        patch="diff --git a/x.py b/x.py\n",
        test_patch="",
        fail_to_pass=("tests/test_x.py::test_x",),
        pass_at_1=pass_at_1,
    )


COUNTS = {"a__a-1": (3, 10), "a__a-2": (0, 4)}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("counts.csv", "instance_id,successes,attempts\na__a-1,3,10\n\na__a-2,0,4\n"),
        ("counts.tsv", "attempts\tinstance_id\tsuccesses\n10\ta__a-1\t3\n4\ta__a-2\t0\n"),
        (
            "counts.json",
            json.dumps(
                [
                    {"instance_id": "a__a-1", "successes": 3, "attempts": 10},
                    {"instance_id": "a__a-2", "successes": 0, "attempts": 4, "model": "x"},
                ]
            ),
        ),
        (
            "by_id.json",
            json.dumps(
                {
                    "a__a-1": {"successes": 3, "attempts": 10},
                    "a__a-2": {"successes": 0, "attempts": 4},
                }
            ),
        ),
        (
            "counts.jsonl",
            '{"instance_id": "a__a-1", "successes": 3, "attempts": 10}\n\n'
            '{"instance_id": "a__a-2", "successes": 0, "attempts": 4}\n',
        ),
    ],
)
def test_per_task_counts_are_read_from_csv_tsv_json_and_jsonl(
    tmp_path: Path, name: str, text: str
) -> None:
    table = read_pass_at_1(_write(tmp_path, name, text))

    assert table.counts == COUNTS
    assert table.description == f"per-task counts {name}"


def test_a_matrix_with_tasks_across_sums_each_column_and_skips_blank_cells(
    tmp_path: Path,
) -> None:
    text = (
        "folder,date,a__a-1,a__a-2,a__a-3\n"
        "sub-one,2024-01-01,1,0,\n"
        "sub-two,2024-02-01,1,,\n"
        "sub-three,2024-03-01,0,1,\n"
    )

    table = read_pass_at_1(_write(tmp_path, "m.csv", text))

    assert table.counts == {"a__a-1": (2, 3), "a__a-2": (1, 2), "a__a-3": (0, 0)}
    assert table.description == "resolved matrix m.csv (3 submissions)"


def test_a_matrix_with_tasks_down_sums_each_row(tmp_path: Path) -> None:
    text = "instance_id,repo,sub-one,sub-two\na__a-1,a/a,1,1\na__a-2,a/a,0,\n"

    table = read_pass_at_1(_write(tmp_path, "m.csv", text))

    assert table.counts == {"a__a-1": (2, 2), "a__a-2": (0, 1)}
    assert table.description == "resolved matrix m.csv (2 submissions)"


@pytest.mark.parametrize(
    ("name", "text", "where", "says"),
    [
        ("c.csv", "instance_id,successes\na__a-1,3\n", ":line 1", "missing: attempts"),
        ("c.csv", "instance_id,successes,attempts\na,3,x\n", ":line 2, column 'attempts'",
         "not a whole number"),
        ("c.csv", "instance_id,successes,attempts\na,5,3\n", ":line 2, column 'successes'",
         "exceed"),
        ("c.csv", "instance_id,successes,attempts\na,1,3\na,1,3\n", ":line 3, column 'instance_id'",
         "listed twice"),
        ("m.csv", "folder,t1,t2\ns1,1,0\ns2,0,2\n", ":line 3, column 't2'", "not 0, 1 or blank"),
        ("m.csv", "folder,t1,t2\ns1,1,0\ns2,0,yes\n", ":line 3, column 't2'", "not 0, 1 or blank"),
        ("m.csv", "folder,t1,t2\ns1,1,0\ns2,maybe,1\n", ":line 3, column 't1'",
         "not 0, 1 or blank"),
        ("m.csv", "folder,t1\ns1,1,0\n", ":line 2", "3 cells where the header has 2"),
        ("m.csv", "folder,date\ns1,2024-01-01\n", ":line 1", "no column of 0/1 values"),
        ("m.csv", "", "", "empty"),
        ("c.jsonl", '{"instance_id": "a", "successes": 1}\n', "", "line 1 has no field 'attempts'"),
        ("c.jsonl", '{"instance_id": "a", "successes": 1, "attempts": 2}\n{oops\n', ":line 2",
         "not valid JSON"),
        ("c.json", '{"instance_id": "a"}', "", "the value for 'instance_id' is not an object"),
        ("c.json", '[{"instance_id": "a", "successes": 1, "attempts": -1}]', ", column 'attempts'",
         "record 1: -1 is negative"),
        ("c.parquet", "x", "", "unknown format"),
    ],
)  # fmt: skip
def test_a_bad_file_is_refused_naming_the_file_line_and_column(
    tmp_path: Path, name: str, text: str, where: str, says: str
) -> None:
    path = _write(tmp_path, name, text)

    with pytest.raises(PassAtOneFileError) as raised:
        read_pass_at_1(path)

    message = str(raised.value)
    assert message.startswith(f"{path}{where}: "), message
    assert says in message


def test_the_file_overrides_the_task_file_says_so_and_leaves_unnamed_tasks_alone() -> None:
    own = PassAtOne(successes=1, attempts=2)
    tasks = [_task("a__a-1", own), _task("a__a-9", own), _task("a__a-2")]
    table = PassAtOneTable(COUNTS, "resolved matrix m.csv (10 submissions)")

    updated, matched = with_pass_at_1(tasks, table)

    assert matched == 2
    first, unnamed, second = updated
    assert (first.pass_at_1.successes, first.pass_at_1.attempts) == (3, 10)  # type: ignore[union-attr]
    assert first.pass_at_1.source == (  # type: ignore[union-attr]
        "resolved matrix m.csv (10 submissions); replaces the task file's 1/2"
    )
    assert unnamed.pass_at_1 == own
    assert second.pass_at_1 == PassAtOne(
        successes=0, attempts=4, source="resolved matrix m.csv (10 submissions)"
    )
    assert [t.instance_id for t in updated] == ["a__a-1", "a__a-9", "a__a-2"]


def test_the_real_swebench_verified_matrix_matches_the_resolved_lists_it_was_built_from(
    swebench_verified_data: Path,
) -> None:
    table = read_pass_at_1(swebench_verified_data / "swebench_verified_resolved_matrix.csv")
    resolved = json.loads(
        (swebench_verified_data / "swebench_verified_submissions_resolved.json").read_text()
    )
    with_lists = [s for s in resolved["submissions"] if s.get("resolved_ids") is not None]

    assert table.description == (
        f"resolved matrix swebench_verified_resolved_matrix.csv ({len(with_lists)} submissions)"
    )
    assert len(table.counts) == 500
    for instance_id, (successes, attempts) in table.counts.items():
        assert attempts == len(with_lists)
        assert successes == sum(instance_id in s["resolved_ids"] for s in with_lists), instance_id
    assert any(s == 0 for s, _ in table.counts.values())
    assert any(
        s == len(with_lists) - 1 or s > len(with_lists) // 2 for s, _ in table.counts.values()
    )
