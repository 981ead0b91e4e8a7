from textwrap import dedent

from mdtable import Table, render


def md(text):
    return dedent(text).lstrip("\n")


def test_basic():
    t = Table(["name", "qty"], [["apples", 3], ["kiwis", 12]], align=["left", "right"])
    assert render(t) == md(
        """
        | name   | qty |
        | :----- | --: |
        | apples |   3 |
        | kiwis  |  12 |
        """
    )


def test_minimum_width_fits_markers():
    t = Table(["a", "b", "c"], [["1", "2", "3"]], align=["left", "center", None])
    assert render(t) == md(
        """
        | a   | b   | c   |
        | :-- | :-: | --- |
        | 1   |  2  | 3   |
        """
    )


def test_wide_characters_line_up():
    t = Table(["word", "n"], [["\u65e5\u672c\u8a9e", "1"], ["abc", "22"]])
    assert render(t) == md(
        """
        | word   | n   |
        | ------ | --- |
        | \u65e5\u672c\u8a9e | 1   |
        | abc    | 22  |
        """
    )


def test_header_only():
    assert render(Table(["solo"])) == "| solo |\n| ---- |\n"


def test_compact():
    t = Table(["name", "qty"], [["apples", 3]], align=["left", "right"])
    assert render(t, compact=True) == "| name | qty |\n|:--|--:|\n| apples | 3 |\n"


def test_empty_cells():
    t = Table(["a", "b"], [["", "x"]])
    assert render(t).splitlines()[2] == "|     | x   |"
