"""A probe module run for real: a small repository written out, the probe (its replay section)
beside it, run under this interpreter's unittest and read back through the sandbox's own
unittest log parser, as the sandbox would grade it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from hackaudit.attacker.domain.confirm import probes, replay
from hackaudit.attacker.domain.confirm.replay import ReplayTarget
from hackaudit.attacker.domain.confirm.replay_source import render_replay
from hackaudit.sandbox.domain.log_parsers.unittest import parse_unittest
from hackaudit.shared.contracts import RunResult, RunStatus


def write_files(root: Path, files: Mapping[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def run_probe(
    root: Path,
    files: Mapping[str, str],
    section: str,
    cases: Sequence[probes.ProbeCase] = (),
) -> RunResult:
    """The files under `root`, then the probe with these cases and `section` as its replay, run
    once."""
    write_files(root, files)
    return run_added_module(root, probes.PROBE_PATH, probes.source(cases, section))


def run_added_module(root: Path, path: str, text: str) -> RunResult:
    """The module `text` written to `path` under `root` and run once, as the sandbox runs an
    added module: `python -m unittest -v`, hash randomisation off, its log read back."""
    (root / path).write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", path.removesuffix(".py").replace("/", ".")],
        cwd=root, env={**os.environ, "PYTHONHASHSEED": "0"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return RunResult(status=RunStatus.COMPLETED, tests=parse_unittest(done.stderr))


def replay_run(root: Path, files: Mapping[str, str], target: ReplayTarget) -> RunResult:
    """The files under `root` with the replay of `target`'s tests as the probe, run once."""
    section = render_replay([(target.path, target.module, target.functions)], {})
    return run_probe(root, files, section)


def replay_differences(
    target: ReplayTarget, gold: RunResult, candidate: RunResult
) -> set[tuple[str, str, str]]:
    """(expression, gold's outcome, the candidate's) of each replayed observation that differs,
    gold's run counted twice (stable)."""
    _, out = replay.differences([target], [gold, gold], candidate)
    return {(d.expression, d.gold, d.candidate) for d in out}
