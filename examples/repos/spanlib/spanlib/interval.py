"""DateInterval: the days from a start day up to, but not including, an end day."""

from datetime import date, datetime, timedelta

from spanlib.errors import InvalidInterval

ONE_DAY = timedelta(days=1)


def as_date(value, what="date"):
    """Accept a ``date`` or an ISO ``YYYY-MM-DD`` string."""
    if isinstance(value, datetime):
        raise TypeError(f"{what} must be a date, not a datetime")
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInterval(f"{what} {value!r} is not a YYYY-MM-DD date") from None
    raise TypeError(f"{what} must be a date or an ISO date string, not {type(value).__name__}")


class DateInterval:
    """Days ``start <= day < end``. An interval whose start equals its end is empty."""

    __slots__ = ("_end", "_start")

    def __init__(self, start, end):
        start = as_date(start, "start")
        end = as_date(end, "end")
        if end < start:
            raise InvalidInterval(f"end {end} is before start {start}")
        self._start = start
        self._end = end

    @classmethod
    def from_days(cls, start, days):
        """The ``days`` days beginning with ``start``."""
        if days < 0:
            raise InvalidInterval("an interval cannot have a negative length")
        start = as_date(start, "start")
        return cls(start, start + timedelta(days=days))

    @property
    def start(self):
        return self._start

    @property
    def end(self):
        return self._end

    @property
    def days(self):
        return (self._end - self._start).days

    @property
    def is_empty(self):
        return self._start == self._end

    @property
    def last_day(self):
        """The last day inside the interval; None for an empty interval."""
        return None if self.is_empty else self._end - ONE_DAY

    def __contains__(self, day):
        day = as_date(day, "day")
        return self._start <= day < self._end

    def overlaps(self, other):
        """True if the two intervals share at least one day."""
        return self._start < other._end and other._start < self._end

    def adjacent(self, other):
        """True if one interval ends exactly where the other starts."""
        return self._end == other._start or other._end == self._start

    def intersection(self, other):
        """The days both intervals contain."""
        start = max(self._start, other._start)
        end = min(self._end, other._end)
        return DateInterval(start, end)

    def union(self, other):
        """One interval covering both; they must overlap or be adjacent."""
        if not (self.overlaps(other) or self.adjacent(other)):
            raise InvalidInterval(f"{self} and {other} leave a gap; their union is not an interval")
        return DateInterval(min(self._start, other._start), max(self._end, other._end))

    def shift(self, days):
        delta = timedelta(days=days)
        return DateInterval(self._start + delta, self._end + delta)

    def iter_days(self):
        day = self._start
        while day < self._end:
            yield day
            day += ONE_DAY

    def _key(self):
        return (self._start, self._end)

    def __eq__(self, other):
        if not isinstance(other, DateInterval):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other):
        if not isinstance(other, DateInterval):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return f"{self._start.isoformat()}/{self._end.isoformat()}"

    def __repr__(self):
        return f"DateInterval({self._start.isoformat()!r}, {self._end.isoformat()!r})"
