"""The replay part of the probe file: the replay program's text, followed by this task's data.

The code that replays the graded tests inside the task's repository is a real module,
`programs.replay_program` (its docstring says what it observes and how); the replay part of the
probe file is that module's text, read as package data, then this task's targets, the values
beside the tests' literals and the limits, assigned as Python literals, and the call that runs the
replay. It follows the probe program's part in the same file (`probe_source.render`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hackaudit.attacker.domain.confirm.probe_source import program_text

REPLAY_PREFIX = "test_replay_"
SEPARATOR = " =>> "
TERMINATOR = " <<="


def render_replay(
    targets: Sequence[tuple[str, str, Sequence[str]]],
    variants: Mapping[str, Sequence[object]],
    *,
    total_s: float = 150.0,
    max_observations: int = 600,
    powers: bool = False,
    flags: Sequence[str] = (),
) -> str:
    """The replay section for these (test file, its module, test function names) targets, with
    the values beside each literal (keyed by the literal's repr); `powers`: operand variants
    also as powers of the test's own names; `flags`: options to add (as each of FLAG_VALUES) to
    a test's decorator call for one more replay each."""
    rows = "".join(f"    ({p!r}, {m!r}, {list(dict.fromkeys(w))!r}),\n" for p, m, w in targets)
    table = "".join(f"    {k!r}: {list(v)!r},\n" for k, v in variants.items())
    data = (
        "\n\n# --- this task's replay ---\n\n"
        f"REPLAY = [\n{rows}]\n"
        f"VARIANTS = {{\n{table}}}\n"
        f"REPLAY_TOTAL_S = {float(total_s)!r}\n"
        f"MAX_OBSERVATIONS = {int(max_observations)!r}\n"
        f"POWERS = {bool(powers)!r}\n"
        f"FLAGS = {[str(f) for f in flags]!r}\n"
        "\nif REPLAY:\n    _replay_names()\n"
    )
    return "\n\n" + program_text("replay_program.py") + data
