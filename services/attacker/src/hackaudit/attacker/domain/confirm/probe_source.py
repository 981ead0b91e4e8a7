"""The probe file: the probe program's text, followed by this task's cases.

The code that runs inside the task's repository is a real module, `programs.probe_program`,
that the linters, the type checker and the unit tests see. The probe file is that module's text,
read as package data, then the task's cases assigned to `CASES` (each the repr of one case's
tuple, compiled by the image's interpreter like the rest of the file) and the call that names
them, then the replay's part (`replay_source`) when there is one. Everything runs when the file is
imported, under the interpreter's own `python -m unittest`: a `unittest.TestCase` whose test
methods are named after the outcomes of the cases (`probes` explains the scheme).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources

PROBE_PATH = "test_hackaudit_probe.py"
CLASS = "HackauditProbe"
LOADED = "test_hackaudit_probe_loaded"
_PROGRAMS = "hackaudit.attacker.domain.confirm.programs"


@cache
def program_text(name: str) -> str:
    """The text of one module of `programs` (`probe_program.py`, `replay_program.py`)."""
    return resources.files(_PROGRAMS).joinpath(name).read_text(encoding="utf-8")


def render(rows: Sequence[str], replay: str = "") -> str:
    """The probe file for these cases (each row the repr of one case's tuple), followed by the
    replay section (`replay_source`) when one is given."""
    cases = "".join(f"    {row},\n" for row in rows)
    data = f"\n\n# --- this task's cases ---\n\nCASES = [\n{cases}]\n\n_name_cases()\n"
    return program_text("probe_program.py") + data + replay
