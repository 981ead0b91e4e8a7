import pytest

from ttlcache import ManualClock, MonotonicClock


def test_monotonic_clock_does_not_go_back():
    clock = MonotonicClock()
    first = clock.now()
    assert clock.now() >= first


class TestManualClock:
    def test_starts_where_told(self):
        assert ManualClock().now() == 0.0
        assert ManualClock(start=100).now() == 100.0

    def test_advance(self):
        clock = ManualClock()
        assert clock.advance(1.5) == 1.5
        clock.advance(2)
        assert clock.now() == 3.5

    def test_set(self):
        clock = ManualClock(5)
        clock.set(9)
        assert clock.now() == 9.0

    @pytest.mark.parametrize("move", ["advance", "set"])
    def test_cannot_go_backwards(self, move):
        clock = ManualClock(10)
        with pytest.raises(ValueError, match="backwards"):
            if move == "advance":
                clock.advance(-1)
            else:
                clock.set(3)
