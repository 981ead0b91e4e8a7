"""How many terminal cells a string takes up."""

import unicodedata


def char_width(char):
    """0 for combining and other zero-width marks, 2 for wide East Asian characters, else 1."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    return 1


def display_width(text):
    return sum(char_width(char) for char in text)


def pad(text, width, align="left"):
    """``text`` padded with spaces to ``width`` display cells."""
    gap = width - display_width(text)
    if gap <= 0:
        return text
    if align == "right":
        return " " * gap + text
    if align == "center":
        left = gap // 2
        return " " * left + text + " " * (gap - left)
    return text + " " * gap
