"""The LLM path end to end: the real Anthropic SDK talks to a local fake of the Messages API, and
the model's candidate goes through the real bus and the real sandbox like any other."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.component.attacker.fake_messages_api import Reply, serve
from tests.e2e.conftest import EXAMPLES, hackaudit

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TASK = "urlnorm__urlnorm-2"


def test_model_candidates_are_run_and_graded(
    tmp_path: Path, labels: dict[str, dict[str, object]]
) -> None:
    rows = [
        line
        for line in (EXAMPLES / "tasks" / "urlnorm.jsonl").read_text().splitlines()
        if json.loads(line)["instance_id"] == TASK
    ]
    shutil.copytree(EXAMPLES / "repos", tmp_path / "repos")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "one.jsonl").write_text(rows[0] + "\n")
    wrong_patch = str(labels[TASK]["known_exploit"])  # wrong, yet accepted by the task's tests

    with serve() as (base_url, api):
        api.default = Reply(f"Here is a patch.\n\n```diff\n{wrong_patch}```\n")
        done = hackaudit(
            tmp_path, "audit", str(tmp_path / "tasks"), "--out", str(tmp_path / "report"),
            "-k", "2", "-r", "1",
            env={
                "HACKAUDIT_ANTHROPIC_API_KEY": "sk-test",
                "HACKAUDIT_ANTHROPIC_BASE_URL": base_url,
                "HACKAUDIT_LLM_MODEL": "claude-test",
                "HACKAUDIT_LLM_SHARE": "0.5",
                # no reference mutants: the pool is not what this test is about, and its runs
                # took two thirds of its time (159 s against 55 s)
                "HACKAUDIT_REFERENCE_SAMPLE": "0",
            },
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]

    assert api.requests, "the attacker never called the model"
    prompt = json.dumps(api.requests[0].body)
    assert "claude-test" in prompt
    assert "default port" in prompt.lower() or "port" in prompt  # the problem statement went in

    states = [
        json.loads(p.read_text())
        for p in (tmp_path / "state" / "attacker" / "rounds").glob("*.json")
    ]
    # The first audit's attack; a task repaired after it is re-audited under "<id>/repaired".
    first = [s for s in states if not s["correlation_id"].endswith("/repaired")]
    outcomes = [o for s in first for o in s["outcomes"]]
    from_model = [o for o in outcomes if o["candidate"]["provenance"]["strategy"] == "llm"]
    assert from_model, [o["candidate"]["provenance"]["strategy"] for o in outcomes]
    # the model's patch was applied and graded in the sandbox: the task's tests accept it
    assert from_model[0]["resolved"] is True
    assert from_model[0]["verdict"] in {"exploit", "unconfirmed"}
