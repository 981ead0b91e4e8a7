"""Integer partitions, generated as ``{part: multiplicity}`` dictionaries."""


def _check_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")


def partitions(n, m=None):
    """Yield the partitions of ``n``, largest parts first.

    Each partition is a dictionary mapping a part to how many times it occurs:
    ``partitions(4)`` yields ``{4: 1}``, ``{3: 1, 1: 1}``, ``{2: 2}``, ``{2: 1, 1: 2}``
    and ``{1: 4}``. With ``m``, no part is larger than ``m``.
    """
    _check_int(n, "n")
    if m is not None:
        _check_int(m, "m")
        if m < 1:
            raise ValueError(f"m must be positive, got {m}")
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    if n == 0:
        yield {}
        return
    largest = n if m is None else min(m, n)
    ms = {}

    def extend(remaining, limit):
        if remaining == 0:
            yield ms
            return
        for part in range(min(remaining, limit), 0, -1):
            ms[part] = ms.get(part, 0) + 1
            yield from extend(remaining - part, part)
            ms[part] -= 1
            if not ms[part]:
                del ms[part]

    yield from extend(n, largest)


def partition_count(n, m=None):
    """How many partitions ``n`` has (with no part larger than ``m``, if given)."""
    _check_int(n, "n")
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    largest = n if m is None else max(0, min(m, n))
    ways = [1] + [0] * n
    for part in range(1, largest + 1):
        for total in range(part, n + 1):
            ways[total] += ways[total - part]
    return ways[n]


def as_list(partition):
    """A partition dictionary as a list of parts, largest first: ``{2: 1, 1: 2}`` -> [2, 1, 1]."""
    parts = []
    for part in sorted(partition, reverse=True):
        parts.extend([part] * partition[part])
    return parts
