"""semverlite: parse, compare and match semantic version strings."""

from semverlite.bump import bump
from semverlite.errors import InvalidRange, InvalidVersion, SemverError
from semverlite.ranges import Comparator, Range, max_satisfying, satisfies
from semverlite.version import Version, parse

__all__ = [
    "Comparator",
    "InvalidRange",
    "InvalidVersion",
    "Range",
    "SemverError",
    "Version",
    "bump",
    "max_satisfying",
    "parse",
    "satisfies",
]

__version__ = "0.4.1"
