import pytest

from mdtable import Table


class TestConstruction:
    def test_headers_and_rows(self):
        t = Table(["a", "b"], [[1, 2], ["x", None]])
        assert t.headers == ["a", "b"]
        assert t.rows == [["1", "2"], ["x", ""]]
        assert len(t) == 2

    def test_default_alignment(self):
        assert Table(["a", "b"]).align == [None, None]

    def test_short_rows_are_filled(self):
        t = Table(["a", "b", "c"])
        t.add_row(["only"])
        assert t.rows == [["only", "", ""]]

    def test_long_rows_are_refused(self):
        with pytest.raises(ValueError, match="3 cells"):
            Table(["a", "b"]).add_row([1, 2, 3])

    def test_newlines_become_spaces(self):
        t = Table(["note"], [["first\nsecond\r\nthird"]])
        assert t.rows == [["first second third"]]

    def test_no_columns(self):
        with pytest.raises(ValueError):
            Table([])

    @pytest.mark.parametrize("align", [["left"], ["left", "middle"]])
    def test_bad_alignment(self, align):
        with pytest.raises(ValueError):
            Table(["a", "b"], align=align)


class TestRecords:
    def test_from_records_collects_columns(self):
        t = Table.from_records([{"name": "ada", "age": 36}, {"name": "alan", "city": "london"}])
        assert t.headers == ["name", "age", "city"]
        assert t.rows == [["ada", "36", ""], ["alan", "", "london"]]

    def test_from_records_with_columns(self):
        t = Table.from_records([{"a": 1, "b": 2}], columns=["b"])
        assert t.headers == ["b"]
        assert t.rows == [["2"]]


class TestColumns:
    def setup_method(self):
        self.t = Table(["name", "qty"], [["pear", "10"], ["fig", "9"], ["apple", "100"]])

    def test_column(self):
        assert self.t.column("qty") == ["10", "9", "100"]

    def test_unknown_column(self):
        with pytest.raises(KeyError):
            self.t.column("price")

    def test_sort_by_text(self):
        assert self.t.sort_by("name").column("name") == ["apple", "fig", "pear"]

    def test_sort_by_number(self):
        self.t.sort_by("qty", key=int, reverse=True)
        assert self.t.column("qty") == ["100", "10", "9"]


def test_equality():
    assert Table(["a"], [[1]]) == Table(["a"], [["1"]])
    assert Table(["a"], [[1]]) != Table(["a"], [[2]])
    assert Table(["a"], align=["left"]) != Table(["a"])


def test_repr():
    assert repr(Table(["a", "b"], [[1, 2]])) == "Table(['a', 'b'], 1 rows)"
