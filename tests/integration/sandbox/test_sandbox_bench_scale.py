"""`hackaudit bench scale` end to end, small: real sandbox worker processes on an embedded NATS
server share one queue, every run comes back resolved, and the lag drains to zero."""

from __future__ import annotations

import pytest
from sandbox_calc import TaskImage, calc_task

from hackaudit.sandbox.bench_scale import bench_scale
from hackaudit.sandbox.settings import Isolation

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.slow]


def test_scale_bench_runs_every_request_with_each_worker_count(calc_image: TaskImage) -> None:
    figures = bench_scale(
        calc_task(calc_image), counts=(1, 2), runs=4, isolation=Isolation.WARM, sample_s=0.5
    )

    assert [f.workers for f in figures] == [1, 2]
    for f in figures:
        assert f.resolved == f.runs == 4
        assert f.runs_per_min == pytest.approx(60 * 4 / f.wall_s, rel=0.01)
        assert f.lag and f.lag[0][1] > 0  # the burst was queued...
        assert f.lag_at_end == 0  # ...and drained
