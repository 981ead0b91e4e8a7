"""Text clean-up every parser applies first: colour codes and stray control characters."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_lines(log: str) -> list[str]:
    """The log's lines without ANSI escapes, control characters or carriage returns."""
    text = _ANSI.sub("", log.replace("\r\n", "\n"))
    return _CONTROL.sub("", text.replace("\r", "\n")).split("\n")
