"""`hackaudit bench fairness`: the ratio of each fast task's time in the mixed batch to its time
alone, and the table that prints it."""

from __future__ import annotations

import pytest
from rich.console import Console

from hackaudit.cli.commands import bench_fairness
from hackaudit.cli.fairness import FairnessFigures, FairnessRow


@pytest.mark.parametrize(
    ("alone", "batch", "ratio", "within"),
    [
        (20.0, 28.0, 1.4, True),
        (20.0, 30.0, 1.5, True),
        (20.0, 31.0, 1.55, False),
        (20.0, None, None, False),  # no verdict in the batch
        (None, 10.0, None, False),  # no verdict alone
    ],
)
def test_ratio_and_target(
    alone: float | None, batch: float | None, ratio: float | None, within: bool
) -> None:
    row = FairnessRow("t", alone, batch)
    assert row.ratio == (pytest.approx(ratio) if ratio is not None else None)
    assert row.within(1.5) is within


def test_the_table_prints_both_times_the_ratio_and_the_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    console = Console(width=200, record=True)
    monkeypatch.setattr(bench_fairness, "console", console)
    figures = FairnessFigures(
        [FairnessRow("fast-1", 20.0, 26.0, 22.0), FairnessRow("fast-2", 10.0, 40.0, 12.0)],
        batch_wall_s=40.0,
        slow={"slow-1": None},
    )
    bench_fairness.print_figures(figures, 1.5)
    text = console.export_text()
    assert "fast-1" in text and "20.0s" in text and "22.0s" in text and "26.0s" in text
    assert "1.30×" in text and "4.00×" in text
    assert "yes" in text and "NO" in text
    assert "slow-1: no verdict yet" in text
