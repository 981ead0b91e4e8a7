"""An error stays one line on a piped stderr however long it is: a log or CI greps for it, and
rich would otherwise wrap it at 80 columns there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RUN = "from hackaudit.cli.main import run; run()"


def test_a_long_error_is_one_line_on_a_piped_stderr(tmp_path: Path) -> None:
    missing = tmp_path / ("a-rather-long-folder-name-" * 6) / "tasks.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-c", RUN, "eval", "verdicts", str(missing.parent)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(missing.parent / "report.json") in lines[0] and len(lines[0]) > 160
    assert done.returncode == 2


def test_a_long_progress_line_is_one_line_in_a_log() -> None:
    # the audit's plain progress (a log file or CI): a KEEP's caveats make lines of 150+ columns
    program = (
        "from hackaudit.cli import pipeline\n"
        "pipeline.err.print('[2:33] scored lib-1: KEEP (EQS 1.000) — not verified: ' + "
        "'2 accepted candidates unconfirmed, ' * 5, highlight=False, markup=False)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("[2:33] scored lib-1") and len(line) > 200
