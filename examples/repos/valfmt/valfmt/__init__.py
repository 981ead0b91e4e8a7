"""Readable text for Python values."""

from valfmt.printer import Printer, fmt
from valfmt.quantity import Quantity

__all__ = ["Printer", "Quantity", "fmt"]
