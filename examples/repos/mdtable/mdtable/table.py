"""The Table model: headers, rows of text cells and per-column alignment."""

ALIGNMENTS = ("left", "right", "center", None)


def _cell(value):
    if value is None:
        return ""
    text = str(value)
    return text.replace("\r\n", "\n").replace("\n", " ").strip()


class Table:
    """Rows of cells under a header row. Every cell is stored as a one-line string.

    ``align`` holds one of ``"left"``, ``"right"``, ``"center"`` or None (no alignment
    marker) per column.
    """

    def __init__(self, headers, rows=(), align=None):
        self.headers = [_cell(h) for h in headers]
        if not self.headers:
            raise ValueError("a table needs at least one column")
        if align is None:
            align = [None] * len(self.headers)
        align = list(align)
        if len(align) != len(self.headers):
            raise ValueError(f"{len(align)} alignments for {len(self.headers)} columns")
        for value in align:
            if value not in ALIGNMENTS:
                raise ValueError(f"unknown alignment {value!r}")
        self.align = align
        self.rows = []
        for row in rows:
            self.add_row(row)

    @property
    def width(self):
        return len(self.headers)

    def add_row(self, row):
        """Append a row; short rows are filled with empty cells, long rows are an error."""
        cells = [_cell(v) for v in row]
        if len(cells) > self.width:
            raise ValueError(f"row has {len(cells)} cells, table has {self.width} columns")
        cells.extend([""] * (self.width - len(cells)))
        self.rows.append(cells)

    @classmethod
    def from_records(cls, records, columns=None, align=None):
        """A table from dicts; columns default to the keys in first-seen order."""
        records = list(records)
        if columns is None:
            columns = []
            for record in records:
                for key in record:
                    if key not in columns:
                        columns.append(key)
        table = cls(columns, align=align)
        for record in records:
            table.add_row([record.get(column) for column in columns])
        return table

    def column(self, name):
        """The cells of the column headed ``name``."""
        index = self._index(name)
        return [row[index] for row in self.rows]

    def _index(self, name):
        try:
            return self.headers.index(name)
        except ValueError:
            raise KeyError(name) from None

    def sort_by(self, name, *, key=None, reverse=False):
        index = self._index(name)
        convert = key if key is not None else (lambda text: text)
        self.rows.sort(key=lambda row: convert(row[index]), reverse=reverse)
        return self

    def __len__(self):
        return len(self.rows)

    def __eq__(self, other):
        if not isinstance(other, Table):
            return NotImplemented
        return (self.headers, self.rows, self.align) == (other.headers, other.rows, other.align)

    def __repr__(self):
        return f"Table({self.headers!r}, {len(self.rows)} rows)"
