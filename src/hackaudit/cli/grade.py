"""Grading given patches the way each task's environment grades them: SWE-bench predictions
(`instance_id`, `model_patch`, `model_name_or_path`) run in the sandbox against the task's own
tests and, optionally, against variants of its test suite (an added test, a hardened test patch).

This answers "which of these patches does the environment reward, and would a stronger test
suite still reward them?": a patch resolved by the official tests and rejected by a variant
whose tests gold still passes is a wrong patch the task pays for. Gold always runs beside the
predictions, under every variant, so a variant that gold fails is visible and not used.

The official suite's outcomes are also written as the SWE-bench harness writes its own (see
`harness_reports`), so tools that read the harness's reports read these too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hackaudit.shared.contracts import (
    Candidate,
    Provenance,
    RunCompleted,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TestStatus,
)

REQUESTER = "grade"
OFFICIAL = "official"
GOLD = "gold"


class GradeInputError(ValueError):
    """A predictions or variants file that cannot be read; the message names file and row."""


@dataclass(frozen=True)
class Prediction:
    instance_id: str
    name: str
    patch: str
    # `model_name_or_path` as given ("None" when missing, as the harness names it) and whether
    # `model_patch` was null: what the harness's reports are keyed and flagged by.
    model: str = "None"
    patch_is_none: bool = False


@dataclass(frozen=True)
class SuiteVariant:
    """Another test suite for a task: `test_patch` replaces the task's own, the listed tests are
    graded beside its FAIL_TO_PASS / PASS_TO_PASS."""

    name: str
    test_patch: str
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()

    def applied_to(self, task: Task) -> Task:
        return task.model_copy(
            update={
                "test_patch": self.test_patch,
                "fail_to_pass": tuple(dict.fromkeys((*task.fail_to_pass, *self.fail_to_pass))),
                "pass_to_pass": tuple(dict.fromkeys((*task.pass_to_pass, *self.pass_to_pass))),
            }
        )


def _rows(path: Path) -> list[Any]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise GradeInputError(f"{path}: cannot be read: {exc}") from exc
    stripped = text.strip()
    try:
        if stripped.startswith("[") or stripped.startswith("{"):
            try:
                data = json.loads(stripped)
            except json.JSONDecodeError:
                data = None
            if data is not None:
                return data if isinstance(data, list) else [data]
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise GradeInputError(f"{path}: not JSON or JSONL: {exc.msg} (line {exc.lineno})") from exc


def _keyed(rows: list[Any]) -> list[Any] | None:
    """The rows of predictions written as one object keyed by instance id (the SWE-bench
    harness's other form), each given its key as `instance_id`; None for any other shape."""
    if len(rows) != 1 or not isinstance(rows[0], dict) or "model_patch" in rows[0]:
        return None
    keyed = rows[0]
    if not keyed or not all(isinstance(v, dict) for v in keyed.values()):
        return None
    return [{**value, "instance_id": key} for key, value in keyed.items()]


def load_predictions(path: Path) -> list[Prediction]:
    """SWE-bench predictions as the harness takes them: a JSON list, JSONL, or one JSON object
    keyed by instance id; `model_name_or_path` names the patch, and a `model_patch` of null is
    the empty patch, as the harness reads it."""
    rows = _rows(path)
    keyed = _keyed(rows)
    out: list[Prediction] = []
    for number, row in enumerate(keyed if keyed is not None else rows, start=1):
        where = f"{path}: row {number}"
        if not isinstance(row, dict):
            raise GradeInputError(f"{where}: not an object")
        instance_id = row.get("instance_id")
        if not isinstance(instance_id, str) or not instance_id:
            raise GradeInputError(f"{where}: instance_id is missing")
        if "model_patch" not in row:
            raise GradeInputError(f"{where} ({instance_id}): model_patch is missing")
        patch = "" if row["model_patch"] is None else row["model_patch"]
        if not isinstance(patch, str):
            raise GradeInputError(f"{where} ({instance_id}): model_patch is not a string")
        name = row.get("model_name_or_path")
        out.append(
            Prediction(
                instance_id,
                str(name) if name else f"prediction-{number}",
                patch,
                model=str(name) if name else "None",
                patch_is_none=row["model_patch"] is None,
            )
        )
    return out


def json_object(path: Path, holding: str) -> dict[str, Any]:
    """The one JSON object a file holds (`holding` says of what, for the error)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise GradeInputError(f"{path}: cannot be read as JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise GradeInputError(f"{path}: expected an object of {holding}")
    return data


def load_variants(path: Path) -> dict[str, list[SuiteVariant]]:
    """`{instance_id: [{"name", "test_patch", "FAIL_TO_PASS"?, "PASS_TO_PASS"?}, ...]}`."""
    data = json_object(path, "instance_id -> list of variants")
    out: dict[str, list[SuiteVariant]] = {}
    for instance_id, items in data.items():
        if not isinstance(items, list):
            raise GradeInputError(f"{path}: {instance_id}: expected a list of variants")
        for index, item in enumerate(items):
            where = f"{path}: {instance_id}[{index}]"
            if not isinstance(item, dict) or not isinstance(item.get("test_patch"), str):
                raise GradeInputError(f"{where}: test_patch is missing")
            name = str(item.get("name") or f"variant-{index + 1}")
            if name in (OFFICIAL,):
                raise GradeInputError(f"{where}: the name {name!r} is reserved")
            out.setdefault(instance_id, []).append(
                SuiteVariant(
                    name=name,
                    test_patch=item["test_patch"],
                    fail_to_pass=_names(item.get("FAIL_TO_PASS"), f"{where}: FAIL_TO_PASS"),
                    pass_to_pass=_names(item.get("PASS_TO_PASS"), f"{where}: PASS_TO_PASS"),
                )
            )
    return out


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GradeInputError(f"{where}: expected a list of test names")
    return tuple(value)


@dataclass(frozen=True)
class GradeOrder:
    """One (task, patch, test suite) run."""

    instance_id: str
    patch_name: str
    variant: str
    request: RunRequested
    prediction: Prediction | None = None  # None: gold


def grade_orders(
    tasks: Sequence[Task],
    predictions: Iterable[Prediction],
    variants: Mapping[str, Sequence[SuiteVariant]],
    *,
    batch: str,
    gold_repeats: int = 1,
) -> list[GradeOrder]:
    """Every prediction of a known task and gold, under the official tests and each variant."""
    by_task: dict[str, list[Prediction]] = {}
    for prediction in predictions:
        by_task.setdefault(prediction.instance_id, []).append(prediction)
    orders: list[GradeOrder] = []
    for task in tasks:
        suites: list[tuple[str, Task]] = [(OFFICIAL, task)]
        suites += [(v.name, v.applied_to(task)) for v in variants.get(task.instance_id, ())]
        patches = [Prediction(task.instance_id, GOLD, task.patch)]
        patches += by_task.get(task.instance_id, [])
        for variant, suite in suites:
            for patch in patches:
                is_gold = patch.name == GOLD
                candidate = Candidate(
                    instance_id=task.instance_id,
                    diff=patch.patch,
                    provenance=Provenance(
                        strategy="gold" if is_gold else "given", detail=patch.name
                    ),
                )
                request = RunRequested(
                    correlation_id=f"grade-{batch}/{task.instance_id}",
                    task=suite,
                    purpose=RunPurpose.GOLD if is_gold else RunPurpose.CANDIDATE,
                    candidate=candidate,
                    repeats=gold_repeats if is_gold else 1,
                    requested_by=REQUESTER,
                )
                given = None if is_gold else patch
                orders.append(GradeOrder(task.instance_id, patch.name, variant, request, given))
    return orders


@dataclass(frozen=True)
class GradeRow:
    instance_id: str
    patch_name: str
    variant: str
    outcome: str  # resolved | rejected | <run status> | no answer
    failing: tuple[str, ...] = ()
    reason: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "patch": self.patch_name,
            "variant": self.variant,
            "outcome": self.outcome,
            "failing": list(self.failing),
            "reason": self.reason,
        }


def outcome_of(task: Task, results: Sequence[RunResult]) -> tuple[str, tuple[str, ...], str]:
    """`resolved` only when every run resolved; otherwise why not, and the graded tests failing."""
    for result in results:
        if result.status is not RunStatus.COMPLETED:
            return result.status.value, (), result.reason
    graded = (*task.fail_to_pass, *task.pass_to_pass)
    if all(r.resolved for r in results):
        return "resolved", (), ""
    failing = tuple(
        t for t in graded if any(r.tests.get(t) is not TestStatus.PASSED for r in results)
    )
    return "rejected", failing, ""


def grade_rows(orders: Sequence[GradeOrder], results: Mapping[str, RunCompleted]) -> list[GradeRow]:
    rows = []
    for order in orders:
        done = results.get(order.request.idempotency_key)
        if done is None:
            rows.append(GradeRow(order.instance_id, order.patch_name, order.variant, "no answer"))
            continue
        outcome, failing, reason = outcome_of(order.request.task, done.results)
        rows.append(
            GradeRow(order.instance_id, order.patch_name, order.variant, outcome, failing, reason)
        )
    return rows


@dataclass(frozen=True)
class Finding:
    """A patch the official tests reward and a variant rejects, where gold passes that variant."""

    instance_id: str
    patch_name: str
    variant: str


def wrong_but_rewarded(rows: Sequence[GradeRow]) -> tuple[list[Finding], list[tuple[str, str]]]:
    """The findings, and the (task, variant) pairs not used because gold is not resolved there."""
    outcome = {(r.instance_id, r.patch_name, r.variant): r.outcome for r in rows}
    unusable = sorted(
        {
            (r.instance_id, r.variant)
            for r in rows
            if r.patch_name == GOLD and r.outcome != "resolved"
        }
    )
    findings = []
    for row in rows:
        if row.patch_name == GOLD or row.variant == OFFICIAL or row.outcome != "rejected":
            continue
        if (row.instance_id, row.variant) in unusable:
            continue
        if outcome.get((row.instance_id, row.patch_name, OFFICIAL)) == "resolved":
            findings.append(Finding(row.instance_id, row.patch_name, row.variant))
    return findings, unusable


# --- the SWE-bench harness's report files ----------------------------------------------------

HARNESS_SCHEMA_VERSION = 2
HARNESS_LOG_DIR = Path("logs/run_evaluation")
_PASSED = {TestStatus.PASSED, TestStatus.XFAIL}


@dataclass(frozen=True)
class HarnessReports:
    """One model's reports as the harness writes them: the run report (`<model>.<run_id>.json`)
    and, per instance, either `report.json` (the tests ran) or a `run_instance.log` saying why
    the instance could not be evaluated (the harness writes no report then)."""

    model: str
    run_report: dict[str, Any]
    instance_reports: dict[str, dict[str, Any]]
    instance_errors: dict[str, str]

    @property
    def folder_name(self) -> str:
        return self.model.replace("/", "__")


def _tests_status(task: Task, result: RunResult) -> dict[str, dict[str, list[str]]]:
    """The harness's PASS_AND_FAIL grading of one run: a FAIL_TO_PASS test succeeds when it
    passed (or xfailed); a PASS_TO_PASS test also when it was skipped; a test absent from the
    log fails. The *_TO_FAIL lists are empty, as the harness leaves them by default."""

    def split(tests: Sequence[str], ok: set[TestStatus]) -> dict[str, list[str]]:
        success = [t for t in tests if result.tests.get(t) in ok]
        return {"success": success, "failure": [t for t in tests if t not in success]}

    return {
        "FAIL_TO_PASS": split(task.fail_to_pass, _PASSED),
        "PASS_TO_PASS": split(task.pass_to_pass, _PASSED | {TestStatus.SKIPPED}),
        "FAIL_TO_FAIL": {"success": [], "failure": []},
        "PASS_TO_FAIL": {"success": [], "failure": []},
    }


def harness_reports(
    tasks: Sequence[Task],
    orders: Sequence[GradeOrder],
    results: Mapping[str, RunCompleted],
    run_id: str,
) -> list[HarnessReports]:
    """Per model of the predictions, the harness's reports of the official suite's runs.

    As in the harness: an empty or null patch is not evaluated (`empty_patch_ids`, no report);
    a patch that does not apply, a run that timed out or hit an infrastructure fault, or an
    instance that was not run, is an error (`error_ids`, no report; an infrastructure fault is
    also in `infra_failure_ids` with its reason); the others are completed, resolved or not as
    hackaudit's sandbox graded them. A task without this model's prediction is incomplete.
    """
    official: dict[tuple[str, str], GradeOrder] = {}
    for order in orders:
        if order.variant == OFFICIAL and order.prediction is not None:
            official[(order.prediction.model, order.instance_id)] = order
    by_model: dict[str, dict[str, Prediction]] = {}
    for order in official.values():
        assert order.prediction is not None
        by_model.setdefault(order.prediction.model, {})[order.instance_id] = order.prediction
    task_ids = [t.instance_id for t in tasks]
    by_id = {t.instance_id: t for t in tasks}
    out = []
    for model, predictions in sorted(by_model.items()):
        ids: dict[str, set[str]] = {
            name: set() for name in ("completed", "resolved", "unresolved", "empty_patch",
                                     "error", "incomplete", "infra_failure")
        }  # fmt: skip
        reasons: dict[str, str] = {}
        reports: dict[str, dict[str, Any]] = {}
        errors: dict[str, str] = {}
        for instance_id in task_ids:
            prediction = predictions.get(instance_id)
            if prediction is None:
                ids["incomplete"].add(instance_id)
                continue
            if not prediction.patch:
                ids["empty_patch"].add(instance_id)
                continue
            done = results.get(official[(model, instance_id)].request.idempotency_key)
            result = done.results[0] if done is not None and done.results else None
            if result is None or result.status is not RunStatus.COMPLETED:
                ids["error"].add(instance_id)
                why = "no answer from the sandbox" if result is None else result.status.value
                errors[instance_id] = why + (
                    f": {result.reason}" if result and result.reason else ""
                )
                if result is not None and result.status is RunStatus.INFRA_ERROR:
                    ids["infra_failure"].add(instance_id)
                    reasons[instance_id] = result.reason
                continue
            resolved = bool(result.resolved)
            ids["completed"].add(instance_id)
            ids["resolved" if resolved else "unresolved"].add(instance_id)
            reports[instance_id] = {
                instance_id: {
                    "patch_is_None": prediction.patch_is_none,
                    "patch_exists": not prediction.patch_is_none,
                    "patch_successfully_applied": True,
                    "resolved": resolved,
                    "infra_failure": False,
                    "tests_status": _tests_status(by_id[instance_id], result),
                }
            }
        run_report = {
            "total_instances": len(task_ids),
            "submitted_instances": len(predictions),
            "completed_instances": len(ids["completed"]),
            "resolved_instances": len(ids["resolved"]),
            "unresolved_instances": len(ids["unresolved"]),
            "infra_failure_instances": len(ids["infra_failure"]),
            "ambiguous_failure_instances": 0,
            "empty_patch_instances": len(ids["empty_patch"]),
            "error_instances": len(ids["error"]),
            "completed_ids": sorted(ids["completed"]),
            "incomplete_ids": sorted(ids["incomplete"]),
            "empty_patch_ids": sorted(ids["empty_patch"]),
            "submitted_ids": sorted(predictions),
            "resolved_ids": sorted(ids["resolved"]),
            "unresolved_ids": sorted(ids["unresolved"]),
            "infra_failure_ids": sorted(ids["infra_failure"]),
            "ambiguous_failure_ids": [],
            "failure_reasons": dict(sorted(reasons.items())),
            "error_ids": sorted(ids["error"]),
            "schema_version": HARNESS_SCHEMA_VERSION,
        }
        out.append(HarnessReports(model, run_report, reports, errors))
    return out


def write_harness_reports(
    folder: Path, run_id: str, reports: Sequence[HarnessReports]
) -> list[Path]:
    """Writes each model's run report to `<folder>/<model>.<run_id>.json` and its instances'
    files under `<folder>/logs/run_evaluation/<run_id>/<model>/<instance_id>/`; the run reports'
    paths. A model's name has `/` replaced by `__`, as the harness does."""
    written = []
    for report in reports:
        logs = folder / HARNESS_LOG_DIR / run_id / report.folder_name
        for instance_id, content in report.instance_reports.items():
            (logs / instance_id).mkdir(parents=True, exist_ok=True)
            (logs / instance_id / "report.json").write_text(json.dumps(content, indent=4))
        for instance_id, why in report.instance_errors.items():
            (logs / instance_id).mkdir(parents=True, exist_ok=True)
            (logs / instance_id / "run_instance.log").write_text(f"{why}\n")
            (logs / instance_id / "report.json").unlink(missing_ok=True)  # of an earlier run
        path = folder / f"{report.folder_name}.{run_id}.json"
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report.run_report, indent=4) + "\n")
        written.append(path)
    return written
