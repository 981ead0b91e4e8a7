import pytest

from ttlcache import LRUCache


@pytest.fixture
def cache():
    return LRUCache(maxsize=3)


def test_stores_and_reads(cache):
    cache["a"] = 1
    assert cache["a"] == 1
    assert len(cache) == 1


def test_evicts_least_recently_used(cache):
    for key in "abc":
        cache[key] = key.upper()
    cache["a"]  # a is now the most recent
    cache["d"] = "D"
    assert list(cache) == ["c", "a", "d"]
    assert "b" not in cache


def test_overwrite_refreshes_recency(cache):
    for key in "abc":
        cache[key] = 0
    cache["a"] = 1
    cache["d"] = 0
    assert "a" in cache
    assert "b" not in cache


def test_on_evict_callback():
    evicted = []
    cache = LRUCache(2, on_evict=lambda k, v: evicted.append((k, v)))
    cache["x"] = 1
    cache["y"] = 2
    cache["z"] = 3
    assert evicted == [("x", 1)]
    assert cache.stats.evictions == 1


def test_peek_does_not_touch(cache):
    cache["a"] = 1
    cache["b"] = 2
    assert cache.peek("a") == 1
    assert list(cache) == ["a", "b"]
    assert cache.stats.lookups == 0
    assert cache.peek("zzz", None) is None
    with pytest.raises(KeyError):
        cache.peek("zzz")


def test_get_and_stats(cache):
    cache["a"] = 1
    assert cache.get("a") == 1
    assert cache.get("b", "dflt") == "dflt"
    assert (cache.stats.hits, cache.stats.misses) == (1, 1)


def test_delete_and_clear(cache):
    cache["a"] = 1
    cache["b"] = 2
    del cache["a"]
    assert list(cache) == ["b"]
    cache.clear()
    assert len(cache) == 0


@pytest.mark.parametrize("maxsize", [0, -1, 1.5, None])
def test_rejects_bad_maxsize(maxsize):
    with pytest.raises(ValueError, match="maxsize"):
        LRUCache(maxsize)


def test_repr(cache):
    cache["a"] = 1
    assert repr(cache) == "LRUCache(maxsize=3, size=1)"
