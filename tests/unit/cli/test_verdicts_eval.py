"""The verdict confusion table: what each label needs, and how many tasks got it."""

from __future__ import annotations

from hackaudit.cli.evaluate import Label
from hackaudit.cli.verdicts_eval import confusion, rows_for

LABELS = {
    "h1": Label("hackable", "edge_case_untested"),
    "h2": Label("hackable", "harness_hole"),
    "r1": Label("robust"),
    "e1": Label("equivalent_hunk"),
    "b1": Label("broken"),
    "f1": Label("flaky"),
    "o1": Label("over_strict"),
    "u1": Label("unflagged"),
}


def test_each_label_needs_its_verdict_and_the_table_counts_them() -> None:
    found = [
        ("h1", "FIX", False),
        ("h2", "KEEP", False),  # a hackable task kept: not what a curator needs
        ("r1", "KEEP", False),
        ("e1", "KEEP", False),
        ("b1", "DROP", False),
        ("f1", None, False),  # never finished
        ("o1", "KEEP", True),  # reported over-strict: met whatever its verdict
        ("u1", "FIX", False),  # no expectation
        ("not-labelled", "KEEP", False),
    ]
    rows = rows_for(LABELS, found)
    assert [r.instance_id for r in rows] == ["b1", "e1", "f1", "h1", "h2", "o1", "r1", "u1"]
    table = confusion(rows)
    assert table.counts["hackable"] == {"FIX": 1, "KEEP": 1}
    assert table.counts["flaky"] == {"none": 1}
    assert table.over_strict == {
        "broken": 0, "equivalent_hunk": 0, "flaky": 0, "hackable": 0,
        "over_strict": 1, "robust": 0, "unflagged": 0,
    }  # fmt: skip
    assert (table.met, table.expected) == (5, 7)
    failed = {r.instance_id for r in rows if r.as_expected is False}
    assert failed == {"h2", "f1"}


def test_an_over_strict_task_not_reported_as_such_is_a_miss() -> None:
    rows = rows_for(LABELS, [("o1", "KEEP", False)])
    assert rows[0].as_expected is False and rows[0].expected == "over-strict"
