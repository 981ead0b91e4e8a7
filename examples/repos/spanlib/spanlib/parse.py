"""ISO 8601 style intervals: ``start/end``, ``start/duration`` and ``duration/end``."""

import re
from datetime import timedelta
from typing import NamedTuple

from spanlib.errors import InvalidInterval
from spanlib.interval import DateInterval, as_date

_DURATION = re.compile(
    r"^P(?:(?P<weeks>\d+)W|(?:(?P<years>\d+)Y)?(?:(?P<months>\d+)M)?(?:(?P<days>\d+)D)?)$"
)


class Duration(NamedTuple):
    """A calendar duration. Years and months are calendar units, not fixed day counts."""

    years: int = 0
    months: int = 0
    weeks: int = 0
    days: int = 0

    def __str__(self):
        if self.weeks:
            return f"P{self.weeks}W"
        text = "P"
        for amount, unit in ((self.years, "Y"), (self.months, "M"), (self.days, "D")):
            if amount:
                text += f"{amount}{unit}"
        return text if text != "P" else "P0D"


def parse_duration(text):
    """Read a date-only ISO 8601 duration such as ``P10D``, ``P2W`` or ``P1Y2M``."""
    cleaned = text.strip().upper()
    match = _DURATION.match(cleaned)
    if match is None or cleaned == "P":
        raise InvalidInterval(f"{text!r} is not a date duration such as P10D or P1M")
    return Duration(**{name: int(value) for name, value in match.groupdict().items() if value})


def shift_date(day, duration, sign=1):
    """``day`` moved forward (sign=1) or back (sign=-1) by ``duration``."""
    day = as_date(day)
    if duration.years or duration.months:
        raise InvalidInterval(f"durations in months or years are not supported: {duration}")
    return day + sign * timedelta(weeks=duration.weeks, days=duration.days)


def parse_interval(text):
    """Read ``2024-01-01/2024-02-01``, ``2024-01-01/P1M`` or ``P1W/2024-03-01``."""
    parts = text.strip().split("/")
    if len(parts) != 2 or not all(parts):
        raise InvalidInterval(f"{text!r} is not of the form start/end")
    left, right = parts
    if left.upper().startswith("P") and right.upper().startswith("P"):
        raise InvalidInterval(f"{text!r} gives two durations and no date")
    if right.upper().startswith("P"):
        start = as_date(left, "start")
        return DateInterval(start, shift_date(start, parse_duration(right)))
    if left.upper().startswith("P"):
        end = as_date(right, "end")
        return DateInterval(shift_date(end, parse_duration(left), sign=-1), end)
    return DateInterval(left, right)
