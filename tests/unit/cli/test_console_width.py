"""Tables printed into a pipe or a file keep their task ids whole: rich would cut every column
to fit 80 characters there. A COLUMNS setting is still obeyed."""

from __future__ import annotations

import os
import subprocess
import sys

SHOW = (
    "from rich.table import Table\n"
    "from hackaudit.cli.commands.terminal import console\n"
    "t = Table()\n"
    "for c in ('task', 'label', 'outcome', 'exploits by', 'candidates', 'first exploit at'):\n"
    "    t.add_column(c)\n"
    "t.add_row('sphinx-doc__sphinx-11445', 'unflagged', 'none found', 'condition_forced', "
    "'15', 'candidate 12')\n"
    "console.print(t)\n"
)


def _printed(**env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-c", SHOW], env={**base, **env},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout


def test_a_piped_table_keeps_its_cells_whole() -> None:
    out = _printed()
    for cell in ("sphinx-doc__sphinx-11445", "condition_forced", "candidate 12"):
        assert cell in out, out


def test_columns_still_sets_the_width() -> None:
    out = _printed(COLUMNS="60")
    assert max(len(line) for line in out.splitlines()) <= 60
    assert "sphinx-doc__sphinx-11445" not in out
