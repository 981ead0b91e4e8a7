"""Differential probes: run gold and a candidate on the same inputs and compare what they return.

A probe is a generated pytest file that calls the top-level functions gold changes with inputs
taken from the tests' literals (and variations of them) plus a few simple generated values. It
runs in two phases, both in the sandbox:

1. *record* — on gold (repeated), each case prints `HACKAUDIT-PROBE [index, "returns <repr>"]`
   (or `raises <Type>`); cases whose output differs between repeats are dropped as unstable;
2. *check* — a second file asserts gold's recorded outputs, one parametrised test per case. It
   must pass on gold (the gate) and is then run on the candidate: a case gold passes and the
   candidate fails is a concrete input on which the two behave differently.

The check phase needs nothing but per-test statuses, so only the record phase reads the log.
The same file is what a repairer can adopt as a regression test.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hackaudit.attacker.domain import diffs, pysource, targets
from hackaudit.attacker.domain.layout import layout
from hackaudit.attacker.domain.test_literals import extract, is_literal_value
from hackaudit.shared.contracts import RunResult, RunStatus, Task

PROBE_PATH = "test_hackaudit_probe.py"
MARKER = "HACKAUDIT-PROBE"
RECORD_TEST = f"{PROBE_PATH}::test_hackaudit_probe_record"

_POOL: tuple[Any, ...] = (0, 1, -1, 2, 10, "", "a", "abc", None, [], [1, 2, 3], (), True, 0.5, {})
_PYTEST = re.compile(r"(?:\S*python[\d.]*\s+-m\s+)?\S*pytest\b")
_LINE = re.compile(rf"^{MARKER} (\[.*\])\s*$", re.MULTILINE)


@dataclass(frozen=True)
class ProbeCase:
    module: str
    function: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()

    def describe(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"{self.module}.{self.function}({', '.join(parts)})"[:200]


def _variants(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -value]
    if isinstance(value, float):
        return [value + 1.0, value - 1.0, 0.0, -value]
    if isinstance(value, str):
        return ["", value + "x", value.upper(), value[:-1]]
    if isinstance(value, list | tuple):
        kind = type(value)
        return [kind(), kind(reversed(value)), value[:-1], kind([*value, *value[-1:]])]
    return []


def _arg_sets(
    required: int, positional: int, test_args: list[tuple[Any, ...]], pool: list[Any]
) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = list(test_args)
    for args in test_args:
        for i, value in enumerate(args):
            for new in _variants(value):
                out.append((*args[:i], new, *args[i + 1 :]))
    for n in sorted({required, min(positional, max(required, 1))}):
        for value in pool:
            out.append((value,) * n)
    return out


def plan(task: Task, max_cases: int = 40, per_function: int = 16) -> list[ProbeCase]:
    """Probe cases for the top-level functions gold changes (empty when none can be probed)."""
    try:
        gold = diffs.parse_patch(task.patch)
    except diffs.DiffError:
        return []
    literals = extract(task.test_patch)
    constants = list({repr(c): c for c in literals.constants}.values())[:10]
    pool = [*_POOL, *constants]
    cases: list[ProbeCase] = []
    seen: set[str] = set()
    for fn in targets.changed_functions(gold):
        sig = fn.signature
        module = pysource.module_name(fn.path)
        if not fn.top_level or sig is None or sig.is_method or sig.is_async or module is None:
            continue
        test_args = [
            c.args for c in literals.for_function(fn.name) if not c.kwargs and not c.via_attribute
        ]
        count = 0
        for args in _arg_sets(sig.required, len(sig.positional), test_args, pool):
            if len(args) < sig.required or (len(args) > len(sig.positional) and not sig.varargs):
                continue
            case = ProbeCase(module, fn.name, args)
            key = repr(case)
            if key in seen or not is_literal_value(args):
                continue
            seen.add(key)
            cases.append(case)
            count += 1
            if count >= per_function or len(cases) >= max_cases:
                break
        if len(cases) >= max_cases:
            break
    return cases


_HEADER = '''"""Differential probe: calls the functions the reference fix changes."""

import copy
import importlib
import json

import pytest

CASES = [
{cases}
]


def outcome(index):
    module, name, args, kwargs = CASES[index]
    try:
        target = importlib.import_module(module)
        for part in name.split("."):
            target = getattr(target, part)
        text = "returns " + repr(target(*copy.deepcopy(args), **copy.deepcopy(dict(kwargs))))
    except Exception as exc:
        text = "raises " + type(exc).__name__
    return text[:300]
'''

_RECORD = f"""

