"""The fixture task behaves as a real task: gold resolves, the empty patch does not."""

from __future__ import annotations

import pytest

from hackaudit.shared.contracts import Candidate, RunPurpose, RunRequested


@pytest.mark.parametrize(("diff", "resolved"), [("gold", True), ("", False)])
async def test_gold_resolves_and_empty_patch_does_not(tiny, local_sandbox, diff, resolved) -> None:
    text = tiny.task.patch if diff == "gold" else ""
    request = RunRequested(
        correlation_id="c",
        task=tiny.task,
        purpose=RunPurpose.CANDIDATE,
        candidate=Candidate(instance_id=tiny.task.instance_id, diff=text),
    )
    assert (await local_sandbox.run(request)).result.resolved is resolved
