"""Reading a Markdown pipe table back into a Table."""

import re

from mdtable.table import Table

_SEPARATOR_CELL = re.compile(r"^:?-{1,}:?$")


class TableSyntaxError(ValueError):
    def __init__(self, lineno, message):
        super().__init__(f"line {lineno}: {message}")
        self.lineno = lineno


def _split_row(line):
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|"):
        text = text[:-1]
    return [cell.strip() for cell in text.split("|")]


def _alignment(cell):
    left, right = cell.startswith(":"), cell.endswith(":")
    if left and right:
        return "center"
    if right:
        return "right"
    if left:
        return "left"
    return None


def parse(text):
    """Parse the first table in ``text``; lines before it are skipped, a blank line ends it."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "|" in line), None)
    if start is None:
        raise TableSyntaxError(1, "no table found")
    if start + 1 >= len(lines):
        raise TableSyntaxError(start + 2, "header row without a separator row")
    header = _split_row(lines[start])
    separator = _split_row(lines[start + 1])
    if not all(_SEPARATOR_CELL.match(cell.replace(" ", "")) for cell in separator):
        raise TableSyntaxError(start + 2, f"not a separator row: {lines[start + 1]!r}")
    if len(separator) != len(header):
        raise TableSyntaxError(
            start + 2, f"separator has {len(separator)} cells, header has {len(header)}"
        )
    table = Table(header, align=[_alignment(cell) for cell in separator])
    for offset, line in enumerate(lines[start + 2 :], start=start + 3):
        if not line.strip():
            break
        cells = _split_row(line)
        if len(cells) > table.width:
            raise TableSyntaxError(offset, f"row has {len(cells)} cells, expected {table.width}")
        table.add_row(cells)
    return table
