"""Classifying the lines of a configuration file."""

import re
from dataclasses import dataclass

from inikit.errors import ParseError

COMMENT_PREFIXES = ("#", ";")
QUOTES = "\"'"

BLANK = "blank"
COMMENT = "comment"
SECTION = "section"
OPTION = "option"
CONTINUATION = "continuation"

_SECTION = re.compile(r"^\[(?P<name>[^\]]+)\]$")
_OPTION = re.compile(r"^(?P<key>[^=:\s][^=:]*?)\s*[=:]\s*(?P<value>.*)$")


@dataclass(frozen=True)
class Line:
    """One classified line. `name` is a section name or an option key."""

    kind: str
    lineno: int
    name: str = ""
    value: str = ""
    raw: str = ""


def tokenize(text):
    """Yield a Line for every line of ``text``; raise ParseError on a line that fits no kind."""
    for lineno, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped:
            yield Line(BLANK, lineno, raw=raw)
        elif stripped.startswith(COMMENT_PREFIXES):
            yield Line(COMMENT, lineno, value=stripped[1:].strip(), raw=raw)
        elif raw[0] in " \t":
            yield Line(CONTINUATION, lineno, value=stripped, raw=raw)
        elif stripped.startswith("["):
            match = _SECTION.match(stripped)
            if match is None or not match.group("name").strip():
                raise ParseError(lineno, f"malformed section header {stripped!r}")
            yield Line(SECTION, lineno, name=match.group("name").strip(), raw=raw)
        else:
            match = _OPTION.match(stripped)
            if match is None:
                raise ParseError(lineno, f"expected 'key = value', got {stripped!r}")
            key = match.group("key").strip().lower()
            yield Line(OPTION, lineno, name=key, value=match.group("value"), raw=raw)
