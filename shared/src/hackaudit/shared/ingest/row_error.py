"""The one fault a row converter raises: this field of this row cannot become part of a task."""

from __future__ import annotations


class RowError(ValueError):
    """A row's `field` holds something no task can be made of; `message` says what."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
