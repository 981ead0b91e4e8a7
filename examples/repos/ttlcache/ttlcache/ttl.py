"""An LRU cache whose entries also expire a fixed time after they were stored."""

from collections import OrderedDict
from collections.abc import MutableMapping

from ttlcache.clock import MonotonicClock
from ttlcache.stats import CacheStats

_MISSING = object()


class _Entry:
    __slots__ = ("expires_at", "value")

    def __init__(self, value, expires_at):
        self.value = value
        self.expires_at = expires_at


class TTLCache(MutableMapping):
    """At most ``maxsize`` entries, each living ``ttl`` seconds from when it was stored.

    An entry stored at time ``t`` is visible while the clock reads less than ``t + ttl``
    and gone from then on. Expired entries never show up in lookups, ``len()``,
    iteration or membership tests.
    """

    def __init__(self, maxsize, ttl, clock=None):
        if not isinstance(maxsize, int) or maxsize < 1:
            raise ValueError("maxsize must be a positive int")
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.maxsize = maxsize
        self.ttl = ttl
        self.clock = clock if clock is not None else MonotonicClock()
        self.stats = CacheStats()
        self._data = OrderedDict()

    def _expired(self, entry, now):
        return entry.expires_at < now

    def _live_entry(self, key):
        entry = self._data.get(key)
        if entry is None:
            return None
        if self._expired(entry, self.clock.now()):
            del self._data[key]
            self.stats.expirations += 1
            return None
        return entry

    def __getitem__(self, key):
        entry = self._live_entry(key)
        if entry is None:
            self.stats.misses += 1
            raise KeyError(key)
        self._data.move_to_end(key)
        self.stats.hits += 1
        return entry.value

    def __setitem__(self, key, value):
        now = self.clock.now()
        self.expire(now)
        if key in self._data:
            self._data.move_to_end(key)
        self._data[key] = _Entry(value, now + self.ttl)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)
            self.stats.evictions += 1

    def __delitem__(self, key):
        if self._live_entry(key) is None:
            raise KeyError(key)
        del self._data[key]

    def __contains__(self, key):
        return self._live_entry(key) is not None

    def __iter__(self):
        return iter(list(self._data))

    def __len__(self):
        return len(self._data)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def expire(self, now=None):
        """Drop every expired entry; return their keys, oldest first."""
        now = self.clock.now() if now is None else now
        gone = [key for key, entry in self._data.items() if self._expired(entry, now)]
        for key in gone:
            del self._data[key]
        self.stats.expirations += len(gone)
        return gone

    def ttl_remaining(self, key, default=_MISSING):
        """Seconds until ``key`` expires."""
        entry = self._live_entry(key)
        if entry is None:
            if default is _MISSING:
                raise KeyError(key)
            return default
        return entry.expires_at - self.clock.now()

    def touch(self, key):
        """Restart the lifetime of ``key`` as if it had just been stored."""
        entry = self._live_entry(key)
        if entry is None:
            raise KeyError(key)
        entry.expires_at = self.clock.now() + self.ttl

    def clear(self):
        self._data.clear()

    def __repr__(self):
        return f"TTLCache(maxsize={self.maxsize}, ttl={self.ttl}, size={len(self)})"
