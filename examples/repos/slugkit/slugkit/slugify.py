"""Slugs from titles."""

import re

from slugkit.fold import fold
from slugkit.truncate import truncate

_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


def slugify(text, separator="-", lowercase=True, max_length=None):
    """A slug for ``text``: ASCII letters and digits joined by ``separator``.

    Every run of other characters becomes one separator, and separators are stripped from
    both ends. With ``max_length`` the slug is shortened by ``truncate``.
    """
    text = fold(text)
    if lowercase:
        text = text.lower()
    slug = _NOT_WORD.sub(separator, text).strip(separator)
    if max_length is not None:
        slug = truncate(slug, max_length, separator)
    return slug
