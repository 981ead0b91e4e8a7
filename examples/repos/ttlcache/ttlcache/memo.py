"""Caching a function's results by its arguments."""

import functools

from ttlcache.lru import LRUCache


def make_key(args, kwargs, typed=False):
    """A hashable key standing for one call's arguments.

    Two calls get the same key only if they pass equal arguments the same way. With
    ``typed`` set, arguments of different types (``1`` and ``1.0``) get different keys.
    """
    key = tuple(args)
    if kwargs:
        key += tuple(kwargs.values())
    if typed:
        key += tuple(type(v) for v in args)
        key += tuple(type(v) for v in kwargs.values())
    return key


def memoize(cache=None, *, key=make_key, typed=False):
    """Decorate a function so results are kept in ``cache`` (a 128-entry LRU by default).

    The wrapper gains ``cache``, ``cache_clear()`` and ``uncached`` attributes. Calls whose
    arguments cannot be hashed are passed straight through.
    """
    if callable(cache) and not hasattr(cache, "__getitem__"):
        # Used bare, as @memoize.
        return memoize()(cache)
    store = cache if cache is not None else LRUCache(128)

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            k = key(args, kwargs, typed)
            try:
                return store[k]
            except KeyError:
                pass
            except TypeError:
                return func(*args, **kwargs)
            result = func(*args, **kwargs)
            try:
                store[k] = result
            except TypeError:
                pass
            return result

        wrapper.cache = store
        wrapper.cache_clear = store.clear
        wrapper.uncached = func
        return wrapper

    return decorate
