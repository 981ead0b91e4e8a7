"""A size-bounded mapping that evicts the least recently used entry."""

from collections import OrderedDict
from collections.abc import MutableMapping

from ttlcache.stats import CacheStats

_MISSING = object()


class LRUCache(MutableMapping):
    """At most ``maxsize`` entries; reading or writing an entry makes it the most recent.

    ``on_evict(key, value)`` is called for every entry pushed out by the size limit.
    """

    def __init__(self, maxsize, on_evict=None):
        if not isinstance(maxsize, int) or maxsize < 1:
            raise ValueError("maxsize must be a positive int")
        self.maxsize = maxsize
        self.on_evict = on_evict
        self.stats = CacheStats()
        self._data = OrderedDict()

    def __getitem__(self, key):
        try:
            value = self._data[key]
        except KeyError:
            self.stats.misses += 1
            raise
        self._data.move_to_end(key)
        self.stats.hits += 1
        return value

    def __setitem__(self, key, value):
        if key in self._data:
            self._data.move_to_end(key)
        self._data[key] = value
        while len(self._data) > self.maxsize:
            old_key, old_value = self._data.popitem(last=False)
            self.stats.evictions += 1
            if self.on_evict is not None:
                self.on_evict(old_key, old_value)

    def __delitem__(self, key):
        del self._data[key]

    def __iter__(self):
        return iter(list(self._data))

    def __len__(self):
        return len(self._data)

    def __contains__(self, key):
        return key in self._data

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def peek(self, key, default=_MISSING):
        """The value for ``key`` without changing its recency or the counters."""
        if key in self._data:
            return self._data[key]
        if default is _MISSING:
            raise KeyError(key)
        return default

    def clear(self):
        self._data.clear()

    def __repr__(self):
        return f"{type(self).__name__}(maxsize={self.maxsize}, size={len(self)})"