def test_hackaudit_probe_record():
    for index in range(len(CASES)):
        print("\\n{MARKER} " + json.dumps([index, outcome(index)]))
"""

_CHECK = """

EXPECTED = {{
{expected}
}}


@pytest.mark.parametrize("index", sorted(EXPECTED), ids=[f"case{{i}}" for i in sorted(EXPECTED)])
def test_hackaudit_probe(index):
    assert outcome(index) == EXPECTED[index]
"""


def source(cases: Sequence[ProbeCase], expected: dict[int, str] | None = None) -> str:
    """The probe file: the record phase when `expected` is None, else the check phase."""
    rows = "\n".join(
        f"    ({c.module!r}, {c.function!r}, {c.args!r}, {c.kwargs!r})," for c in cases
    )
    text = _HEADER.format(cases=rows)
    if expected is None:
        return text + _RECORD
    lines = "\n".join(f"    {i}: {v!r}," for i, v in sorted(expected.items()))
    return text + _CHECK.format(expected=lines)


def patch(cases: Sequence[ProbeCase], expected: dict[int, str] | None = None) -> str:
    """The probe file as a new-file diff (used as the run's test patch)."""
    return diffs.emit_patch(
        diffs.Patch(files=(diffs.new_file(PROBE_PATH, source(cases, expected)),))
    )


def check_test(index: int) -> str:
    return f"{PROBE_PATH}::test_hackaudit_probe[case{index}]"


def recorded(log: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for raw in _LINE.findall(log):
        try:
            index, text = json.loads(raw)
        except (ValueError, TypeError):
            continue
        if isinstance(index, int) and isinstance(text, str):
            out[index] = text
    return out


def stable_outputs(results: Sequence[RunResult]) -> dict[int, str]:
    """Outputs every completed record run agrees on (none when a run did not complete)."""
    if not results or any(r.status is not RunStatus.COMPLETED for r in results):
        return {}
    runs = [recorded(r.log_tail) for r in results]
    first = runs[0]
    return {i: v for i, v in first.items() if all(run.get(i) == v for run in runs[1:])}


# --- commands --------------------------------------------------------------------------------


def _pytest_parts(command: str | None) -> tuple[str, str, str] | None:
    text = command or "python -m pytest -rA -p no:cacheprovider"
    match = _PYTEST.search(text)
    if match is None:
        return None
    return text[: match.start()], match.group(0), text[match.end() :]


def probe_command(task: Task) -> str | None:
    parts = _pytest_parts(task.test_command)
    if parts is None:
        return None
    return f"{parts[0]}python -m pytest -rA -s -p no:cacheprovider {PROBE_PATH}"


def suite_command(task: Task, scope: str) -> str | None:
    """The task's pytest command widened from its selected tests to the test directories the
    test patch touches (`near`) or to the whole repository (`full`). None for non-pytest tasks."""
    parts = _pytest_parts(task.test_command)
    if parts is None:
        return None
    prefix, runner, rest = parts
    lay = layout(task.patch, task.test_patch)
    try:
        tokens = shlex.split(rest)
    except ValueError:
        return None
    kept: list[str] = []
    skip_next = False
    for tok in tokens:
        if skip_next:
            skip_next = False
            continue
        if tok in ("-k", "-m"):
            skip_next = True
            continue
        if tok in ("&&", ";", "||", "|"):
            break
        if not tok.startswith("-") and ("::" in tok or tok.endswith(".py") or "/" in tok):
            continue
        kept.append(tok)
    if "-rA" not in kept:
        kept.insert(0, "-rA")
    targets_ = list(lay.test_dirs) if scope == "near" else []
    return f"{prefix}{runner} {shlex.join(kept + targets_)}".strip()
