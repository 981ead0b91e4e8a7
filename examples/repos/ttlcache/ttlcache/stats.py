"""Counters kept by every cache."""

from dataclasses import dataclass


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    expirations: int = 0

    @property
    def lookups(self):
        return self.hits + self.misses

    @property
    def hit_ratio(self):
        """Hits over lookups; 0.0 before the first lookup."""
        return self.hits / self.lookups if self.lookups else 0.0

    def reset(self):
        self.hits = self.misses = self.evictions = self.expirations = 0
