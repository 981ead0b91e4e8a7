from datetime import date, datetime

import pytest

from spanlib import DateInterval, InvalidInterval


def d(text):
    return date.fromisoformat(text)


class TestConstruction:
    def test_from_dates(self):
        iv = DateInterval(d("2024-03-01"), d("2024-03-08"))
        assert iv.start == d("2024-03-01")
        assert iv.end == d("2024-03-08")
        assert iv.days == 7

    def test_from_strings(self):
        assert DateInterval("2024-03-01", "2024-03-08") == DateInterval(
            d("2024-03-01"), d("2024-03-08")
        )

    def test_from_days(self):
        assert DateInterval.from_days("2024-02-27", 4) == DateInterval("2024-02-27", "2024-03-02")

    def test_empty(self):
        iv = DateInterval("2024-01-01", "2024-01-01")
        assert iv.is_empty
        assert iv.days == 0
        assert iv.last_day is None

    def test_end_before_start(self):
        with pytest.raises(InvalidInterval, match="before start"):
            DateInterval("2024-01-02", "2024-01-01")

    def test_negative_length(self):
        with pytest.raises(InvalidInterval):
            DateInterval.from_days("2024-01-02", -1)

    @pytest.mark.parametrize("bad", ["2024-13-01", "yesterday", "2024/01/01"])
    def test_bad_strings(self, bad):
        with pytest.raises(InvalidInterval):
            DateInterval(bad, "2025-01-01")

    def test_datetimes_are_refused(self):
        with pytest.raises(TypeError, match="datetime"):
            DateInterval(datetime(2024, 1, 1), d("2024-01-02"))

    def test_other_types_are_refused(self):
        with pytest.raises(TypeError):
            DateInterval(20240101, d("2024-01-02"))


class TestQueries:
    iv = DateInterval("2024-03-10", "2024-03-13")

    @pytest.mark.parametrize(
        ("day", "inside"),
        [("2024-03-09", False), ("2024-03-10", True), ("2024-03-12", True), ("2024-03-13", False)],
    )
    def test_contains(self, day, inside):
        assert (day in self.iv) is inside

    def test_last_day(self):
        assert self.iv.last_day == d("2024-03-12")

    def test_iter_days(self):
        assert [day.day for day in self.iv.iter_days()] == [10, 11, 12]

    @pytest.mark.parametrize(
        ("other", "overlaps", "adjacent"),
        [
            (("2024-03-01", "2024-03-10"), False, True),
            (("2024-03-01", "2024-03-11"), True, False),
            (("2024-03-11", "2024-03-12"), True, False),
            (("2024-03-12", "2024-04-01"), True, False),
            (("2024-03-13", "2024-04-01"), False, True),
            (("2024-03-20", "2024-04-01"), False, False),
        ],
    )
    def test_overlaps_and_adjacent(self, other, overlaps, adjacent):
        other = DateInterval(*other)
        assert self.iv.overlaps(other) is overlaps
        assert other.overlaps(self.iv) is overlaps
        assert self.iv.adjacent(other) is adjacent


class TestCombination:
    def test_intersection_of_overlapping(self):
        a = DateInterval("2024-01-01", "2024-01-20")
        b = DateInterval("2024-01-15", "2024-02-01")
        assert a.intersection(b) == DateInterval("2024-01-15", "2024-01-20")

    def test_intersection_with_contained(self):
        outer = DateInterval("2024-01-01", "2024-12-31")
        inner = DateInterval("2024-05-01", "2024-05-02")
        assert outer.intersection(inner) == inner
        assert inner.intersection(outer) == inner

    def test_union(self):
        a = DateInterval("2024-01-01", "2024-01-10")
        b = DateInterval("2024-01-10", "2024-01-12")
        assert a.union(b) == DateInterval("2024-01-01", "2024-01-12")

    def test_union_with_gap(self):
        a = DateInterval("2024-01-01", "2024-01-10")
        b = DateInterval("2024-01-11", "2024-01-12")
        with pytest.raises(InvalidInterval, match="gap"):
            a.union(b)

    def test_shift(self):
        iv = DateInterval("2024-02-28", "2024-03-01")
        assert iv.shift(1) == DateInterval("2024-02-29", "2024-03-02")
        assert iv.shift(-28) == DateInterval("2024-01-31", "2024-02-02")


class TestValueBehaviour:
    def test_equality_and_hash(self):
        a = DateInterval("2024-01-01", "2024-01-02")
        b = DateInterval(d("2024-01-01"), d("2024-01-02"))
        assert a == b
        assert len({a, b}) == 1
        assert a != "2024-01-01/2024-01-02"

    def test_ordering(self):
        ivs = [
            DateInterval("2024-02-01", "2024-02-03"),
            DateInterval("2024-01-01", "2024-01-09"),
            DateInterval("2024-01-01", "2024-01-05"),
        ]
        assert [str(iv) for iv in sorted(ivs)] == [
            "2024-01-01/2024-01-05",
            "2024-01-01/2024-01-09",
            "2024-02-01/2024-02-03",
        ]

    def test_str_and_repr(self):
        iv = DateInterval("2024-01-01", "2024-01-02")
        assert str(iv) == "2024-01-01/2024-01-02"
        assert repr(iv) == "DateInterval('2024-01-01', '2024-01-02')"
