"""The hardened dataset an audit hands back: the input tasks, in the format they were read in,
split by verdict, so a curator can train on `keep` at once, mend `fix`, and set `drop` aside.

`write_dataset(out_dir, items, sources)` writes `out_dir/dataset/<split>.<ext>`, one file per
split and input format (`json`, `jsonl`, `json.gz`, `jsonl.gz`, `parquet`), each row as it was
read (SWE-bench or R2E-Gym alike). Rows read from a `datasets` `save_to_disk` folder are written
as parquet (with their Arrow column types), which `datasets` and this project read alike:

- `keep`: the row unchanged — or, for a task the repairer hardened and its re-audit kept, with
  the hardened test patch and test lists in place of its own, plus `hackaudit_previous_verdict`.
  A KEEP whose verdict leaves something unverified (accepted candidates unconfirmed or unreached,
  fewer candidates run than the budget, gold hunks the graded tests never execute, coverage not
  measured) gains `hackaudit_unverified`, the list of those caveats: a pipeline that wants only
  verified tasks keeps the rows where it is missing (null in parquet) or empty;
- `fix`: plus `hackaudit_reason` and `hackaudit_exploits` (each confirmed exploit's diff, the
  strategy that found it, whether it tampers with the harness, the evidence that it is wrong and
  how to close it);
- `drop`: plus `hackaudit_reason`;
- `error` (the task could not be audited, or the audit did not finish): plus `hackaudit_reason`;
- `rejected.jsonl`: the input rows (or whole files) that could not be read as tasks, one JSON
  object each: `file`, `line` (1-based line or row; null for a whole file), `instance_id` and
  `field` when known, and `reason`.

Every input row ends in exactly one of these files.

Added fields are new keys (new columns in parquet), which readers of the format ignore; this
project's ingestion ignores them too. A relative `environment.source` is re-anchored to the
dataset folder so it still names the same folder. Parquet rows are copied from the input file
with their own column types (input files whose schemas clash are written one file each).
Afterwards the report in `out_dir` (report.json, report.md), when
there is one, records the files and their counts.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hackaudit.cli.report_model import TaskReport, caveats
from hackaudit.cli.report_summary import NOT_FINISHED, Rejected
from hackaudit.shared.contracts import CandidateVerdict, Verdict
from hackaudit.shared.ingest import TaskSource
from hackaudit.shared.logs import get_logger

log = get_logger(__name__)

FOLDER = "dataset"
SPLITS = ("keep", "fix", "drop", "error")
REJECTED = "rejected.jsonl"  # the input rows that could not be read
FORMATS = ("json", "jsonl", "json.gz", "jsonl.gz", "parquet")
# The format a split is written in, by input format, where it is not the input's own.
_WRITTEN_AS = {"arrow": "parquet"}
REASON_FIELD = "hackaudit_reason"
EXPLOITS_FIELD = "hackaudit_exploits"
PREVIOUS_FIELD = "hackaudit_previous_verdict"  # a repaired task: its verdict before the repair
UNVERIFIED_FIELD = "hackaudit_unverified"  # a KEEP's caveats: what its verdict did not verify
_MARKDOWN_HEADING = "## Hardened dataset"
_SPLIT_OF = {Verdict.KEEP: "keep", Verdict.FIX: "fix", Verdict.DROP: "drop"}


@dataclass(frozen=True)
class DatasetRow:
    """One task's source and what is added to its row."""

    source: TaskSource
    added: dict[str, Any]


@dataclass
class DatasetSummary:
    """What was written: file (relative to the report folder) -> rows, and rows per split."""

    files: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys((*SPLITS, "rejected"), 0))
    # Tasks of the report whose source row is unknown (not read from a task file): not written.
    not_written: list[str] = field(default_factory=list)
    # Rows of `keep` marked with `UNVERIFIED_FIELD` (their verdict leaves something unverified).
    keep_unverified: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "folder": FOLDER,
            "files": self.files,
            "counts": self.counts,
            "keep_unverified": self.keep_unverified,
            "unverified_field": UNVERIFIED_FIELD,
            "not_written": self.not_written,
        }


