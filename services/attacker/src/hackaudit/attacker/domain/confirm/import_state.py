"""Whether a change at import leaves the changed modules as gold's once they are imported.

A change that runs at import is seen by every test that uses its module, so the wider suite
cannot be narrowed for it. But all such a change can do to its own modules is in what they hold
once imported: a candidate after which every changed module binds the same names to the same
values and the same code as under gold (`programs.state_program`) cannot be told from gold by any
test through those modules, and the whole suite need not run for it. A change whose only effect
at import is elsewhere (a call that patches another module) is not seen by this comparison.

The state run is a probe (the probe program's file, no cases, then the state program): gold's
is run once per set of modules, repeated, and counts only when its runs agree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hackaudit.attacker.domain.confirm.probe_source import CLASS, LOADED, program_text, render
from hackaudit.attacker.domain.confirm.selection import WHOLE, GoldLines
from hackaudit.attacker.domain.reading import pysource
from hackaudit.shared.contracts import Probe, RunResult, RunStatus

STATE_PATH = "test_hackaudit_state.py"
_NAME = re.compile(r"test_state(\d+)_(raises_\w+|[0-9a-f]{12})\b")


def modules(lines: GoldLines) -> tuple[str, ...] | None:
    """The import names of the source files a candidate's change is in (None: one of them is
    not a Python module, or is replaced whole, so its state says nothing)."""
    found = []
    for path, numbers in sorted(lines.items()):
        name = pysource.module_name(path)
        if name is None or WHOLE in numbers:
            return None
        found.append(name)
    return tuple(found) or None


def invocation(names: Sequence[str]) -> Probe:
    """The state run of `names`: the probe program with no cases, then the state program."""
    data = f"\n\n# --- the modules to record ---\n\nSTATE_MODULES = {list(names)!r}\n"
    data += "\n_name_states()\n"
    text = render([]) + "\n\n" + program_text("state_program.py") + data
    return Probe(files={STATE_PATH: text}, test=STATE_PATH, loaded=f"{CLASS}.{LOADED}")


def states(result: RunResult) -> dict[int, str] | None:
    """Each module's record digest (or `raises_<exception>`) from one run; None when the run
    did not complete."""
    if result.status is not RunStatus.COMPLETED:
        return None
    found: dict[int, str] = {}
    for name in result.tests:
        match = _NAME.search(name)
        if match:
            found[int(match.group(1))] = match.group(2)
    return found


def same_as_gold(names: Sequence[str], gold: Sequence[RunResult], candidate: RunResult) -> bool:
    """Whether the candidate's run records every module as all of gold's runs do (gold's runs
    agreeing with each other, every module imported on both sides)."""
    seen = [states(r) for r in gold]
    reference = seen[0] if seen else None
    if reference is None or any(s != reference for s in seen):
        return False
    if len(reference) != len(names) or any(v.startswith("raises_") for v in reference.values()):
        return False
    return states(candidate) == reference
