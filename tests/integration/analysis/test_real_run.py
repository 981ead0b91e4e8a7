"""The meta-analysis command on the real shared SWE-bench Verified data (default inputs).

Runs the command exactly as a user would, with the shared data found through
``HACKAUDIT_SHARED_DATA``, and checks that the headline numbers are printed and saved. The
pinned values are those of the shared data set; they do not depend on the permutations.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from hackaudit.analysis.cli import register
from hackaudit.analysis.shared_data import INSTANCE_FLAGS_FILE, SUBMISSIONS_FILE

REPO = Path(__file__).resolve().parents[3]
BAD_SUBMISSION = "20250720_mini-v0.0.0-claude-3-7-sonnet-20250219"
PERMUTATIONS = 200
CI = r"-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]"


@pytest.fixture(scope="module")
def shared_data() -> Path:
    """The shared swebench-verified folder, or skip when this checkout has none."""
    candidates = [
        Path(os.environ.get("HACKAUDIT_SHARED_DATA", REPO / "missing")),
        REPO.parent / "shared" / "data" / "swebench-verified",
        Path("/work/shared/data/swebench-verified"),
    ]
    for folder in candidates:
        if (folder / SUBMISSIONS_FILE).is_file() and (folder / INSTANCE_FLAGS_FILE).is_file():
            return folder
    pytest.skip("shared SWE-bench Verified data folder not found")


@pytest.fixture(scope="module")
def real_run(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, Any]]:
    """Output and results.json of one run with the default inputs."""
    out = tmp_path_factory.mktemp("meta-analysis")
    app = typer.Typer()
    register(app)

    @app.callback()
    def root() -> None:
        """Test root."""

    result = CliRunner().invoke(
        app,
        ["meta-analysis", "--permutations", str(PERMUTATIONS), "--seed", "0", "--out", str(out)],
        env={"HACKAUDIT_SHARED_DATA": str(shared_data)},
    )
    assert result.exit_code == 0, result.output
    return result.output, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_headline_numbers_are_printed(real_run: tuple[str, dict[str, Any]]) -> None:
    output, _ = real_run
    assert re.search(rf"random effects \(DL\) \[95% CI\]\s+│\s+{CI}", output)
    assert re.search(r"I²\s+│\s+\d+\.\d%", output)
    assert re.search(r"sign test \(\+ / − / ties\)\s+│\s+\d+ / \d+ / \d+, one-sided p", output)
    assert re.search(
        rf"stratified permutation p \({PERMUTATIONS}, seed 0\)\s+│\s+0\.\d{{4}}", output
    )


def test_skipped_strata_and_excluded_submissions_are_reported(
    real_run: tuple[str, dict[str, Any]],
) -> None:
    output, results = real_run
    assert "skipped: 1 flagged task(s), fewer than 2" in output  # 1-4 hours
    assert "skipped: 0 flagged task(s), fewer than 2" in output  # >4 hours
    assert BAD_SUBMISSION in output
    used = {s["label"]: s["used"] for s in results["strata"]}
    assert used == {
        "<15 min fix": True,
        "15 min - 1 hour": True,
        "1-4 hours": False,
        ">4 hours": False,
    }
    excluded = {e["submission_id"]: e["reason"] for e in results["excluded"]}
    assert excluded[BAD_SUBMISSION] == "resolved ids disagree with the leaderboard count"


def test_results_json_holds_the_pooled_effect_and_tests(
    real_run: tuple[str, dict[str, Any]],
) -> None:
    _, results = real_run
    pooled, sign, perm = results["pooled"], results["sign"], results["permutation"]
    assert pooled["k"] == 81
    assert pooled["random"]["value"] == pytest.approx(0.1419, abs=5e-4)
    assert pooled["random"]["ci_low"] == pytest.approx(0.1167, abs=5e-4)
    assert pooled["random"]["ci_high"] == pytest.approx(0.1671, abs=5e-4)
    assert pooled["i2"] == pytest.approx(0.5075, abs=5e-4)
    assert (sign["positive"], sign["negative"]) == (71, 10)
    assert sign["p_one_sided"] < 1e-10
    assert perm["permutations"] == PERMUTATIONS
    assert 0 < perm["p_value"] <= 1
    assert perm["p_value"] == pytest.approx((1 + perm["exceedances"]) / (1 + PERMUTATIONS))
    assert perm["observed"] == pytest.approx(pooled["random"]["value"])
