import pytest

from ttlcache import LRUCache, TTLCache, ManualClock, memoize


def counting(func):
    calls = []

    def wrapped(*args, **kwargs):
        calls.append((args, kwargs))
        return func(*args, **kwargs)

    wrapped.calls = calls
    return wrapped


def test_results_are_reused():
    inner = counting(lambda x: x * 2)
    double = memoize(LRUCache(8))(inner)
    assert double(4) == 8
    assert double(4) == 8
    assert len(inner.calls) == 1


def test_different_arguments_are_different_entries():
    inner = counting(lambda x: x + 1)
    inc = memoize(LRUCache(8))(inner)
    assert [inc(1), inc(2), inc(1)] == [2, 3, 2]
    assert len(inner.calls) == 2


def test_bare_decorator():
    @memoize
    def square(x):
        return x * x

    assert square(5) == 25
    assert isinstance(square.cache, LRUCache)


def test_wrapper_attributes():
    @memoize(LRUCache(4))
    def ident(x):
        """Return x."""
        return x

    assert ident.__name__ == "ident"
    assert ident.__doc__ == "Return x."
    ident(1)
    assert len(ident.cache) == 1
    ident.cache_clear()
    assert len(ident.cache) == 0
    assert ident.uncached(3) == 3


def test_unhashable_arguments_bypass_the_cache():
    inner = counting(lambda items: sum(items))
    total = memoize(LRUCache(4))(inner)
    assert total([1, 2]) == 3
    assert total([1, 2]) == 3
    assert len(inner.calls) == 2


def test_keyword_arguments_are_cached():
    inner = counting(lambda x, scale=1: x * scale)
    scaled = memoize(LRUCache(4))(inner)
    assert scaled(2, scale=3) == 6
    assert scaled(2, scale=3) == 6
    assert len(inner.calls) == 1


def test_typed_keys():
    inner = counting(lambda x: repr(x))
    show = memoize(LRUCache(4), typed=True)(inner)
    assert show(1) == "1"
    assert show(1.0) == "1.0"


def test_with_ttl_cache():
    clock = ManualClock()
    inner = counting(lambda x: x)
    fn = memoize(TTLCache(4, ttl=5, clock=clock))(inner)
    fn(1)
    clock.advance(1)
    fn(1)
    clock.advance(10)
    fn(1)
    assert len(inner.calls) == 2


@pytest.mark.parametrize("value", [None, 0, "", ()], ids=["none", "zero", "empty-str", "empty-tuple"])
def test_falsy_results_are_cached(value):
    inner = counting(lambda: value)
    fn = memoize(LRUCache(2))(inner)
    assert fn() == value
    assert fn() == value
    assert len(inner.calls) == 1
