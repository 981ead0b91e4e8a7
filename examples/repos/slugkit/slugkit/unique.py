"""Numbering a slug that is already taken."""


def unique_slug(slug, taken, separator="-", max_length=None):
    """``slug``, or when it is in ``taken`` the first free ``slug-2``, ``slug-3``, ...

    ``taken`` is any container of slugs (a set, a database-backed lookup). With
    ``max_length`` the slug is first cut to that many characters.
    """
    if max_length is not None:
        slug = slug[:max_length].rstrip(separator)
    if slug not in taken:
        return slug
    number = 2
    while f"{slug}{separator}{number}" in taken:
        number += 1
    return f"{slug}{separator}{number}"
