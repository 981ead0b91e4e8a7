"""Exceptions raised by semverlite."""


class SemverError(ValueError):
    """Base class of every error semverlite raises."""


class InvalidVersion(SemverError):
    """A string is not a valid semantic version."""

    def __init__(self, text, reason="not a semantic version"):
        super().__init__(f"{text!r}: {reason}")
        self.text = text
        self.reason = reason


class InvalidRange(SemverError):
    """A range expression could not be parsed."""

    def __init__(self, text, reason="not a valid range"):
        super().__init__(f"{text!r}: {reason}")
        self.text = text
        self.reason = reason
