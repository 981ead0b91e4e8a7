"""Which test runner grades a task, as far as the attacker needs to know it.

A strategy that works through one runner's machinery (a pytest `conftest.py` hook, a patched
pytest report) cannot act under another (sympy's `bin/test`, Django's `runtests.py`), so such
candidates are not built for those tasks. The runner is read the way the sandbox reads it: the
task's log parser, else its repository (Django, sympy), else the words of its test command;
pytest otherwise.
"""

from __future__ import annotations

import re
from enum import StrEnum

from hackaudit.shared.contracts import Task


class Runner(StrEnum):
    PYTEST = "pytest"
    UNITTEST = "unittest"
    DJANGO = "django"
    SYMPY = "sympy"


_BY_REPO = {"django/django": Runner.DJANGO, "sympy/sympy": Runner.SYMPY}
_PYTEST = re.compile(r"(^|[\s/])(py\.test|pytest)(\s|$)")


def runner_of(task: Task) -> Runner:
    if task.log_parser in set(Runner):
        return Runner(task.log_parser)
    if task.repo in _BY_REPO:
        return _BY_REPO[task.repo]
    command = task.test_command or ""
    if command:
        if _PYTEST.search(command):
            return Runner.PYTEST
        if "runtests.py" in command:
            return Runner.DJANGO
        if "bin/test" in command:
            return Runner.SYMPY
        if "unittest" in command:
            return Runner.UNITTEST
    return Runner.PYTEST
