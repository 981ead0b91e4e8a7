"""Exceptions raised by spanlib."""


class InvalidInterval(ValueError):
    """An interval or duration is malformed or impossible."""
