from ttlcache import CacheStats


def test_hit_ratio():
    stats = CacheStats(hits=3, misses=1)
    assert stats.lookups == 4
    assert stats.hit_ratio == 0.75


def test_hit_ratio_without_lookups():
    assert CacheStats().hit_ratio == 0.0


def test_reset():
    stats = CacheStats(hits=1, misses=2, evictions=3, expirations=4)
    stats.reset()
    assert stats == CacheStats()
