import pytest

from spanlib import DateInterval, IntervalSet


def S(*pairs):
    return IntervalSet(DateInterval(a, b) for a, b in pairs)


def pairs(interval_set):
    return [(str(iv.start), str(iv.end)) for iv in interval_set]


class TestNormalisation:
    def test_sorts(self):
        s = S(("2024-03-01", "2024-03-02"), ("2024-01-01", "2024-01-02"))
        assert pairs(s) == [("2024-01-01", "2024-01-02"), ("2024-03-01", "2024-03-02")]

    def test_merges_overlapping(self):
        s = S(("2024-01-01", "2024-01-10"), ("2024-01-05", "2024-01-20"))
        assert pairs(s) == [("2024-01-01", "2024-01-20")]

    def test_merges_adjacent(self):
        s = S(("2024-01-01", "2024-01-10"), ("2024-01-10", "2024-01-12"))
        assert pairs(s) == [("2024-01-01", "2024-01-12")]

    def test_merges_contained(self):
        s = S(("2024-01-01", "2024-01-31"), ("2024-01-05", "2024-01-06"))
        assert pairs(s) == [("2024-01-01", "2024-01-31")]

    def test_drops_empty(self):
        assert not S(("2024-01-01", "2024-01-01"))

    def test_rejects_other_items(self):
        with pytest.raises(TypeError):
            IntervalSet(["2024-01-01/2024-01-02"])


class TestQueries:
    s = S(("2024-01-01", "2024-01-05"), ("2024-01-10", "2024-01-12"))

    def test_total_days(self):
        assert self.s.total_days == 6

    def test_contains(self):
        assert "2024-01-04" in self.s
        assert "2024-01-05" not in self.s
        assert "2024-01-11" in self.s

    def test_span(self):
        assert self.s.span == DateInterval("2024-01-01", "2024-01-12")
        assert IntervalSet().span is None

    def test_gaps(self):
        assert self.s.gaps() == [DateInterval("2024-01-05", "2024-01-10")]

    def test_len_and_iter(self):
        assert len(self.s) == 2
        assert list(self.s) == list(self.s.intervals)


class TestAlgebra:
    def test_union(self):
        a = S(("2024-01-01", "2024-01-05"))
        b = S(("2024-01-03", "2024-01-09"), ("2024-02-01", "2024-02-02"))
        assert pairs(a | b) == [("2024-01-01", "2024-01-09"), ("2024-02-01", "2024-02-02")]

    def test_intersection(self):
        a = S(("2024-01-01", "2024-01-10"), ("2024-01-20", "2024-01-25"))
        b = S(("2024-01-05", "2024-01-22"))
        assert pairs(a & b) == [("2024-01-05", "2024-01-10"), ("2024-01-20", "2024-01-22")]

    def test_intersection_of_disjoint_sets(self):
        a = S(("2024-01-01", "2024-01-10"))
        b = S(("2024-01-10", "2024-01-22"))
        assert not (a & b)

    def test_subtract_nothing(self):
        a = S(("2024-01-01", "2024-01-10"))
        assert a - IntervalSet() == a

    def test_subtract_disjoint(self):
        a = S(("2024-01-01", "2024-01-10"))
        assert a - S(("2024-02-01", "2024-02-10")) == a

    def test_subtract_head(self):
        a = S(("2024-01-01", "2024-01-10"))
        assert pairs(a - S(("2023-12-25", "2024-01-03"))) == [("2024-01-03", "2024-01-10")]

    def test_subtract_tail(self):
        a = S(("2024-01-01", "2024-01-10"))
        assert pairs(a - S(("2024-01-08", "2024-01-15"))) == [("2024-01-01", "2024-01-08")]

    def test_subtract_everything(self):
        a = S(("2024-01-01", "2024-01-10"))
        assert not (a - S(("2023-01-01", "2025-01-01")))


class TestValueBehaviour:
    def test_equality_and_hash(self):
        assert S(("2024-01-01", "2024-01-02")) == S(("2024-01-01", "2024-01-02"))
        assert len({S(("2024-01-01", "2024-01-02")), S(("2024-01-01", "2024-01-02"))}) == 1

    def test_repr(self):
        assert repr(S(("2024-01-01", "2024-01-02"))) == (
            "IntervalSet([DateInterval('2024-01-01', '2024-01-02')])"
        )
