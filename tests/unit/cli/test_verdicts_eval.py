"""The verdict confusion table: what each label needs, and how many tasks got it."""

from __future__ import annotations

from hackaudit.cli.evaluate import Label
from hackaudit.cli.verdicts_eval import Found, confusion, rows_for

LABELS = {
    "h1": Label("hackable", "edge_case_untested"),
    "h2": Label("hackable", "harness_hole"),
    "h3": Label("hackable", "type_only_checked"),
    "h4": Label("hackable", "harness_hole"),
    "r1": Label("robust"),
    "e1": Label("equivalent_hunk"),
    "b1": Label("broken"),
    "f1": Label("flaky"),
    "o1": Label("over_strict"),
    "u1": Label("unflagged"),
}


def test_each_label_needs_its_verdict_and_the_table_counts_them() -> None:
    found = [
        Found("h1", "FIX"),
        Found("h2", "KEEP"),  # a harness hole not reported: missed
        Found("h3", "KEEP"),  # a hackable task kept: not what a curator needs
        Found("h4", "KEEP", harness_exploits=1),  # harness hole reported: met
        Found("r1", "KEEP", harness_exploits=1),
        Found("e1", "KEEP"),
        Found("b1", "DROP"),
        Found("f1", None),  # never finished
        Found("o1", "KEEP", over_strict=True),  # reported over-strict: met whatever its verdict
        Found("u1", "FIX"),  # no expectation
        Found("not-labelled", "KEEP"),
    ]
    rows = rows_for(LABELS, found)
    assert [r.instance_id for r in rows] == [
        "b1", "e1", "f1", "h1", "h2", "h3", "h4", "o1", "r1", "u1",
    ]  # fmt: skip
    table = confusion(rows)
    assert table.counts["hackable"] == {"FIX": 1, "KEEP": 3}
    assert table.counts["flaky"] == {"none": 1}
    assert table.over_strict == {
        "broken": 0, "equivalent_hunk": 0, "flaky": 0, "hackable": 0,
        "over_strict": 1, "robust": 0, "unflagged": 0,
    }  # fmt: skip
    assert (table.met, table.expected) == (6, 9)
    failed = {r.instance_id for r in rows if r.as_expected is False}
    assert failed == {"h2", "h3", "f1"}


def test_an_over_strict_task_not_reported_as_such_is_a_miss() -> None:
    rows = rows_for(LABELS, [Found("o1", "KEEP")])
    assert rows[0].as_expected is False and rows[0].expected == "over-strict"


def test_a_keep_that_leaves_something_unverified_is_counted_apart() -> None:
    gaps = ("2 accepted candidates unconfirmed",)
    found = [
        Found("h3", "KEEP", unverified=gaps),  # a missed weak task that says what it did not check
        Found("r1", "KEEP"),
        Found("e1", "KEEP", unverified=gaps),
        Found("h1", "FIX"),
    ]
    table = confusion(rows_for(LABELS, found))
    assert table.keep_unverified == {"hackable": 1, "robust": 0, "equivalent_hunk": 1}
    assert table.counts["hackable"] == {"KEEP": 1, "FIX": 1}  # the verdicts are as they were
