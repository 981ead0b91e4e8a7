"""The task every fault test audits: the sandbox tests' tiny calc task, repeated under many ids.

A few dozen copies make an audit of a few dozen tasks whose sandbox cost per run is small; with
the fake engine (`fake_sandbox`) the image is never looked at.
"""

from __future__ import annotations

from hackaudit.shared.contracts import AuditOptions, Task, TaskIngested
from tests.integration.sandbox.sandbox_calc import GOLD_PATCH, TaskImage, calc_task

F2P = ["tests/test_ops.py::OpsTest::test_add", "tests/test_ops.py::OpsTest::test_add_negative"]
P2P = ["tests/test_ops.py::OpsTest::test_mul", "tests/test_ops.py::OpsTest::test_mul_zero"]
FAKE_IMAGE = TaskImage(tag="hackaudit-test/fake-calc:none", base_commit="0" * 40)
# The smallest real audit: one gold run, the empty patch, one round of two candidates.
OPTIONS = AuditOptions(candidates_per_round=2, rounds=1, gold_repeats=1)

__all__ = ["F2P", "FAKE_IMAGE", "GOLD_PATCH", "OPTIONS", "P2P", "ingested", "tasks"]


def tasks(count: int, image: TaskImage = FAKE_IMAGE) -> list[Task]:
    return [calc_task(image, instance_id=f"calc__calc-{n}") for n in range(1, count + 1)]


def ingested(audit: str, items: list[Task]) -> list[TaskIngested]:
    return [
        TaskIngested(correlation_id=f"{audit}/{task.instance_id}", task=task, options=OPTIONS)
        for task in items
    ]
