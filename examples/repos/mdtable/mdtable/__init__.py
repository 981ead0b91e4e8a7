"""mdtable: Markdown pipe tables."""

from mdtable.parse import TableSyntaxError, parse
from mdtable.render import render
from mdtable.table import ALIGNMENTS, Table
from mdtable.width import display_width, pad

__all__ = [
    "ALIGNMENTS",
    "Table",
    "TableSyntaxError",
    "display_width",
    "pad",
    "parse",
    "render",
]

__version__ = "0.5.0"
