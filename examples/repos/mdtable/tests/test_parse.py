import pytest

from mdtable import Table, TableSyntaxError, parse, render

TEXT = """\
Some notes before the table.

| name   | qty |
| :----- | --: |
| apples |   3 |
| kiwis  |  12 |

Text after the table.
"""


def test_parse():
    t = parse(TEXT)
    assert t.headers == ["name", "qty"]
    assert t.align == ["left", "right"]
    assert t.rows == [["apples", "3"], ["kiwis", "12"]]


def test_outer_pipes_are_optional():
    t = parse("a | b\n--- | :-:\n1 | 2\n")
    assert t.headers == ["a", "b"]
    assert t.align == [None, "center"]
    assert t.rows == [["1", "2"]]


def test_short_rows_are_filled():
    assert parse("| a | b |\n|---|---|\n| 1 |\n").rows == [["1", ""]]


@pytest.mark.parametrize(
    "table",
    [
        Table(["x"], [["1"]]),
        Table(["name", "qty"], [["apples", "3"]], align=["left", "right"]),
        Table(["a", "b", "c"], [["", "2", ""], ["x y", "", "z"]], align=["center", None, "left"]),
    ],
)
def test_round_trip(table):
    assert parse(render(table)) == table
    assert parse(render(table, compact=True)) == table


class TestErrors:
    def test_no_table(self):
        with pytest.raises(TableSyntaxError, match="no table"):
            parse("just text\n")

    def test_missing_separator(self):
        with pytest.raises(TableSyntaxError) as info:
            parse("| a |\n")
        assert info.value.lineno == 2

    def test_bad_separator(self):
        with pytest.raises(TableSyntaxError, match="not a separator"):
            parse("| a |\n| x |\n")

    def test_separator_width(self):
        with pytest.raises(TableSyntaxError, match="separator has 1 cells"):
            parse("| a | b |\n| --- |\n")

    def test_long_row(self):
        with pytest.raises(TableSyntaxError) as info:
            parse("| a |\n| --- |\n| 1 | 2 |\n")
        assert info.value.lineno == 3
