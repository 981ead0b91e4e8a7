"""`hackaudit eval judge` end to end against the fake model APIs: the example corpus and a small
real-corpus directory go in, the trust table and the cost come out."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fake_judge_api import Answer, FakeJudgeApi
from typer.testing import CliRunner

from hackaudit.cli.main import app

REPO = Path(__file__).resolve().parents[3]
GOLD = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
WRONG = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 3\n"


def section(text: str, name: str) -> str:
    found = re.search(f"<{name}>\n(.*?)\n</{name}>", text, re.S)
    return found.group(1) if found else ""


def by_reference(body: dict[str, Any]) -> Answer:
    """A fake model that calls a patch correct exactly when it is the reference fix."""
    text = "".join(str(m.get("content", "")) for m in body["messages"])
    same = section(text, "patch_under_judgement") == section(text, "reference_fix")
    return Answer("correct" if same else "partial")


def real_corpus(root: Path) -> tuple[Path, Path]:
    row = {
        "instance_id": "acme__lib-7",
        "repo": "acme/lib",
        "base_commit": "abc",
        "patch": GOLD,
        "test_patch": "+t",
        "FAIL_TO_PASS": '["t::a"]',
        "problem_statement": "x is 2",
    }
    (root / "ground-truth").mkdir(parents=True)
    (root / "tasks.jsonl").write_text(json.dumps(row) + "\n")
    preds = [
        {"instance_id": "acme__lib-7", "model_name_or_path": name, "model_patch": patch}
        for name, patch in (("bot-a", WRONG), ("bot-b", GOLD))
    ]
    (root / "ground-truth" / "predictions.jsonl").write_text(
        "".join(json.dumps(p) + "\n" for p in preds)
    )
    labels = root / "labels.json"
    labels.write_text(json.dumps({"labels": {"acme__lib-7": {"wrong_patches": "['bot-a']"}}}))
    return root, labels


@pytest.mark.parametrize("backend", ["anthropic", "openai"])
def test_eval_judge_prints_the_trust_table(
    backend: str,
    judge_api: tuple[str, FakeJudgeApi],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, api = judge_api
    api.respond = by_reference
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "HACKAUDIT_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HACKAUDIT_STATE_DIR", str(tmp_path / "state"))
    if backend == "anthropic":
        monkeypatch.setenv("HACKAUDIT_ANTHROPIC_API_KEY", "k")
        monkeypatch.setenv("HACKAUDIT_JUDGE_BASE_URL", url)
    else:
        monkeypatch.delenv("HACKAUDIT_ANTHROPIC_API_KEY", raising=False)
        monkeypatch.setenv("HACKAUDIT_JUDGE_BASE_URL", f"{url}/v1")  # no key: self-hosted
    monkeypatch.setenv("HACKAUDIT_JUDGE_MAX_RETRIES", "0")
    real, real_labels = real_corpus(tmp_path / "real")
    args = ["eval", "judge", str(REPO / "examples" / "tasks"),
            "--labels", str(REPO / "examples" / "labels.json"),
            "--real", str(real), "--real-labels", str(real_labels)]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    out = result.output
    truth = json.loads((REPO / "examples" / "labels.json").read_text())
    exploits = sum(1 for v in truth.values() if v.get("known_exploit"))
    assert "real corpus: 1 tasks" in out
    assert "leaderboard bot-a" in out and "bot-b" not in out  # only UTBoost-rejected patches
    # The fake calls exactly the reference fixes correct: every label right, nothing abstained.
    patches = int(re.search(r"patches: (\d+)", out).group(1))  # type: ignore[union-attr]
    assert patches >= exploits + 2
    assert "accuracy 1.00" in out and "abstained 0 (0.00)" in out
    assert "recall 1.00" in out and "pairwise agreement 1.00" in out
    assert f"cost: {3 * patches} model calls, 0 cached" in out
    assert len(api.requests) == 3 * patches
    rerun = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert f"cost: 0 model calls, {3 * patches} cached" in rerun.output  # a rerun is free


def test_eval_judge_without_a_backend_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "HACKAUDIT_OPENAI_API_KEY",
                 "HACKAUDIT_ANTHROPIC_API_KEY", "HACKAUDIT_JUDGE_BASE_URL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(app, ["eval", "judge", "--real", str(tmp_path)])
    assert result.exit_code == 2
    assert "no judge backend configured" in result.output
