"""ttlcache: LRU and time-to-live caches."""

from ttlcache.clock import ManualClock, MonotonicClock
from ttlcache.lru import LRUCache
from ttlcache.memo import make_key, memoize
from ttlcache.stats import CacheStats
from ttlcache.ttl import TTLCache

__all__ = [
    "CacheStats",
    "LRUCache",
    "ManualClock",
    "MonotonicClock",
    "TTLCache",
    "make_key",
    "memoize",
]

__version__ = "0.7.0"