def write_dataset(
    out_dir: Path,
    items: Sequence[TaskReport],
    sources: Mapping[str, TaskSource],
    *,
    unaudited: Mapping[str, str] | None = None,
    rejected: Sequence[Rejected] = (),
) -> DatasetSummary:
    """Writes `out_dir/dataset/` (see the module doc) and records it in the report there.

    `unaudited` says, by task id, why a task without a verdict has none (its image could not be
    built, say); without it such a task's reason is that the audit did not finish.
    """
    folder = out_dir / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        for stale in folder.glob(f"{split}.*"):
            if stale.suffix.lstrip(".") in FORMATS or stale.name.endswith(
                (".json.gz", ".jsonl.gz")
            ):
                stale.unlink()
    (folder / REJECTED).unlink(missing_ok=True)
    groups: dict[tuple[str, str], list[DatasetRow]] = defaultdict(list)
    summary = DatasetSummary()
    for item in items:
        source = sources.get(item.instance_id)
        if source is None:
            summary.not_written.append(item.instance_id)
            continue
        split, added = split_of(item, (unaudited or {}).get(item.instance_id))
        added |= hardened_fields(item, source.row)
        written_as = _WRITTEN_AS.get(source.format, source.format)
        groups[(split, written_as)].append(DatasetRow(source, added))
        summary.counts[split] += 1
        summary.keep_unverified += UNVERIFIED_FIELD in added
    for (split, ext), rows in sorted(groups.items()):
        for path, count in _WRITERS[ext](folder / f"{split}.{ext}", rows).items():
            summary.files[str(path.relative_to(out_dir))] = count
    if rejected:
        path = folder / REJECTED
        with path.open("w", encoding="utf-8") as handle:
            for found in rejected:
                handle.write(json.dumps(asdict(found), ensure_ascii=False) + "\n")
        summary.files[str(path.relative_to(out_dir))] = len(rejected)
    summary.counts["rejected"] = len(rejected)
    _record_in_report(out_dir, summary)
    log.info("dataset.written", folder=str(folder), **summary.counts)
    return summary


def split_of(item: TaskReport, unaudited: str | None = None) -> tuple[str, dict[str, Any]]:
    """The split a task's row goes to, and the fields added to it."""
    scored = item.scored
    if scored is None:
        return "error", {REASON_FIELD: f"no verdict: {unaudited or NOT_FINISHED}"}
    if scored.verdict not in _SPLIT_OF:
        return "error", {REASON_FIELD: scored.reason}
    split = _SPLIT_OF[scored.verdict]
    if split == "keep":
        found = caveats(scored)
        return split, {UNVERIFIED_FIELD: list(found)} if found else {}
    added: dict[str, Any] = {REASON_FIELD: scored.reason}
    if split == "fix":
        added[EXPLOITS_FIELD] = _exploits(item)
    return split, added


def hardened_fields(item: TaskReport, row: Mapping[str, Any]) -> dict[str, Any]:
    """For a task the repairer hardened: its test patch and test lists replacing the row's own
    (in the row's encoding: SWE-bench's JSON strings stay strings), and the verdict it had before.
    A row without those fields (another format) gets them as `hackaudit_hardened_*` instead."""
    task = item.hardened
    if task is None:
        return {}
    values: dict[str, Any] = {
        "test_patch": task.test_patch,
        "FAIL_TO_PASS": list(task.fail_to_pass),
        "PASS_TO_PASS": list(task.pass_to_pass),
    }
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in row:
            out[f"hackaudit_hardened_{key.lower()}"] = value
        elif isinstance(row[key], str) and isinstance(value, list):
            out[key] = json.dumps(value)
        else:
            out[key] = value
    if item.scored is not None and item.scored.previous_verdict is not None:
        out[PREVIOUS_FIELD] = item.scored.previous_verdict.value
    return out


def _exploits(item: TaskReport) -> list[dict[str, Any]]:
    if item.attack is None:
        return []
    found = []
    for outcome in item.attack.outcomes:
        if outcome.verdict is not CandidateVerdict.EXPLOIT:
            continue
        candidate = outcome.candidate
        found.append(
            {
                "candidate": candidate.candidate_id,
                "strategy": candidate.provenance.strategy,
                "tampering": outcome.tampering,
                "diff": candidate.diff or json.dumps(candidate.files, indent=2, sort_keys=True),
                "evidence": outcome.evidence,
                "advice": outcome.advice,
            }
        )
    return found


# --- writers per format --------------------------------------------------------------------


