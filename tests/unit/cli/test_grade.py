"""Grading given patches under a task's own tests and variant suites, on hand-made run results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hackaudit.cli.grade import (
    GOLD,
    OFFICIAL,
    GradeInputError,
    Prediction,
    SuiteVariant,
    grade_orders,
    grade_rows,
    harness_reports,
    load_predictions,
    load_variants,
    write_harness_reports,
    wrong_but_rewarded,
)
from hackaudit.cli.main import app
from hackaudit.shared.contracts import RunCompleted, RunResult, RunStatus, Task, TestStatus

P, F = TestStatus.PASSED, TestStatus.FAILED


def task() -> Task:
    return Task(
        instance_id="lib__lib-1",
        repo="lib/lib",
        base_commit="abc",
        patch="gold diff\n",
        test_patch="official tests\n",
        FAIL_TO_PASS=["t::f2p"],
        PASS_TO_PASS=["t::p2p"],
    )


def completed(order_request_key: str, *results: RunResult) -> RunCompleted:
    return RunCompleted(
        correlation_id="c",
        instance_id="lib__lib-1",
        purpose="candidate",
        request_key=order_request_key,
        results=results,
    )


def ran(tests: dict[str, TestStatus]) -> RunResult:
    resolved = all(s is P for s in tests.values())
    return RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests=tests)


def test_predictions_read_as_jsonl_and_json_and_bad_rows_are_named(tmp_path: Path) -> None:
    rows = [
        {"instance_id": "lib__lib-1", "model_patch": "p1", "model_name_or_path": "sys-a"},
        {"instance_id": "lib__lib-1", "model_patch": "p2"},
    ]
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    listed = tmp_path / "p.json"
    listed.write_text(json.dumps(rows))
    for path in (jsonl, listed):
        got = load_predictions(path)
        assert [(p.name, p.patch) for p in got] == [("sys-a", "p1"), ("prediction-2", "p2")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"instance_id": "x", "model_patch": 3}) + "\n")
    with pytest.raises(GradeInputError, match=r"row 1 \(x\): model_patch"):
        load_predictions(bad)


def test_predictions_keyed_by_instance_id_and_a_null_patch_read_as_the_harness_reads_them(
    tmp_path: Path,
) -> None:
    keyed = tmp_path / "keyed.json"
    keyed.write_text(
        json.dumps(
            {
                "lib__lib-1": {"model_patch": "p1", "model_name_or_path": "sys-a"},
                "lib__lib-2": {"model_patch": None, "model_name_or_path": "sys-a"},
            }
        )
    )
    got = load_predictions(keyed)
    assert [(p.instance_id, p.name, p.patch) for p in got] == [
        ("lib__lib-1", "sys-a", "p1"),
        ("lib__lib-2", "sys-a", ""),  # null: the empty patch
    ]
    one = tmp_path / "one.json"  # a single prediction object is not a keyed file
    one.write_text(json.dumps({"instance_id": "lib__lib-1", "model_patch": None}))
    assert [(p.instance_id, p.patch) for p in load_predictions(one)] == [("lib__lib-1", "")]
    missing = tmp_path / "missing.jsonl"
    missing.write_text(json.dumps({"instance_id": "x"}) + "\n")
    with pytest.raises(GradeInputError, match=r"row 1 \(x\): model_patch is missing"):
        load_predictions(missing)


def test_grading_predictions_for_a_task_not_given_is_a_one_line_error(tmp_path: Path) -> None:
    tasks = Path(__file__).parents[3] / "examples" / "tasks" / "semverlite.jsonl"
    known = json.loads(tasks.read_text().splitlines()[0])["instance_id"]
    predictions = tmp_path / "p.jsonl"
    rows = [
        {"instance_id": known, "model_patch": ""},
        {"instance_id": "nope__nope-1", "model_patch": ""},
    ]
    predictions.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    done = CliRunner().invoke(
        app, ["tasks", "grade", str(tasks), "--predictions", str(predictions)]
    )
    assert done.exit_code == 2, done.output
    assert "predictions for instance ids no task has: nope__nope-1" in done.output
    assert "Traceback" not in done.output


def test_a_variant_replaces_the_test_patch_and_adds_its_tests(tmp_path: Path) -> None:
    path = tmp_path / "v.json"
    path.write_text(
        json.dumps({"lib__lib-1": [{"name": "aug", "test_patch": "aug", "FAIL_TO_PASS": ["t::x"]}]})
    )
    variant = load_variants(path)["lib__lib-1"][0]
    hardened = variant.applied_to(task())
    assert hardened.test_patch == "aug"
    assert hardened.fail_to_pass == ("t::f2p", "t::x")
    path.write_text(json.dumps({"lib__lib-1": [{"name": OFFICIAL, "test_patch": "x"}]}))
    with pytest.raises(GradeInputError, match="reserved"):
        load_variants(path)


def test_a_patch_the_official_tests_reward_and_the_variant_rejects_is_found() -> None:
    variant = SuiteVariant("aug", "aug", fail_to_pass=("t::x",))
    orders = grade_orders(
        [task()], [Prediction("lib__lib-1", "sys-a", "wrong")], {"lib__lib-1": [variant]}, batch="b"
    )
    assert {(o.patch_name, o.variant) for o in orders} == {
        (GOLD, OFFICIAL), ("sys-a", OFFICIAL), (GOLD, "aug"), ("sys-a", "aug"),
    }  # fmt: skip
    results = {}
    for o in orders:
        tests = {"t::f2p": P, "t::p2p": P}
        if o.variant == "aug":
            tests["t::x"] = F if o.patch_name == "sys-a" else P
        results[o.request.idempotency_key] = completed(o.request.idempotency_key, ran(tests))
    rows = grade_rows(orders, results)
    findings, unusable = wrong_but_rewarded(rows)
    assert [(f.patch_name, f.variant) for f in findings] == [("sys-a", "aug")]
    assert unusable == []
    rejected = next(r for r in rows if r.patch_name == "sys-a" and r.variant == "aug")
    assert rejected.failing == ("t::x",)


def test_a_variant_gold_fails_is_not_used() -> None:
    variant = SuiteVariant("aug", "aug", fail_to_pass=("t::x",))
    orders = grade_orders(
        [task()], [Prediction("lib__lib-1", "sys-a", "wrong")], {"lib__lib-1": [variant]}, batch="b"
    )
    results = {}
    for o in orders:
        tests = {"t::f2p": P, "t::p2p": P}
        if o.variant == "aug":
            tests["t::x"] = F
        results[o.request.idempotency_key] = completed(o.request.idempotency_key, ran(tests))
    findings, unusable = wrong_but_rewarded(grade_rows(orders, results))
    assert findings == []
    assert unusable == [("lib__lib-1", "aug")]


def test_a_run_that_did_not_complete_is_neither_resolved_nor_rejected() -> None:
    orders = grade_orders([task()], [], {}, batch="b")
    key = orders[0].request.idempotency_key
    failed = RunResult(status=RunStatus.INFRA_ERROR, reason="reset failed")
    rows = grade_rows(orders, {key: completed(key, failed)})
    assert (rows[0].outcome, rows[0].reason) == ("infra_error", "reset failed")
    assert grade_rows(orders, {})[0].outcome == "no answer"


def test_a_predictions_file_that_matches_none_of_the_tasks_is_an_error(tmp_path: Path) -> None:
    tasks = Path(__file__).parents[3] / "examples" / "tasks" / "semverlite.jsonl"
    ids = [json.loads(line)["instance_id"] for line in tasks.read_text().splitlines()]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    elsewhere = tmp_path / "elsewhere.jsonl"  # only for a task not chosen by --instance-ids
    elsewhere.write_text(json.dumps({"instance_id": ids[1], "model_patch": "x"}) + "\n")
    for predictions, more in ((empty, []), (elsewhere, ["--instance-ids", ids[0]])):
        done = CliRunner().invoke(
            app,
            ["tasks", "grade", str(tasks), "--predictions", str(predictions), *more],
            env={"COLUMNS": "300"},
        )
        assert done.exit_code == 2, done.output
        assert f"{predictions}: no prediction for any of the" in done.output
        assert "Traceback" not in done.output


def test_the_harness_reports_sort_each_prediction_as_the_harness_does(tmp_path: Path) -> None:
    tasks = [task().model_copy(update={"instance_id": f"lib__lib-{n}"}) for n in range(1, 7)]
    given = [
        Prediction("lib__lib-1", "org/sys", "right", model="org/sys"),
        Prediction("lib__lib-2", "org/sys", "wrong", model="org/sys"),
        Prediction("lib__lib-3", "org/sys", "", model="org/sys", patch_is_none=True),
        Prediction("lib__lib-4", "org/sys", "garbled", model="org/sys"),
        Prediction("lib__lib-5", "org/sys", "breaks the box", model="org/sys"),
    ]  # lib-6: no prediction
    orders = grade_orders(tasks, given, {}, batch="b")
    outcome = {
        "lib__lib-1": ran({"t::f2p": P, "t::p2p": P}),
        "lib__lib-2": ran({"t::f2p": F, "t::p2p": TestStatus.SKIPPED}),
        "lib__lib-3": ran({"t::f2p": F, "t::p2p": P}),
        "lib__lib-4": RunResult(status=RunStatus.PATCH_FAILED, reason="hunk 1 does not apply"),
        "lib__lib-5": RunResult(status=RunStatus.INFRA_ERROR, reason="docker went away"),
    }
    results = {
        o.request.idempotency_key: completed(o.request.idempotency_key, outcome[o.instance_id])
        for o in orders
        if o.prediction is not None
    }

    [reports] = harness_reports(tasks, orders, results, "r1")
    written = write_harness_reports(tmp_path, "r1", [reports])

    assert written == [tmp_path / "org__sys.r1.json"]
    run = json.loads(written[0].read_text())
    assert run["total_instances"] == 6 and run["submitted_instances"] == 5
    assert run["completed_ids"] == ["lib__lib-1", "lib__lib-2"]
    assert run["resolved_ids"] == ["lib__lib-1"] and run["unresolved_ids"] == ["lib__lib-2"]
    assert run["empty_patch_ids"] == ["lib__lib-3"]
    assert run["error_ids"] == ["lib__lib-4", "lib__lib-5"]
    assert run["infra_failure_ids"] == ["lib__lib-5"]
    assert run["failure_reasons"] == {"lib__lib-5": "docker went away"}
    assert run["incomplete_ids"] == ["lib__lib-6"]
    assert (run["resolved_instances"], run["error_instances"], run["schema_version"]) == (1, 2, 2)
    logs = tmp_path / "logs" / "run_evaluation" / "r1" / "org__sys"
    unresolved = json.loads((logs / "lib__lib-2" / "report.json").read_text())["lib__lib-2"]
    assert unresolved["resolved"] is False
    assert unresolved["patch_successfully_applied"] is True
    assert unresolved["tests_status"]["FAIL_TO_PASS"] == {"success": [], "failure": ["t::f2p"]}
    assert unresolved["tests_status"]["PASS_TO_PASS"] == {"success": ["t::p2p"], "failure": []}
    assert unresolved["tests_status"]["FAIL_TO_FAIL"] == {"success": [], "failure": []}
    assert json.loads((logs / "lib__lib-1" / "report.json").read_text())["lib__lib-1"]["resolved"]
    for not_evaluated in ("lib__lib-3", "lib__lib-4", "lib__lib-5", "lib__lib-6"):
        assert not (logs / not_evaluated / "report.json").exists()
    assert (
        "patch_failed: hunk 1 does not apply"
        in (logs / "lib__lib-4" / "run_instance.log").read_text()
    )
