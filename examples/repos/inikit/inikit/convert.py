"""Turning option text into Python values."""

from inikit.errors import ConversionError

BOOLEAN_STATES = {
    "1": True,
    "yes": True,
    "true": True,
    "on": True,
    "0": False,
    "no": False,
    "false": False,
    "off": False,
}


def to_bool(text):
    try:
        return BOOLEAN_STATES[text.strip().lower()]
    except KeyError:
        raise ConversionError(text, "a boolean") from None


def to_int(text):
    """Read a decimal integer; underscores between digits are allowed (``1_000``)."""
    try:
        return int(text.strip())
    except ValueError:
        raise ConversionError(text, "an integer") from None


def to_float(text):
    try:
        return float(text.strip())
    except ValueError:
        raise ConversionError(text, "a number") from None


def to_list(text, separator=","):
    """Split on line breaks and ``separator``; blank items are dropped."""
    items = []
    for line in text.splitlines():
        for item in line.split(separator) if separator else [line]:
            item = item.strip()
            if item:
                items.append(item)
    return items
