import pytest

from ttlcache import ManualClock, TTLCache


@pytest.fixture
def clock():
    return ManualClock(start=1000)


@pytest.fixture
def cache(clock):
    return TTLCache(maxsize=4, ttl=10, clock=clock)


class TestLifetime:
    def test_fresh_entry_is_visible(self, cache, clock):
        cache["a"] = 1
        clock.advance(9.5)
        assert cache["a"] == 1
        assert "a" in cache

    def test_old_entry_is_gone(self, cache, clock):
        cache["a"] = 1
        clock.advance(11)
        assert "a" not in cache
        with pytest.raises(KeyError):
            cache["a"]
        assert cache.get("a", "gone") == "gone"

    def test_overwrite_restarts_lifetime(self, cache, clock):
        cache["a"] = 1
        clock.advance(6)
        cache["a"] = 2
        clock.advance(6)
        assert cache["a"] == 2

    def test_touch_restarts_lifetime(self, cache, clock):
        cache["a"] = 1
        clock.advance(6)
        cache.touch("a")
        clock.advance(6)
        assert "a" in cache

    def test_touch_missing(self, cache):
        with pytest.raises(KeyError):
            cache.touch("nope")

    def test_ttl_remaining(self, cache, clock):
        cache["a"] = 1
        clock.advance(4)
        assert cache.ttl_remaining("a") == 6
        assert cache.ttl_remaining("zzz", None) is None
        with pytest.raises(KeyError):
            cache.ttl_remaining("zzz")


class TestExpire:
    def test_returns_expired_keys_oldest_first(self, cache, clock):
        cache["a"] = 1
        clock.advance(2)
        cache["b"] = 2
        clock.advance(2)
        cache["c"] = 3
        clock.advance(9)
        assert cache.expire() == ["a", "b"]
        assert cache.stats.expirations == 2

    def test_nothing_to_expire(self, cache):
        cache["a"] = 1
        assert cache.expire() == []


class TestSizeLimit:
    def test_evicts_least_recently_used(self, cache):
        for key in "abcd":
            cache[key] = key
        cache["a"]
        cache["e"] = "e"
        assert "b" not in cache
        assert "a" in cache
        assert cache.stats.evictions == 1

    def test_expired_entries_make_room_first(self, cache, clock):
        for key in "abc":
            cache[key] = key
        clock.advance(20)
        cache["d"] = "d"
        cache["e"] = "e"
        assert cache.stats.evictions == 0
        assert cache["d"] == "d"


class TestMapping:
    def test_delete(self, cache):
        cache["a"] = 1
        del cache["a"]
        assert "a" not in cache
        with pytest.raises(KeyError):
            del cache["a"]

    def test_delete_expired_raises(self, cache, clock):
        cache["a"] = 1
        clock.advance(30)
        with pytest.raises(KeyError):
            del cache["a"]

    def test_stats(self, cache):
        cache["a"] = 1
        cache.get("a")
        cache.get("b")
        assert (cache.stats.hits, cache.stats.misses) == (1, 1)

    def test_clear(self, cache):
        cache["a"] = 1
        cache.clear()
        assert len(cache) == 0


@pytest.mark.parametrize(("maxsize", "ttl"), [(0, 10), (4, 0), (4, -1)])
def test_rejects_bad_arguments(maxsize, ttl):
    with pytest.raises(ValueError):
        TTLCache(maxsize, ttl, clock=ManualClock())


def test_uses_monotonic_clock_by_default():
    cache = TTLCache(maxsize=1, ttl=60)
    cache["a"] = 1
    assert cache["a"] == 1
