"""Percent-encoding normalisation."""

import re
import string

UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
RESERVED = frozenset(":/?#[]@!$&'()*+,;=")

_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def _decode_unreserved(match):
    char = chr(int(match.group(1), 16))
    if char in UNRESERVED:
        return char
    return match.group(0)


def _encode_char(char):
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))


def normalize_percent(text):
    """One spelling for every percent-encoded string.

    Escapes of unreserved characters are decoded (``%7E`` -> ``~``), every other escape is
    kept with upper-case hex digits (``%2f`` -> ``%2F``), a ``%`` that does not start an
    escape is itself encoded (``%25``), and characters that may not appear raw in a URL
    (spaces, non-ASCII) are encoded as UTF-8.
    """
    text = _ESCAPE.sub(_decode_unreserved, text)
    return "".join(
        char if char in UNRESERVED or char in RESERVED or char == "%" else _encode_char(char)
        for char in text
    )