def _json_row(row: DatasetRow, folder: Path) -> Any:
    data = row.source.row
    if not isinstance(data, dict):
        return data
    out = dict(data)
    environment = out.get("environment")
    if isinstance(environment, dict):
        source = environment.get("source")
        if isinstance(source, str) and source and not Path(source).expanduser().is_absolute():
            target = (row.source.path.parent / source).resolve()
            anchored = os.path.relpath(target, folder.resolve())
            out["environment"] = {**environment, "source": anchored}
    return out | row.added


def _write_json(path: Path, rows: list[DatasetRow]) -> dict[Path, int]:
    data = [_json_row(row, path.parent) for row in rows]
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return {path: len(rows)}


def _write_jsonl(path: Path, rows: list[DatasetRow]) -> dict[Path, int]:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(_json_row(row, path.parent), ensure_ascii=False) + "\n")
    return {path: len(rows)}


def _write_json_gz(path: Path, rows: list[DatasetRow]) -> dict[Path, int]:
    data = [_json_row(row, path.parent) for row in rows]
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return {path: len(rows)}


def _write_jsonl_gz(path: Path, rows: list[DatasetRow]) -> dict[Path, int]:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(_json_row(row, path.parent), ensure_ascii=False) + "\n")
    return {path: len(rows)}


def _write_parquet(path: Path, rows: list[DatasetRow]) -> dict[Path, int]:
    """The input files' own rows (their column types kept), plus the added columns: of parquet
    files and of `save_to_disk` folders alike. Rows of inputs whose schemas cannot be merged
    (one column, two types) go to one file per input instead, `<split>.<input name>.parquet`."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from hackaudit.shared.ingest.task_files import SAVED_DATASET, saved_dataset_table

    by_file: dict[Path, list[DatasetRow]] = defaultdict(list)
    for row in rows:
        by_file[row.source.path].append(row)
    tables = []
    for source, chosen in by_file.items():
        whole = (
            saved_dataset_table(source)
            if chosen[0].source.format == SAVED_DATASET
            else pq.read_table(source)
        )
        table = whole.take([row.source.number - 1 for row in chosen])
        names = sorted({name for row in chosen for name in row.added})
        for name in names:
            values = [row.added.get(name) for row in chosen]
            if name in table.column_names:
                table = table.drop_columns([name])
            table = table.append_column(name, pa.array(values))
        tables.append(table)
    try:
        merged = pa.concat_tables(tables, promote_options="permissive")
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        written: dict[Path, int] = {}
        for source, table in zip(by_file, tables, strict=True):
            target = path.with_name(f"{path.stem}.{source.stem}.parquet")
            while target in written:
                target = target.with_name(f"{target.stem}_.parquet")
            pq.write_table(table, target)
            written[target] = table.num_rows
        return written
    pq.write_table(merged, path)
    return {path: merged.num_rows}


_WRITERS = {
    "json": _write_json,
    "jsonl": _write_jsonl,
    "json.gz": _write_json_gz,
    "jsonl.gz": _write_jsonl_gz,
    "parquet": _write_parquet,
}


# --- the report's record of it -----------------------------------------------------------


def summary_line(summary: DatasetSummary) -> str:
    counts = ", ".join(f"{summary.counts.get(s, 0)} {s}" for s in (*SPLITS, "rejected"))
    files = ", ".join(f"`{name}`" for name in summary.files) or "none"
    line = f"Tasks in their own format, by verdict, in `{FOLDER}/`: {counts} ({files})."
    if summary.keep_unverified:
        line += (
            f" {summary.keep_unverified} keep row(s) leave something unverified: marked with "
            f"`{UNVERIFIED_FIELD}` (the caveats), see “What the verdicts leave unverified”."
        )
    if summary.not_written:
        line += f" Not written (no source row): {', '.join(summary.not_written)}."
    return line


def _record_in_report(out_dir: Path, summary: DatasetSummary) -> None:
    report_json = out_dir / "report.json"
    if report_json.is_file():
        data = json.loads(report_json.read_text())
        if isinstance(data, dict):
            data["dataset"] = summary.as_json()
            report_json.write_text(json.dumps(data, indent=2))
    report_md = out_dir / "report.md"
    if report_md.is_file():
        text = report_md.read_text()
        text = text.split(f"\n{_MARKDOWN_HEADING}\n", 1)[0].rstrip("\n")
        report_md.write_text(f"{text}\n\n{_MARKDOWN_HEADING}\n\n{summary_line(summary)}\n")
