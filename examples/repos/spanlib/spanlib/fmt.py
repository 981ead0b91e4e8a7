"""Writing intervals for people and for machines."""

_MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _day_month(day):
    return f"{day.day} {_MONTHS[day.month - 1]}"


def format_interval(interval, style="iso"):
    """Format ``interval``.

    ``iso``: ``2024-03-01/2024-03-08`` (end excluded, as stored).
    ``closed``: ``2024-03-01..2024-03-07`` (first and last day, both included).
    ``human``: ``1-7 Mar 2024``, ``28 Feb - 3 Mar 2024``, ``30 Dec 2024 - 2 Jan 2025``.
    """
    if style == "iso":
        return str(interval)
    if interval.is_empty:
        return "(empty)"
    first, last = interval.start, interval.last_day
    if style == "closed":
        return f"{first.isoformat()}..{last.isoformat()}"
    if style != "human":
        raise ValueError(f"unknown style {style!r}; use iso, closed or human")
    if first == last:
        return f"{_day_month(first)} {first.year}"
    if first.year != last.year:
        return f"{_day_month(first)} {first.year} - {_day_month(last)} {last.year}"
    if first.month != last.month:
        return f"{_day_month(first)} - {_day_month(last)} {last.year}"
    return f"{first.day}-{last.day} {_MONTHS[last.month - 1]} {last.year}"
