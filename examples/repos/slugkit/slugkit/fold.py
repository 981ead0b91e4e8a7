"""Folding text to ASCII: accents dropped, a few letters spelled out."""

import unicodedata

# Letters that do not decompose into a base letter plus accents.
SPELLED = {
    "ß": "ss",
    "æ": "ae",
    "Æ": "AE",
    "œ": "oe",
    "Œ": "OE",
    "ø": "o",
    "Ø": "O",
    "ł": "l",
    "Ł": "L",
    "đ": "d",
    "Đ": "D",
    "þ": "th",
    "Þ": "TH",
}


def fold(text):
    """``text`` in ASCII: accents dropped (``é`` -> ``e``), letters in SPELLED spelled out.

    Characters with no ASCII form are dropped.
    """
    spelled = "".join(SPELLED.get(char, char) for char in text)
    decomposed = unicodedata.normalize("NFKD", spelled)
    return decomposed.encode("ascii", "ignore").decode("ascii")
