"""Every bad input, as a user meets it: the real CLI (the venv's python, stdout and stderr piped)
ends in exactly one line on stderr and the agreed exit code, never a traceback. 2: unusable
input or usage; 1: a fault of the run. The README's "Errors and exit codes" is this table."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

TASKS = Path(__file__).parents[3] / "examples" / "tasks" / "semverlite.jsonl"
RUN = "from hackaudit.cli.main import run; run()"


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Case:
    args: list[str]
    code: int
    said: str  # in the one line on stderr
    files: dict[str, str] = field(default_factory=dict)  # written in the current folder first
    env: Callable[[Path], dict[str, str]] = lambda _: {}


CASES = {
    "-k 0": Case(["audit", str(TASKS), "-k", "0"], 2, "'--candidates' / '-k'"),
    "--rounds 0": Case(["submit", str(TASKS), "--rounds", "0"], 2, "'--rounds' / '-r'"),
    "--log-level NOPE": Case(["--log-level", "NOPE", "status"], 2, "'--log-level'"),
    "unknown option": Case(["status", "--bogus"], 2, "No such option: --bogus"),
    "missing task file": Case(
        ["audit", "no-such.jsonl"], 2, "no valid task in the input: no-such.jsonl: no such file"
    ),
    "no valid task": Case(
        ["submit", "bad.jsonl"], 2, "no valid task in the input: bad.jsonl:line 1 [x]",
        {"bad.jsonl": '{"instance_id": "x"}\n'},
    ),
    "--out a file": Case(
        ["audit", str(TASKS), "--out", "notes.txt"], 2, "--out notes.txt: not a folder",
        {"notes.txt": "mine"},
    ),
    "--out a folder that is not a report": Case(
        ["report", "--out", "."], 2, "holds files but no hackaudit report",
        {"notes.txt": "mine"},
    ),
    "bad hackaudit.toml": Case(
        ["status"], 2, "hackaudit.toml: [bus] nats_ur: no such setting",
        {"hackaudit.toml": "[bus]\nnats_ur = 'x'\n"},
    ),
    "bad HACKAUDIT_* value": Case(
        ["status"], 2, "HACKAUDIT_SANDBOX_MEMORY_MB: Input should be a valid integer",
        env=lambda _: {"HACKAUDIT_SANDBOX_MEMORY_MB": "lots"},
    ),
    "NATS_URL at a dead port": Case(
        ["status"], 1, "cannot reach NATS",
        env=lambda _: {"NATS_URL": f"nats://127.0.0.1:{_dead_port()}"},
    ),
    "bad --pass-at-1 file": Case(
        ["submit", str(TASKS), "--pass-at-1", "p.csv"], 2, "p.csv:line 2",
        {"p.csv": "instance_id,successes,attempts\nx,many,3\n"},
    ),
    "eval verdicts outside the clone": Case(["eval", "verdicts"], 2, "not a hackaudit report"),
    "bench --isolation nope": Case(["bench", "scale", "--isolation", "nope"], 2, "'--isolation'"),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_a_bad_input_is_one_line_and_its_exit_code(case: Case, tmp_path: Path) -> None:
    for name, text in case.files.items():
        (tmp_path / name).write_text(text)
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("HACKAUDIT_") and k not in ("NATS_URL", "COLUMNS")}  # fmt: skip
    env = base | {"HACKAUDIT_STATE_DIR": str(tmp_path / "state")} | case.env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", RUN, *case.args], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr + done.stdout
    assert len(said) == 1, done.stderr
    assert case.said in said[0], said[0]
    assert done.returncode == case.code, done.stderr
