"""Shortening slugs to a length limit."""


def truncate(slug, max_length, separator="-"):
    """``slug`` shortened to at most ``max_length`` characters."""
    return slug[:max_length]
