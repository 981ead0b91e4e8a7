"""A package that takes longer to import than one probe case may run (a large package on a
loaded machine) is imported before any case's timer starts: a timer firing inside the import would
leave it half-imported, and every case and replayed test after it would fail alike."""

from __future__ import annotations

import os
import subprocess
import sys

from hackaudit.attacker.domain.confirm import probes
from hackaudit.attacker.domain.confirm.probe_source import PROBE_PATH
from hackaudit.sandbox.domain.log_parsers.unittest import parse_unittest
from hackaudit.shared.contracts import RunResult, RunStatus

SLOW_INIT = """
import time

time.sleep(2.5)  # longer than one case's limit (CASE_LIMIT_S)

from .core import twice
"""


def test_a_slow_import_does_not_spend_the_first_cases_time(tmp_path) -> None:
    (tmp_path / "slowpkg").mkdir()
    (tmp_path / "slowpkg" / "__init__.py").write_text(SLOW_INIT)
    (tmp_path / "slowpkg" / "core.py").write_text("def twice(x):\n    return 2 * x\n")
    cases = [
        probes.ProbeCase(modules=("slowpkg",), function="twice", args=(3,)),
        probes.ProbeCase(modules=("slowpkg",), function="twice", args=(4,)),
    ]
    (tmp_path / PROBE_PATH).write_text(probes.source(cases))
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "test_hackaudit_probe"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = RunResult(status=RunStatus.COMPLETED, tests=parse_unittest(done.stderr))
    outputs = probes.outputs(result)
    assert [outputs[i].head for i in (0, 1)] == ["returns_6", "returns_8"], outputs
