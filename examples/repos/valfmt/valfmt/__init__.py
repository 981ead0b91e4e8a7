"""Readable text for Python values."""

from valfmt.printer import Printer, fmt

__all__ = ["Printer", "fmt"]
