"""The calc task used by the sandbox's Docker tests: its repository, patches and helpers."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared.contracts import Candidate, CandidateKind, Task

COMMIT_ENV = (
    "GIT_AUTHOR_DATE='2026-01-01T00:00:00+0000' GIT_COMMITTER_DATE='2026-01-01T00:00:00+0000' "
    "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid "
    "GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid"
)

CALC_OPS = '''"""Arithmetic with a bug in add."""


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
'''

CALC_TESTS = """import unittest

from calc.ops import add, mul


class OpsTest(unittest.TestCase):
    def test_mul(self):
        self.assertEqual(mul(3, 4), 12)

    def test_mul_zero(self):
        self.assertEqual(mul(3, 0), 0)
"""

CALC_FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": CALC_OPS,
    "tests/__init__.py": "",
    "tests/test_ops.py": CALC_TESTS,
    "setup.cfg": "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -p no:cacheprovider\n",
    "README.md": "calc\n",
}

GOLD_PATCH = """diff --git a/calc/ops.py b/calc/ops.py
--- a/calc/ops.py
+++ b/calc/ops.py
@@ -2,7 +2,7 @@


 def add(a, b):
-    return a - b
+    return a + b


 def mul(a, b):
"""

TEST_PATCH = """diff --git a/tests/test_ops.py b/tests/test_ops.py
--- a/tests/test_ops.py
+++ b/tests/test_ops.py
@@ -9,3 +9,9 @@ class OpsTest(unittest.TestCase):

     def test_mul_zero(self):
         self.assertEqual(mul(3, 0), 0)
+
+    def test_add(self):
+        self.assertEqual(add(2, 3), 5)
+
+    def test_add_negative(self):
+        self.assertEqual(add(-2, -3), -5)
"""

DOCKERFILE = """FROM {base}
USER root
COPY wheels /tmp/wheels
RUN python3 -m venv /opt/venv \\
 && /opt/venv/bin/pip install -q --no-index --find-links /tmp/wheels pytest \\
 && rm -rf /tmp/wheels
ENV PATH=/opt/venv/bin:$PATH
COPY testbed /testbed
RUN cd /testbed && ln -s /etc link_out && git init -q -b main && git add -A \\
 && {commit_env} git -c commit.gpgsign=false commit -q -m base \\
 && chown -R {owner} /testbed
{extra}
USER {user}
WORKDIR /testbed
"""

CONDA_EXTRA = """RUN mkdir -p /opt/miniconda3/bin && printf '%s\\n' \\
  'conda() { if [ "$1" = activate ]; then export CONDA_DEFAULT_ENV="$2"; fi; }' \\
  > /opt/miniconda3/bin/activate
"""


@dataclass(frozen=True)
class TaskImage:
    tag: str
    base_commit: str


def calc_task(image: TaskImage, **overrides: object) -> Task:
    """The calc task: gold fixes `add`; the test patch adds two tests of `add`."""
    fields: dict[str, object] = {
        "instance_id": "calc__calc-1",
        "repo": "example/calc",
        "base_commit": image.base_commit,
        "patch": GOLD_PATCH,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": [
            "tests/test_ops.py::OpsTest::test_add",
            "tests/test_ops.py::OpsTest::test_add_negative",
        ],
        "PASS_TO_PASS": [
            "tests/test_ops.py::OpsTest::test_mul",
            "tests/test_ops.py::OpsTest::test_mul_zero",
        ],
        "image": image.tag,
    }
    fields.update(overrides)
    return Task.model_validate(fields)


def files_candidate(files: dict[str, str | None], instance_id: str = "calc__calc-1") -> Candidate:
    return Candidate(instance_id=instance_id, kind=CandidateKind.FILES, files=files)


def diff_candidate(diff: str, instance_id: str = "calc__calc-1") -> Candidate:
    return Candidate(instance_id=instance_id, diff=diff)


def ops_with(code: str, fixed: bool = False) -> dict[str, str | None]:
    """A file-mapping candidate replacing calc/ops.py with `code` run at import time."""
    body = CALC_OPS.replace("a - b", "a + b") if fixed else CALC_OPS
    return {"calc/ops.py": f"{code}\n\n{body}"}


def sandbox_settings(tmp: Path, **overrides: object) -> SandboxSettings:
    values: dict[str, object] = {
        "artifacts_dir": tmp / "artifacts",
        "memory_mb": 256,
        "pids_limit": 128,
        "cpus": 1.0,
        "pool_size": 1,
        "max_concurrent_runs": 2,
        "timeout_cap_s": 60.0,
        "setup_timeout_s": 60.0,
        "sweep_on_start": False,
    }
    values.update(overrides)
    return SandboxSettings.model_validate(values)


@asynccontextmanager
async def running(tmp: Path, **overrides: object) -> AsyncIterator[Runner]:
    """A started sandbox runner with `sandbox_settings(tmp, **overrides)`, closed afterwards."""
    runner = bootstrap(sandbox_settings(tmp, **overrides))
    await runner.start()
    try:
        yield runner
    finally:
        await runner.close()


def cli_env(tmp_path: Path) -> dict[str, str]:
    """The CLI's environment for a sandbox test: its own state and artifacts, small runs, wide
    tables, an embedded NATS."""
    env = os.environ | {
        "HACKAUDIT_STATE_DIR": str(tmp_path / "state"),
        "HACKAUDIT_SANDBOX_ARTIFACTS_DIR": str(tmp_path / "artifacts"),
        "HACKAUDIT_SANDBOX_MEMORY_MB": "256",
        "COLUMNS": "400",
    }
    env.pop("NATS_URL", None)
    return env
