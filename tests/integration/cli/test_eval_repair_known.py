"""`hackaudit eval repair`'s last step as a user meets it: the given patches of a repaired task
(the labels' known wrong ones, and leaderboard predictions) are graded on its hardened tests in
the real sandbox, with gold beside them, and the lines say which were rejected.

The repaired task here is urlnorm-2 with its own tests standing in for hardened ones: they accept
the label's known wrong patch (the task is hackable), so it is reported still accepted and the
count of rejected wrong patches is 0/1; gold, given as a prediction nobody labelled wrong, stays
accepted. A bad predictions file stops the command before anything starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hackaudit.cli import services
from hackaudit.cli.commands.eval_repair import check_known_patches
from hackaudit.cli.commands.terminal import err
from hackaudit.cli.environments import ensure_images
from hackaudit.cli.grade import Prediction
from hackaudit.cli.repair_figures import RepairRow, known_patches
from hackaudit.shared.contracts import RepairCompleted, TaskScored, Verdict
from hackaudit.shared.ingest import load_tasks
from tests.integration.cli.test_cli_dataset import _docker_or_skip, _env, _example
from tests.integration.cli.test_cli_services import cli

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TASK_ID = "urlnorm__urlnorm-2"


def test_a_bad_predictions_file_stops_eval_repair_naming_the_file_and_row(
    tmp_path: Path,
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(_example(TASK_ID)) + "\n")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"instance_id": TASK_ID, "model_patch": 7}) + "\n")

    done = cli(_env(tmp_path), "eval", "repair", str(tasks), "--predictions", str(predictions))

    assert done.returncode == 2, done.stdout + done.stderr
    text = " ".join(done.stderr.split())
    assert f"{predictions}: row 1 ({TASK_ID}): model_patch is not a string" in text
    assert not (tmp_path / "state").exists()  # nothing was started


@pytest.mark.docker
def test_given_patches_are_graded_on_the_hardened_tests_beside_gold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _docker_or_skip()
    monkeypatch.setenv("HACKAUDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("NATS_URL", raising=False)
    loaded = load_tasks([EXAMPLES / "tasks" / "urlnorm.jsonl"])
    task = next(t for t in loaded.tasks if t.instance_id == TASK_ID)
    ready = ensure_images([task], err)
    assert len(ready.tasks) == 1, "the example image was not built"
    hardened = ready.tasks[0]
    labels = json.loads((EXAMPLES / "labels.json").read_text())
    gold = Prediction(TASK_ID, "gold-as-a-submission", hardened.patch)
    known, missing = known_patches(labels, [gold])
    assert missing == [] and [p.wrong for p in known[TASK_ID]] == [True, False]
    row = RepairRow(
        TASK_ID,
        TaskScored(correlation_id="c", instance_id=TASK_ID, verdict=Verdict.FIX),
        RepairCompleted(correlation_id="c", instance_id=TASK_ID, hardened_task=hardened),
        None,
    )
    builders, _ = services.available()

    check_known_patches([row], known, builders)

    out = " ".join(capsys.readouterr().out.split())
    assert f"{TASK_ID}: known_exploit (known wrong) on the hardened tests: still accepted" in out
    assert "known wrong patches rejected after repair: 0/1" in out
    assert (
        f"{TASK_ID}: gold-as-a-submission (not known wrong) on the hardened tests: still accepted"
        in out
    )
    assert "other given patches still accepted after repair: 1/1" in out
