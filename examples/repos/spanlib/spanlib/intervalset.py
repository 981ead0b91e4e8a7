"""IntervalSet: any set of days, kept as sorted, disjoint, non-adjacent intervals."""

from spanlib.interval import DateInterval, as_date


def _normalise(intervals):
    items = sorted(iv for iv in intervals if not iv.is_empty)
    merged = []
    for interval in items:
        if merged and interval.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = DateInterval(last.start, max(last.end, interval.end))
        else:
            merged.append(interval)
    return tuple(merged)


def _cut(piece, hole):
    """What is left of ``piece`` once the days of ``hole`` are taken out."""
    if not piece.overlaps(hole):
        return [piece]
    if hole.start > piece.start:
        return [DateInterval(piece.start, hole.start)]
    if hole.end < piece.end:
        return [DateInterval(hole.end, piece.end)]
    return []


class IntervalSet:
    """An immutable set of days. Overlapping and adjacent intervals are merged."""

    __slots__ = ("_items",)

    def __init__(self, intervals=()):
        items = []
        for interval in intervals:
            if not isinstance(interval, DateInterval):
                raise TypeError(f"expected DateInterval, got {type(interval).__name__}")
            items.append(interval)
        self._items = _normalise(items)

    @property
    def intervals(self):
        return self._items

    @property
    def total_days(self):
        return sum(interval.days for interval in self._items)

    @property
    def span(self):
        """The smallest interval holding every day of the set; None when empty."""
        if not self._items:
            return None
        return DateInterval(self._items[0].start, self._items[-1].end)

    def __contains__(self, day):
        day = as_date(day, "day")
        return any(day in interval for interval in self._items)

    def union(self, other):
        return IntervalSet([*self._items, *other._items])

    __or__ = union

    def intersection(self, other):
        pieces = []
        for a in self._items:
            for b in other._items:
                if a.overlaps(b):
                    pieces.append(a.intersection(b))
        return IntervalSet(pieces)

    __and__ = intersection

    def subtract(self, other):
        pieces = list(self._items)
        for hole in other._items:
            pieces = [part for piece in pieces for part in _cut(piece, hole)]
        return IntervalSet(pieces)

    __sub__ = subtract

    def gaps(self):
        """The intervals between consecutive members."""
        return [
            DateInterval(left.end, right.start)
            for left, right in zip(self._items, self._items[1:])
        ]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)

    def __bool__(self):
        return bool(self._items)

    def __eq__(self, other):
        if not isinstance(other, IntervalSet):
            return NotImplemented
        return self._items == other._items

    def __hash__(self):
        return hash(self._items)

    def __repr__(self):
        return f"IntervalSet([{', '.join(repr(i) for i in self._items)}])"
