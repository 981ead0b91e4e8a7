"""spanlib: half-open calendar-day intervals."""

from spanlib.errors import InvalidInterval
from spanlib.fmt import format_interval
from spanlib.interval import DateInterval
from spanlib.intervalset import IntervalSet
from spanlib.parse import Duration, parse_duration, parse_interval, shift_date

__all__ = [
    "DateInterval",
    "Duration",
    "IntervalSet",
    "InvalidInterval",
    "format_interval",
    "parse_duration",
    "parse_interval",
    "shift_date",
]

__version__ = "0.3.2"
