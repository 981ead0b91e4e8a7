"""The command of a probe or a capture run: one added test module, run alone.

The attacker's probes and the repairer's capture each add a module to the repository (beside the
task's test patch) whose test names carry what it observed. Whatever the task's own runner
(pytest, unittest, Django's, sympy's `bin/test`), the module runs under the image's interpreter
as `python -m unittest -v <module>`, which every Python has, and the log is read by the unittest
parser. What the task's command sets before its runner (`PYTHONPATH=src python -m pytest ...`)
is kept in front. A probe runs with hash randomisation off, so its outcomes do not vary with it.

The run is resolved when the module's `loaded` test passed: it passes whenever the module loads.
"""

from __future__ import annotations

import re

from hackaudit.shared.anatomy import Patch, emit_patch, new_file
from hackaudit.shared.contracts import Capture, Probe, Task
from hackaudit.shared.runners import RunnerKind

# The interpreter the task's environment puts first (the venv's or the conda env's `python`),
# else `python3`: every image that runs Python tests has one of them.
PYTHON = '"$(command -v python || command -v python3)"'
_PYTEST = re.compile(r"(?:\S*python[\d.]*\s+-m\s+)?\S*pytest\b")
_UNITTEST = re.compile(r"\S*python[\d.]*\s+-m\s+unittest\b")


def module_name(path: str) -> str:
    """The dotted module a file imports as from the repository's root."""
    return path.removesuffix(".py").replace("/", ".")


def _prefix(command: str | None, pattern: re.Pattern[str]) -> str:
    match = pattern.search(command or "")
    return (command or "")[: match.start()] if match else ""


def command(task: Task, invocation: Probe | Capture, runner: RunnerKind | None) -> str:
    """`python -m unittest -v` on the invocation's module, behind what the task's command sets
    before its runner (a probe: before pytest or unittest as the task's runner is; a capture:
    before either)."""
    module = module_name(invocation.test)
    if isinstance(invocation, Capture):
        prefix = _prefix(task.test_command, _PYTEST) or _prefix(task.test_command, _UNITTEST)
        return f"{prefix}{PYTHON} -m unittest -v {module}"
    prefix = ""
    if runner is RunnerKind.PYTEST:
        prefix = _prefix(task.test_command, _PYTEST)
    elif runner is RunnerKind.UNITTEST:
        prefix = _prefix(task.test_command, _UNITTEST)
    return f"{prefix}PYTHONHASHSEED=0 {PYTHON} -m unittest -v {module}"


def loaded_test(invocation: Probe | Capture) -> str:
    """The module's always-passing test, as `unittest -v` names it."""
    module = module_name(invocation.test)
    method = invocation.loaded.rsplit(".", 1)[-1]
    return f"{method} ({module}.{invocation.loaded})"


def added_files_patch(files: dict[str, str]) -> str:
    """A diff that creates each of `files` (path -> text)."""
    return emit_patch(Patch(files=tuple(new_file(path, text) for path, text in files.items())))


def with_added_files(test_patch: str, files: dict[str, str]) -> str:
    """The test patch followed by the diff that adds `files`."""
    added = added_files_patch(files)
    if not test_patch.strip():
        return added
    return test_patch.rstrip("\n") + "\n" + added
