"""The issue's own examples as a replayed test: what the problem statement says goes wrong.

A test suite often asserts one form of what the issue asks for (one printed form, one constructor
path, the next item only), while the problem statement shows the others: `list(partitions(4))`,
`print(Poly([0, -2, 1]))`, `Permutation([[0, 1], [1, 2]])`. A wrong patch the tests accept is
usually still wrong on those. So the examples of the statement — its interactive sessions
(`>>>` / `...` lines, IPython `In [n]:` cells) or, when it has none, its fenced code blocks that
parse as Python — become one synthetic test
function, written into a module beside the probe, and replayed like a graded test (`replay`):

* an expression statement is an observation (`assert expr`, which the replay turns into a
  record of `expr`'s outcome: its value in a stable form, iterators drained item by item, or
  the exception type); `print(a, b)` observes `str(a)` and `str(b)`;
* an assignment to a name runs, then the name is observed unless a later example uses it (the
  later use is observed instead: observing drains an iterator, and the value is computed once, so
  an example that advances an iterator stays as written);
* every statement runs in its own `try`, so an example that raises under gold does not hide
  the examples after it.

The module star-imports the packages and modules gold changes, so an example that omits its
imports still finds the names (an example's own `from m import *` joins them: it is allowed at
module level only). Nothing in it compares with the outputs the statement shows (they
are the buggy ones): gold's outcome, stable over its repeated runs, is the reference, as for every
probe.
"""

from __future__ import annotations

import ast
import re

from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.attacker.domain.reading.layout import is_test_path
from hackaudit.shared.contracts import Task

ISSUE_PATH = "hackaudit_issue_examples.py"
ISSUE_MODULE = "hackaudit_issue_examples"
FUNCTION = "test_issue_examples"
MAX_STATEMENTS = 80
MAX_STATEMENT_CHARS = 2000
_PROMPT = re.compile(r"^\s*(>>>|\.\.\.)( |$)")
_IN_PROMPT = re.compile(r"^\s*In \[\d+\]: ?")
_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
_PYTHON_FENCES = ("", "python", "py", "python3", "pycon", "ipython", "pytb")


def _session_statements(lines: list[str]) -> list[str]:
    """The statements of `>>>` sessions: a `>>>` line and the `...` lines that continue it."""
    out: list[str] = []
    current: list[str] | None = None
    for line in lines:
        match = _PROMPT.match(line)
        if match is None:
            if current is not None:
                out.append("\n".join(current))
                current = None
            continue
        text = line[match.end() :] if match.group(2) else ""
        if match.group(1) == ">>>":
            if current is not None:
                out.append("\n".join(current))
            current = [text]
        elif current is not None:
            current.append(text)
    if current is not None:
        out.append("\n".join(current))
    return out


def _ipython_cells(lines: list[str]) -> list[str]:
    """The code of IPython `In [n]:` cells: the prompt's line and the lines below it indented
    past the prompt's column (until a blank line, an `Out[n]:` or a line that is not)."""
    out: list[str] = []
    current: list[str] | None = None
    width = 0
    for line in lines:
        match = _IN_PROMPT.match(line)
        if match is not None:
            if current is not None:
                out.append("\n".join(current))
            width, current = match.end(), [line[match.end() :]]
            continue
        if current is None:
            continue
        if line.strip() and line[:width].strip() == "" and len(line) > width:
            current.append(line[width:])
        else:
            out.append("\n".join(current))
            current = None
    if current is not None:
        out.append("\n".join(current))
    return out


def _fenced_blocks(text: str) -> list[list[str]]:
    """The lines of each fenced code block labelled as Python (or not labelled)."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    inside = False
    for line in text.splitlines():
        match = _FENCE.match(line)
        if match is not None and not inside:
            inside = True
            current = [] if match.group(2).lower() in _PYTHON_FENCES else None
        elif match is not None:
            if current:
                blocks.append(current)
            inside, current = False, None
        elif current is not None:
            current.append(line)
    return blocks


def _parsed(source: str) -> list[ast.stmt]:
    try:
        return ast.parse(source).body
    except (SyntaxError, ValueError):
        return []


def statements(problem_statement: str) -> list[ast.stmt]:
    """The example statements of a problem statement, in order (sessions first within a block)."""
    found: list[ast.stmt] = []
    lines = problem_statement.splitlines()
    session = _session_statements(lines) + _ipython_cells(lines)
    for text in session:
        found.extend(_parsed(text.rstrip()))
    if not session:
        for block in _fenced_blocks(problem_statement):
            source = "\n".join(block)
            if source.lstrip().startswith(("diff ", "--- ", "Traceback")):
                continue
            found.extend(_parsed(source))
    return [s for s in found if len(ast.unparse(s)) <= MAX_STATEMENT_CHARS][:MAX_STATEMENTS]


def _observed(stmt: ast.stmt, used_later: set[str]) -> list[str]:
    """The statement as the replay should run it (see the module docstring), unindented."""
    if isinstance(stmt, ast.Expr):
        value = stmt.value
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "print":
            return [f"assert str({ast.unparse(a)})" for a in value.args if not _is_star(a)]
        return [f"assert {ast.unparse(value)}"]
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id not in used_later
    ):
        return [ast.unparse(stmt), f"assert {stmt.targets[0].id}"]
    return [ast.unparse(stmt)]


def _is_star_import(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.ImportFrom)
        and stmt.module is not None
        and stmt.level == 0
        and any(a.name == "*" for a in stmt.names)
    )


def _loaded(stmt: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _is_star(node: ast.expr) -> bool:
    return isinstance(node, ast.Starred)


def _changed_modules(task: Task) -> list[str]:
    """The modules gold changes and their top-level packages, most general first."""
    try:
        gold = diffs.read(task.gold_diff)
    except diffs.DiffError:
        return []
    out: list[str] = []
    for f in gold.files:
        if is_test_path(f.path) or f.is_deleted:
            continue
        module = pysource.module_name(f.path)
        if module is None:
            continue
        top = module.split(".")[0]
        for name in (top, module):
            if name not in out:
                out.append(name)
    return out


def _indented(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())


def module_source(task: Task) -> str | None:
    """The synthetic test module of the task's examples, None when the statement shows none."""
    found = statements(task.problem_statement)
    if not found:
        return None
    head = [f'"""The examples of the issue of {task.instance_id}, replayed as probes."""', ""]
    starred = [s.module for s in found if _is_star_import(s) and isinstance(s, ast.ImportFrom)]
    for module in dict.fromkeys([*_changed_modules(task), *starred]):
        head += ["try:", f"    from {module} import *", "except Exception:", "    pass"]
    body: list[str] = []
    for i, stmt in enumerate(found):
        if _is_star_import(stmt):
            continue  # only allowed at module level: imported in the head
        used_later: set[str] = set()
        for later in found[i + 1 :]:
            used_later |= _loaded(later)
        for step in _observed(stmt, used_later):
            body += ["    try:", _indented(step, " " * 8), "    except Exception:", "        pass"]
    source = "\n".join([*head, "", "", f"def {FUNCTION}():", *body, ""])
    return source if _parsed(source) else None
