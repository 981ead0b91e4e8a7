"""Checks that a program run inside a task's container stays runnable on an old image's Python
(3.5 and later), and reads the data a rendered program file assigns. Shared by the tests of the
attacker's probe and replay programs and of the repairer's capture program."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable


def assert_python_35_syntax(text: str) -> None:
    """No syntax newer than Python 3.5: no f-strings, variable annotations, walrus or
    `__future__` import; annotations quoted (nothing is evaluated when a function is defined);
    no trailing comma after *args or **kwargs in a definition (3.6's)."""
    tree = ast.parse(text, feature_version=(3, 5))
    for node in ast.walk(tree):
        assert not isinstance(node, ast.AnnAssign | ast.JoinedStr), ast.unparse(node)
        assert not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        if isinstance(node, ast.FunctionDef | ast.Lambda):
            for arg in [*node.args.args, *node.args.kwonlyargs]:
                assert arg.annotation is None or isinstance(arg.annotation, ast.Constant)
        if isinstance(node, ast.FunctionDef):
            assert node.returns is None or isinstance(node.returns, ast.Constant)
    assert not re.search(r"\*\*?\w+(?::\s*\"[^\"]*\")?,\s*\)", text)


def assert_standard_library_only(text: str, skipped: Callable[[ast.stmt], bool]) -> None:
    """Every import at the top level of `text`, but in the statements `skipped` names (blocks
    never run in the container), is of the standard library."""
    for stmt in ast.parse(text).body:
        if skipped(stmt):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                roots = [(node.module or "").split(".")[0]]
            else:
                continue
            assert set(roots) <= sys.stdlib_module_names, ast.unparse(node)


def assigned(text: str, name: str) -> object:
    """The value last assigned to `name` at the top level of `text`."""
    values = [
        stmt.value
        for stmt in ast.parse(text).body
        if isinstance(stmt, ast.Assign) and any(getattr(t, "id", "") == name for t in stmt.targets)
    ]
    return ast.literal_eval(values[-1])
