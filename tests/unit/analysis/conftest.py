"""Small synthetic inputs on disk for the loader, report and command tests."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

EASY = [f"easy-{i}" for i in range(10)]
HARD = [f"hard-{i}" for i in range(10)]
RARE = [f"rare-{i}" for i in range(4)]
TASKS = EASY + HARD + RARE
FLAGGED = {"easy-0", "easy-1", "easy-2", "hard-0", "hard-1", "rare-0"}
SUBMISSIONS = [
    ("20240101_rag_claude", "2024-01-01"),
    ("20240601_agent_gpt4o", "2024-06-01"),
    ("20241201_agent_qwen", "2024-12-01"),
    ("20250301_mini_gemini", "2025-03-01"),
    ("20250801_mini_claude", "2025-08-01"),
    ("20251101_mini_gpt5", "2025-11-01"),
]


def resolved_by(index: int) -> list[str]:
    """Submission ``index`` resolves its flagged tasks and a share of the rest that grows."""
    return [
        task
        for position, task in enumerate(TASKS)
        if (task in FLAGGED and (position + index) % 4 != 0) or (position * 7 + index) % 5 < 2
    ]


@dataclass(frozen=True)
class TinyInputs:
    """One synthetic data set written in every supported shape, with what it should load as."""

    tasks: tuple[str, ...]
    flagged: frozenset[str]
    expected_resolved: dict[str, frozenset[str]]
    matrix_csv: Path
    submissions_json: Path
    mapping_json: Path
    experiments: Path
    flags_json: Path
    flags_csv: Path
    strata_csv: Path
    records_json: Path


@pytest.fixture
def tiny(tmp_path: Path) -> TinyInputs:
    """Write the synthetic data set in all shapes under ``tmp_path``."""
    return TinyInputs(
        tasks=tuple(TASKS),
        flagged=frozenset(FLAGGED),
        expected_resolved={
            name: frozenset(resolved_by(i)) for i, (name, _) in enumerate(SUBMISSIONS)
        },
        matrix_csv=_matrix(tmp_path / "matrix.csv"),
        submissions_json=_submissions(tmp_path / "submissions.json"),
        mapping_json=_write_json(
            tmp_path / "mapping.json",
            {name: resolved_by(i) for i, (name, _) in enumerate(SUBMISSIONS)},
        ),
        experiments=_experiments(tmp_path / "experiments"),
        flags_json=_write_json(tmp_path / "flags.json", {t: t in FLAGGED for t in TASKS}),
        flags_csv=_csv(
            tmp_path / "flags.csv",
            ["instance_id", "flagged"],
            [[t, "true" if t in FLAGGED else "false"] for t in TASKS],
        ),
        strata_csv=_csv(
            tmp_path / "strata.csv",
            ["instance_id", "stratum"],
            [[t, t.split("-")[0]] for t in TASKS],
        ),
        records_json=_write_json(
            tmp_path / "records.json",
            {
                "instances": [
                    {
                        "instance_id": t,
                        "difficulty": t.split("-")[0],
                        "utboost_insufficient_tests": t in FLAGGED,
                    }
                    for t in TASKS
                ]
            },
        ),
    )


def _write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _matrix(path: Path) -> Path:
    rows = []
    for i, (name, day) in enumerate(SUBMISSIONS):
        resolved = set(resolved_by(i))
        rows.append([name, day, *("1" if t in resolved else "0" for t in TASKS)])
    return _csv(path, ["folder", "date", *TASKS], rows)


def _submissions(path: Path) -> Path:
    records: list[dict[str, object]] = [
        {
            "folder": name,
            "name": name.replace("_", " "),
            "date": day,
            "tags": [],
            "resolved_ids": resolved_by(i),
            "count_matches_pct": True,
        }
        for i, (name, day) in enumerate(SUBMISSIONS)
    ]
    records.append({"folder": "20250101_unknown", "date": "2025-01-01", "resolved_ids": None})
    records.append(
        {
            "folder": "20250102_bad",
            "date": "2025-01-02",
            "resolved_ids": TASKS,
            "count_matches_pct": False,
        }
    )
    return _write_json(path, {"instance_ids": TASKS, "submissions": records})


def _experiments(root: Path) -> Path:
    for i, (name, _) in enumerate(SUBMISSIONS):
        results = root / "evaluation" / "verified" / name / "results"
        results.mkdir(parents=True)
        _write_json(results / "results.json", {"resolved": resolved_by(i), "no_logs": []})
    (root / "evaluation" / "verified" / "20250909_no_results").mkdir()
    return root
