"""Example tasks for the repairer's unit tests, and applying a test patch to their real files."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from hackaudit.shared.contracts import Task

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def example_task(instance_id: str) -> Task:
    repo = instance_id.split("__", 1)[0]
    for line in (EXAMPLES / "tasks" / f"{repo}.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["instance_id"] == instance_id:
            return Task.model_validate(row)
    raise KeyError(instance_id)


@pytest.fixture
def applied(tmp_path: Path) -> Callable[[str, str], Path]:
    """Copy an example repository and `git apply` a patch to it; returns the copy."""

    def apply(repo: str, patch: str) -> Path:
        root = tmp_path / repo
        shutil.copytree(EXAMPLES / "repos" / repo, root)
        (tmp_path / "p.diff").write_text(patch)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        done = subprocess.run(
            ["git", "apply", str(tmp_path / "p.diff")],
            cwd=root, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return root

    return apply
