"""Tells whether repeated runs of the same patch disagree (a flaky test suite)."""

from __future__ import annotations

from collections.abc import Sequence

from hackaudit.shared.contracts import RunResult, RunStatus


def is_flaky(results: Sequence[RunResult], graded: Sequence[str]) -> bool:
    """True when runs disagree on status, resolution or a graded test's status.

    Infrastructure failures say nothing about the tests and are left out.
    """
    considered = [r for r in results if r.status is not RunStatus.INFRA_ERROR]
    signatures = {
        (r.status, r.resolved, tuple(r.tests.get(test) for test in graded)) for r in considered
    }
    return len(signatures) > 1
