"""The inputs a SWE-bench harness user already has: gzipped JSON / JSONL task files, a folder
that `datasets.save_to_disk` wrote, folders that also hold JSON that is not tasks, and a choice
of instance ids."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]

from hackaudit.shared.ingest import load_task_sources, load_tasks

GOOD = Path(__file__).resolve().parent / "fixtures" / "good"


def swebench_rows() -> list[dict[str, object]]:
    """Plain SWE-bench rows (test lists as the dataset's JSON strings), no environment."""
    return list(json.loads((GOOD / "swebench_list.json").read_text()))


def save_to_disk(folder: Path, rows: list[dict[str, object]], shards: int = 2) -> Path:
    """A folder laid out as `datasets.Dataset.save_to_disk` lays it out: Arrow IPC stream shards
    named in `state.json`, beside `dataset_info.json`."""
    folder.mkdir(parents=True)
    table = pa.Table.from_pylist(rows)
    names = []
    per_shard = -(-len(rows) // shards)
    for index in range(shards):
        name = f"data-{index:05d}-of-{shards:05d}.arrow"
        part = table.slice(index * per_shard, per_shard)
        with pa.OSFile(str(folder / name), "wb") as sink:
            with pa.ipc.new_stream(sink, part.schema) as writer:
                writer.write_table(part)
        names.append(name)
    (folder / "dataset_info.json").write_text(json.dumps({"citation": "", "features": {}}))
    state = {
        "_data_files": [{"filename": n} for n in names],
        "_fingerprint": "0123456789abcdef",
        "_format_type": None,
        "_split": "test",
    }
    (folder / "state.json").write_text(json.dumps(state))
    return folder


def test_gzipped_json_and_jsonl_task_files_are_read_like_their_plain_forms(tmp_path: Path) -> None:
    rows = swebench_rows()
    listed = tmp_path / "tasks.json.gz"
    with gzip.open(listed, "wt", encoding="utf-8") as handle:
        json.dump(rows[:1], handle)
    lines = tmp_path / "tasks.jsonl.gz"
    with gzip.open(lines, "wt", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in rows[1:]))
        handle.write("{not json\n")

    report, sources = load_task_sources([listed, lines])

    plain = load_tasks([GOOD / "swebench_list.json"])
    assert report.tasks == plain.tasks
    assert sources[str(rows[0]["instance_id"])].format == "json.gz"
    assert sources[str(rows[1]["instance_id"])].format == "jsonl.gz"
    [bad] = report.problems
    assert bad.source == f"{lines}:line {len(rows)}"
    assert (bad.file, bad.position) == (str(lines), f"line {len(rows)}")
    assert "not valid JSON" in bad.message


def test_a_save_to_disk_folder_is_read_as_one_input_named_or_found_in_a_folder(
    tmp_path: Path,
) -> None:
    rows = swebench_rows()
    saved = save_to_disk(tmp_path / "corpus" / "test", rows)
    (tmp_path / "corpus" / "dataset_dict.json").write_text(json.dumps({"splits": ["test"]}))

    named, sources = load_task_sources([saved])
    searched = load_tasks([tmp_path / "corpus"])

    assert named.problems == [] and searched.problems == []
    assert [t.instance_id for t in named.tasks] == [r["instance_id"] for r in rows]
    assert named.tasks == searched.tasks == load_tasks([GOOD / "swebench_list.json"]).tasks
    last = sources[str(rows[-1]["instance_id"])]
    assert (last.path, last.number, last.format) == (saved, len(rows), "arrow")


def test_a_broken_arrow_shard_is_one_problem_naming_the_folder(tmp_path: Path) -> None:
    saved = save_to_disk(tmp_path / "saved", swebench_rows())
    (saved / "data-00001-of-00002.arrow").write_bytes(b"not arrow at all")
    report = load_tasks([saved])
    assert report.tasks == []
    [problem] = report.problems
    assert problem.source == str(saved)
    assert "cannot read the saved dataset" in problem.message


def test_a_searched_folder_passes_over_json_that_holds_no_task_rows(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "tasks.json").write_text(json.dumps(swebench_rows()))
    labels = {"calc__calc-1": {"hackable": True}, "calc__calc-2": {"hackable": False}}
    (folder / "labels.json").write_text(json.dumps(labels))
    (folder / "meta").mkdir()
    (folder / "meta" / "summary.json.gz").write_bytes(gzip.compress(b'{"runs": 3}'))

    searched = load_tasks([folder])

    assert searched.problems == []
    assert len(searched.tasks) == len(swebench_rows())
    named = load_tasks([folder / "labels.json"])  # named: read, and its problems said
    assert named.tasks == [] and len(named.problems) > 0
    assert all(p.source == str(folder / "labels.json") for p in named.problems)
    broken = folder / "broken.json"  # a task row with a fault is still a task file's problem
    broken.write_text(json.dumps({"instance_id": "calc__calc-9", "repo": "x/y"}))
    assert {p.instance_id for p in load_tasks([folder]).problems} == {"calc__calc-9"}


def test_instance_ids_choose_the_rows_read_and_ids_no_file_holds_are_named(
    tmp_path: Path,
) -> None:
    rows = swebench_rows()
    path = tmp_path / "tasks.jsonl"
    broken = {"instance_id": "calc__calc-9", "repo": "x/y"}  # not asked for: never reported
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, broken]))
    wanted = str(rows[1]["instance_id"])

    report = load_tasks([path], instance_ids=[wanted, "nope__nope-1"])

    assert [t.instance_id for t in report.tasks] == [wanted]
    assert report.problems == []
    assert report.missing_ids == ["nope__nope-1"]
    assert report.rows_read == {str(path): 1}
    everything = load_tasks([path])
    assert everything.missing_ids == [] and everything.rows_read == {str(path): len(rows) + 1}
