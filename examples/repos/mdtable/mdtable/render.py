"""Writing a Table as Markdown."""

from mdtable.width import display_width, pad

MIN_WIDTH = 3


def _separator(width, align):
    if align == "left":
        return ":" + "-" * (width - 1)
    if align == "right":
        return "-" * (width - 1) + ":"
    if align == "center":
        return ":" + "-" * (width - 2) + ":"
    return "-" * width


def render(table, *, compact=False):
    """The table as a Markdown pipe table.

    Columns are padded to a common display width (at least 3 cells, so every alignment
    marker fits) unless ``compact`` is set, in which case cells are written as they are.
    """
    header = list(table.headers)
    body = [list(row) for row in table.rows]
    if compact:
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join(_separator(MIN_WIDTH, a) for a in table.align) + "|")
        lines.extend("| " + " | ".join(row) + " |" for row in body)
        return "\n".join(lines) + "\n"
    widths = [
        max([MIN_WIDTH, display_width(h)] + [display_width(row[i]) for row in body])
        for i, h in enumerate(header)
    ]

    def line(cells, aligns):
        padded = [pad(cell, w, a or "left") for cell, w, a in zip(cells, widths, aligns)]
        return "| " + " | ".join(padded) + " |"

    lines = [line(header, [None] * len(header))]
    lines.append("| " + " | ".join(_separator(w, a) for w, a in zip(widths, table.align)) + " |")
    lines.extend(line(row, table.align) for row in body)
    return "\n".join(lines) + "\n"
