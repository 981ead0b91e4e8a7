"""The hardened dataset: every input task written back in its own format, split by verdict, with
the reason and the exploits added; the files read back with the project's own ingestion."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from hackaudit.cli.dataset import EXPLOITS_FIELD, REASON_FIELD, UNVERIFIED_FIELD, write_dataset
from hackaudit.cli.report import TaskReport, write_report
from hackaudit.shared.contracts import (
    AttackCompleted,
    BudgetUse,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    Provenance,
    TaskScored,
    Unverified,
    Verdict,
)
from hackaudit.shared.ingest import load_task_sources, load_tasks

GOOD = Path(__file__).resolve().parents[1] / "ingest" / "fixtures" / "good"
EXPLOIT_DIFF = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n"


def _item(instance_id: str, verdict: Verdict | None) -> TaskReport:
    if verdict is None:
        return TaskReport(instance_id, None, None)
    scored = TaskScored(
        correlation_id=f"c/{instance_id}",
        instance_id=instance_id,
        verdict=verdict,
        reason=f"{verdict.value} because of {instance_id}",
    )
    candidate = Candidate(
        instance_id=instance_id, diff=EXPLOIT_DIFF, provenance=Provenance(strategy="mutation")
    )
    attack = AttackCompleted(
        correlation_id=f"c/{instance_id}",
        instance_id=instance_id,
        outcomes=(
            CandidateOutcome(
                candidate=candidate,
                verdict=CandidateVerdict.EXPLOIT,
                evidence="the wider suite fails",
                advice="test the boundary",
            ),
            CandidateOutcome(
                candidate=Candidate(instance_id=instance_id, diff="--- a/y\n+++ b/y\n"),
                verdict=CandidateVerdict.BLOCKED,
                evidence="FAIL_TO_PASS failing",
            ),
        ),
    )
    return TaskReport(instance_id, scored, attack)


VERDICTS = {
    "calc__calc-6": Verdict.KEEP,  # file_mapping.json (relative environment.source)
    "calc__calc-3": Verdict.FIX,  # nested/swebench_lists.jsonl
    "calc__calc-4": Verdict.DROP,  # nested/swebench_lists.jsonl
    "calc__calc-2222222222222222222222222222222222222222": None,  # r2egym_row.jsonl: no verdict
    "calc__calc-5": Verdict.KEEP,  # single_object.json
    "calc__calc-1": Verdict.FIX,  # swebench_list.json
    "calc__calc-2": Verdict.ERROR,  # swebench_list.json
}


def _rows(path: Path) -> list[dict[str, object]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines()]
    data: list[dict[str, object]] = json.loads(path.read_text())
    return data


def test_json_and_jsonl_tasks_are_split_by_verdict_and_read_back_the_same(
    tmp_path: Path,
) -> None:
    report, sources = load_task_sources([GOOD])
    items = [_item(t.instance_id, VERDICTS[t.instance_id]) for t in report.tasks]
    write_report(tmp_path, items, missing_stages=[])

    summary = write_dataset(tmp_path, items, sources)

    folder = tmp_path / "dataset"
    assert summary.files == {
        "dataset/drop.jsonl": 1,
        "dataset/error.json": 1,
        "dataset/error.jsonl": 1,
        "dataset/fix.json": 1,
        "dataset/fix.jsonl": 1,
        "dataset/keep.json": 2,
    }
    assert summary.counts == {"keep": 2, "fix": 2, "drop": 1, "error": 2, "rejected": 0}
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        Path(name).name for name in summary.files
    )
    # every task reads back, with the project's ingestion, as the task it was
    original = {t.instance_id: t for t in report.tasks}
    again = load_tasks([folder])
    assert again.problems == []
    assert {t.instance_id: t for t in again.tasks} == original
    # keep rows are the input rows; the relative environment.source still names the same folder
    keep = {r["instance_id"]: r for r in _rows(folder / "keep.json")}
    assert keep["calc__calc-5"] == json.loads((GOOD / "single_object.json").read_text())
    input_row = json.loads((GOOD / "file_mapping.json").read_text())
    kept = keep["calc__calc-6"]
    assert {k: v for k, v in kept.items() if k != "environment"} == {
        k: v for k, v in input_row.items() if k != "environment"
    }
    env = kept["environment"]
    assert isinstance(env, dict)
    assert (folder / env["source"]).resolve() == (GOOD / "../repos/calc").resolve()
    # fix rows carry the exploits (diff, evidence), drop and error rows the reason
    (fix_row,) = _rows(folder / "fix.jsonl")
    assert fix_row[REASON_FIELD] == "FIX because of calc__calc-3"
    assert fix_row[EXPLOITS_FIELD] == [
        {
            "candidate": fix_row[EXPLOITS_FIELD][0]["candidate"],  # type: ignore[index]
            "strategy": "mutation",
            "tampering": False,
            "diff": EXPLOIT_DIFF,
            "evidence": "the wider suite fails",
            "advice": "test the boundary",
        }
    ]
    (drop_row,) = _rows(folder / "drop.jsonl")
    assert drop_row[REASON_FIELD] == "DROP because of calc__calc-4"
    assert EXPLOITS_FIELD not in drop_row
    (r2egym_row,) = _rows(folder / "error.jsonl")
    assert "parsed_commit_content" in r2egym_row  # still an R2E-Gym row
    assert r2egym_row[REASON_FIELD] == "no verdict: the audit did not finish"
    (error_row,) = _rows(folder / "error.json")
    assert error_row[REASON_FIELD] == "ERROR because of calc__calc-2"
    # the report records the dataset
    recorded = json.loads((tmp_path / "report.json").read_text())["dataset"]
    assert recorded["counts"] == summary.counts
    assert recorded["files"] == summary.files
    markdown = (tmp_path / "report.md").read_text()
    assert "2 keep, 2 fix, 1 drop, 2 error" in markdown
    assert markdown.count("## Hardened dataset") == 1


def test_parquet_rows_keep_their_column_types_and_gain_columns(tmp_path: Path) -> None:
    rows = [
        json.loads(line) | {"created_at": dt.datetime(2024, 5, 1, 12, 30)}
        for line in (GOOD / "nested" / "swebench_lists.jsonl").read_text().splitlines()
    ]
    for row in rows:
        row.pop("environment", None)  # parquet rows here carry no source folder
    first = tmp_path / "in" / "a.parquet"
    first.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), first)
    other = json.loads((GOOD / "swebench_list.json").read_text())
    for row in other:  # a schema that merges: the same column types, some columns missing
        row["FAIL_TO_PASS"] = json.loads(row["FAIL_TO_PASS"])
        row["PASS_TO_PASS"] = json.loads(row.get("PASS_TO_PASS") or "[]")
    second = tmp_path / "in" / "b.parquet"
    pq.write_table(pa.Table.from_pylist(other), second)
    report, sources = load_task_sources([first, second])
    verdicts = {"calc__calc-3": Verdict.FIX, "calc__calc-4": Verdict.KEEP,
                "calc__calc-1": Verdict.FIX, "calc__calc-2": Verdict.DROP}  # fmt: skip
    items = [_item(t.instance_id, verdicts[t.instance_id]) for t in report.tasks]
    out = tmp_path / "out"

    summary = write_dataset(out, items, sources)

    assert summary.files == {
        "dataset/drop.parquet": 1,
        "dataset/fix.parquet": 2,
        "dataset/keep.parquet": 1,
    }
    keep = pq.read_table(out / "dataset" / "keep.parquet")
    assert keep.schema == pq.read_table(first).schema  # unchanged, no added column
    fix = pq.read_table(out / "dataset" / "fix.parquet")
    assert pa.types.is_timestamp(fix.schema.field("created_at").type)
    fixed = {r["instance_id"]: r for r in fix.to_pylist()}
    assert fixed["calc__calc-1"]["created_at"] is None  # b.parquet had no such column
    assert fixed["calc__calc-3"][EXPLOITS_FIELD][0]["diff"] == EXPLOIT_DIFF
    assert fixed["calc__calc-3"][REASON_FIELD] == "FIX because of calc__calc-3"
    drop = pq.read_table(out / "dataset" / "drop.parquet").to_pylist()
    assert [(r["instance_id"], r[REASON_FIELD]) for r in drop] == [
        ("calc__calc-2", "DROP because of calc__calc-2")
    ]
    again = load_tasks([out / "dataset"])
    assert again.problems == []
    assert {t.instance_id: t for t in again.tasks} == {t.instance_id: t for t in report.tasks}


def test_parquet_files_whose_schemas_clash_are_written_one_per_input_file(
    tmp_path: Path,
) -> None:
    as_lists = json.loads((GOOD / "nested" / "swebench_lists.jsonl").read_text().splitlines()[0])
    as_lists.pop("environment", None)
    as_text = json.loads((GOOD / "swebench_list.json").read_text())[0]  # FAIL_TO_PASS as text
    for name, row in (("lists", as_lists), ("text", as_text)):
        pq.write_table(pa.Table.from_pylist([row]), tmp_path / f"{name}.parquet")
    report, sources = load_task_sources([tmp_path / "lists.parquet", tmp_path / "text.parquet"])
    items = [_item(t.instance_id, Verdict.DROP) for t in report.tasks]

    summary = write_dataset(tmp_path / "out", items, sources)

    assert summary.files == {"dataset/drop.lists.parquet": 1, "dataset/drop.text.parquet": 1}
    again = load_tasks([tmp_path / "out" / "dataset"])
    assert {t.instance_id: t for t in again.tasks} == {t.instance_id: t for t in report.tasks}


def test_a_rerun_replaces_the_files_and_tasks_without_a_source_are_listed(tmp_path: Path) -> None:
    report, sources = load_task_sources([GOOD / "swebench_list.json"])
    write_dataset(tmp_path, [_item(t.instance_id, Verdict.DROP) for t in report.tasks], sources)
    items = [_item(t.instance_id, Verdict.KEEP) for t in report.tasks]

    summary = write_dataset(tmp_path, [*items, _item("elsewhere__x-1", Verdict.KEEP)], sources)

    assert sorted(p.name for p in (tmp_path / "dataset").iterdir()) == ["keep.json"]
    assert summary.not_written == ["elsewhere__x-1"]
    assert summary.counts["keep"] == 2


GAPS = Unverified(
    unconfirmed=("c-1",),
    candidates_run=0,
    budget="15 candidates (3 rounds of 5)",
    budget_use=BudgetUse.SHORT,
    coverage_measured=True,
)
VERIFIED = Unverified(budget="15 candidates", budget_use=BudgetUse.SPENT, coverage_measured=True)


def _kept(instance_id: str, unverified: Unverified) -> TaskReport:
    item = _item(instance_id, Verdict.KEEP)
    assert item.scored is not None
    return TaskReport(
        instance_id, item.scored.model_copy(update={"unverified": unverified}), item.attack
    )


def test_a_keep_that_leaves_something_unverified_is_marked_in_its_row(tmp_path: Path) -> None:
    report, sources = load_task_sources([GOOD / "swebench_list.json"])
    first, second = (t.instance_id for t in report.tasks)
    items = [_kept(first, GAPS), _kept(second, VERIFIED)]
    write_report(tmp_path, items, missing_stages=[])

    summary = write_dataset(tmp_path, items, sources)

    rows = {r["instance_id"]: r for r in _rows(tmp_path / "dataset" / "keep.json")}
    assert rows[first][UNVERIFIED_FIELD] == [
        "1 accepted candidate unconfirmed",
        "only 0 candidates run of a budget of 15 candidates (3 rounds of 5)",
    ]
    assert UNVERIFIED_FIELD not in rows[second]  # verified: the row as it was read
    assert summary.counts["keep"] == 2 and summary.keep_unverified == 1
    recorded = json.loads((tmp_path / "report.json").read_text())["dataset"]
    assert recorded["keep_unverified"] == 1 and recorded["unverified_field"] == UNVERIFIED_FIELD
    assert (
        f"1 keep row(s) leave something unverified: marked with `{UNVERIFIED_FIELD}`"
        in (tmp_path / "report.md").read_text()
    )


def test_a_parquet_keep_gains_a_column_a_pipeline_can_filter_on(tmp_path: Path) -> None:
    rows = json.loads((GOOD / "swebench_list.json").read_text())
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source)
    report, sources = load_task_sources([source])
    first, second = (t.instance_id for t in report.tasks)

    write_dataset(tmp_path / "out", [_kept(first, GAPS), _kept(second, VERIFIED)], sources)

    keep = pq.read_table(tmp_path / "out" / "dataset" / "keep.parquet")
    marked = {r["instance_id"]: r[UNVERIFIED_FIELD] for r in keep.to_pylist()}
    assert marked == {first: list(GAPS.caveats()), second: None}
    verified = [r["instance_id"] for r in keep.to_pylist() if not r[UNVERIFIED_FIELD]]
    assert verified == [second]


def test_gzipped_inputs_are_written_gzipped_and_a_saved_dataset_as_parquet(tmp_path: Path) -> None:
    import gzip

    from tests.unit.ingest.test_ingest_harness_inputs import save_to_disk, swebench_rows

    rows = swebench_rows()
    gz = tmp_path / "in" / "tasks.jsonl.gz"
    gz.parent.mkdir()
    gz.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows[:1]).encode()))
    listed = tmp_path / "in" / "more.json.gz"
    listed.write_bytes(gzip.compress(json.dumps(rows[1:2]).encode()))
    renamed = [dict(r, instance_id=f"{r['instance_id']}0") for r in rows]
    saved = save_to_disk(tmp_path / "in" / "saved", renamed, shards=1)
    report, sources = load_task_sources([gz, listed, saved])
    assert report.problems == [] and len(report.tasks) == 2 + len(rows)
    items = [_item(t.instance_id, Verdict.FIX) for t in report.tasks]
    out = tmp_path / "out"

    summary = write_dataset(out, items, sources)

    assert summary.files == {
        "dataset/fix.jsonl.gz": 1,
        "dataset/fix.json.gz": 1,
        "dataset/fix.parquet": len(rows),
    }
    with gzip.open(out / "dataset" / "fix.jsonl.gz", "rt") as handle:
        [line] = [json.loads(line) for line in handle]
    assert line[REASON_FIELD] == f"FIX because of {rows[0]['instance_id']}"
    parquet = pq.read_table(out / "dataset" / "fix.parquet")
    assert parquet.schema.field("instance_id").type == pa.string()
    assert EXPLOITS_FIELD in parquet.column_names
    again = load_tasks([out / "dataset"])
    assert again.problems == []
    assert {t.instance_id: t for t in again.tasks} == {t.instance_id: t for t in report.tasks}
    rerun = write_dataset(out, items[:1], sources)  # the other splits' stale files are gone
    assert sorted(p.name for p in (out / "dataset").iterdir()) == ["fix.jsonl.gz"]
    assert rerun.files == {"dataset/fix.jsonl.gz": 1}
