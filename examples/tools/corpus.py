"""The example task corpus: base commits, structural lint and the end-to-end `check`.

It needs the standard library, pytest for the test runs and, to read and edit patches, the
project's one diff model and test-path rule (`hackaudit.shared.anatomy`): run it with the
project's venv. Usage::

    python examples/tools/corpus.py check [-j N] [--only INSTANCE_ID ...] [--quick]
    python examples/tools/corpus.py base-commit examples/repos/semverlite
    python examples/tools/corpus.py lint

`check` rebuilds every library's base commit, then for each task, in a throw-away copy:
test patch alone (FAIL_TO_PASS fail, PASS_TO_PASS pass), gold + test patch (all pass), the
library's whole suite on gold, and what the task's label claims (a known exploit passes the
task's tests and fails the held-back tests; a robust gold loses to every dropped hunk or
dropped line; one hunk of an equivalent_hunk gold is droppable, every one-line mutant of
its other hunks fails the task's tests, and one of the droppable hunk passes them only if
it passes the whole suite too; an over_strict label's correct variant is the rewrite of gold
it names, prints what gold prints under the label's probe script, and fails exactly the
pinning tests; ...).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import tokenize
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from hackaudit.sandbox.envbuild.errors import SourceError
from hackaudit.sandbox.envbuild.snapshot import commit_source
from hackaudit.shared.anatomy import (
    FileDiff,
    Hunk,
    LineKind,
    Patch,
    Reading,
    emit_patch,
    is_test_file,
    is_test_path,
    parse_patch,
    read_patch,
)

EXAMPLES = Path(__file__).resolve().parents[1]
REPOS = EXAMPLES / "repos"
TASKS = EXAMPLES / "tasks"
LABELS = EXAMPLES / "labels.json"


LABEL_KINDS = (
    "hackable",
    "robust",
    "broken",
    "flaky",
    "empty_passes",
    "equivalent_hunk",
    "over_strict",
)
HOW_KINDS = (
    "one_example_asserted",
    "edge_case_untested",
    "type_only_checked",
    "no_exception_only",
    "harness_hole",
)
# What the tests of an over_strict task pin beyond the issue, which a correct rewrite changes.
PIN_KINDS = ("docstring_text", "source_text", "call_order")
# The semantics-preserving rewrite of gold an over_strict label's correct variant makes.
REWRITE_KINDS = ("docstring", "rename_locals", "reorder_statements")
DIFFICULTIES = ("<15 min fix", "15 min - 1 hour", "1-4 hours")
REQUIRED_FIELDS = (
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "problem_statement",
    "hints_text",
    "version",
    "created_at",
    "difficulty",
    "test_command",
    "log_parser",
    "environment",
)
TEST_COMMANDS = {
    "pytest": "python -m pytest -rA -p no:cacheprovider",
    "unittest": "python -m unittest -v",
}
PASSED = "PASSED"
# A library's whole suite runs in under 3 s. A partial gold can loop for ever (slugkit-2's
# numbering without its stop), and every such run waits this long before it counts as failing.
RUN_TIMEOUT_S = 30
FLAKY_MAX_RUNS = 40


# --- git and base commits ---------------------------------------------------------------------


def _git_env() -> dict[str, str]:
    """The environment minus anything that would make git depart from the bare recipe."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    return env


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env or _git_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {result.stderr.strip()}")
    return result.stdout


def init_repo(repo_dir: str | Path, dest: str | Path) -> str:
    """Copy `repo_dir` to `dest` (which must not exist), commit it as the base; return HEAD.

    The recipe is the environment builder's (`hackaudit.sandbox.envbuild.snapshot`), which
    checks every example task's `base_commit` with it before an image is built: `git init -q -b
    main && git add -A && git commit -q -m base` with a fixed author, committer and date
    (2026-01-01), no host git configuration, byte-code and pytest caches left out.
    """
    try:
        return commit_source(Path(repo_dir), Path(dest))
    except SourceError as exc:
        raise RuntimeError(str(exc)) from exc


def base_commit(repo_dir: str | Path) -> str:
    """The reproducible base commit of a library folder such as examples/repos/semverlite."""
    with tempfile.TemporaryDirectory(prefix="hackaudit-base-") as tmp:
        return init_repo(repo_dir, Path(tmp) / "repo")


# --- tasks and labels -------------------------------------------------------------------------


def load_tasks(tasks_dir: Path = TASKS) -> list[dict]:
    """Every row of every examples/tasks/*.jsonl file, in file then line order."""
    rows = []
    for path in sorted(tasks_dir.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append(json.loads(line))
    return rows


def load_labels(path: Path = LABELS) -> dict[str, dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def library_of(task: dict) -> str:
    return task["instance_id"].split("__", 1)[0]


def source_dir(task: dict, tasks_dir: Path = TASKS) -> Path:
    return (tasks_dir / task["environment"]["source"]).resolve()


def decode_names(value: str | list[str]) -> list[str]:
    return json.loads(value) if isinstance(value, str) else list(value)


# --- patches ----------------------------------------------------------------------------------
# Read and written by the project's one diff model (`hackaudit.shared.anatomy`); a hunk is
# addressed by its index over the whole patch, a line by its index in `Hunk.lines`.


def touched_files(patch: str) -> list[str]:
    """Paths a unified diff touches, in the order it touches them (new path before old)."""
    files: list[str] = []
    for change in read_patch(patch, Reading.APPLY).files:
        sides = [path for path in (change.new_path, change.old_path) if path is not None]
        files.extend(path for path in dict.fromkeys(sides) if path not in files)
    return files


def render_patch(files: Iterable[FileDiff]) -> str:
    """A unified diff of `files`, every hunk header recounted.

    A file left without hunks is left out, unless it is created (its header alone does that).
    """
    kept = tuple(change for change in files if change.hunks or change.is_new)
    return emit_patch(Patch(files=kept), with_index=True)


def hunks(patch: str) -> list[tuple[str, Hunk]]:
    """(file, hunk) for every hunk, in patch order."""
    return [(change.path, hunk) for change in parse_patch(patch).files for hunk in change.hunks]


def _edit_hunk(patch: str, index: int, edit: Callable[[Hunk], Hunk | None]) -> str:
    """`patch` with its `index`-th hunk (counted from 0) replaced by `edit(hunk)`, or dropped."""
    files = list(parse_patch(patch).files)
    seen = 0
    for position, change in enumerate(files):
        if index < seen + len(change.hunks):
            kept = list(change.hunks)
            edited = edit(kept[index - seen])
            kept[index - seen : index - seen + 1] = [] if edited is None else [edited]
            files[position] = replace(change, hunks=tuple(kept))
            return render_patch(files)
        seen += len(change.hunks)
    raise IndexError(f"patch has {seen} hunks, no hunk {index}")


def drop_hunk(patch: str, index: int) -> str:
    """`patch` without its `index`-th hunk (counted over the whole patch from 0)."""
    return _edit_hunk(patch, index, lambda _hunk: None)


def docstring_lines(source: str) -> set[int]:
    """Line numbers taken by docstrings (string-only statements) in Python source."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    lines: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def added_lines(
    patch: str, docstrings: dict[str, set[int]] | None = None
) -> list[tuple[int, int, str]]:
    """(hunk index, line index in hunk, text) of every added line of code.

    Blank lines, comments and lines of `docstrings` (path -> line numbers in the patched
    file) are left out: dropping them changes nothing.
    """
    docstrings = docstrings or {}
    found = []
    for hunk_index, (path, hunk) in enumerate(hunks(patch)):
        for numbered in hunk.numbered():
            line = numbered.line
            if line.kind is not LineKind.ADDED or numbered.new in docstrings.get(path, set()):
                continue
            code = line.text.strip()
            if code and not code.startswith("#"):
                found.append((hunk_index, numbered.index, line.text))
    return found


def drop_added_line(patch: str, hunk_index: int, line_index: int) -> str:
    """`patch` with one added line left out (the lines it replaces stay removed)."""
    return _edit_added_line(patch, hunk_index, line_index, None)


def replace_added_line(patch: str, hunk_index: int, line_index: int, text: str) -> str:
    """`patch` with one added line's code replaced by `text` (a whole line, indentation too)."""
    return _edit_added_line(patch, hunk_index, line_index, text)


def _edit_added_line(patch: str, hunk_index: int, line_index: int, new: str | None) -> str:
    """`patch` with one added line's text replaced by `new`, or the line removed when None."""

    def edit(hunk: Hunk) -> Hunk:
        lines = list(hunk.lines)
        if lines[line_index].kind is not LineKind.ADDED:
            raise ValueError("not an added line")
        if new is None:
            del lines[line_index]
        else:
            lines[line_index] = replace(lines[line_index], text=new)
        return replace(hunk, lines=tuple(lines))

    if hunk_index >= len(hunks(patch)):
        raise IndexError(f"no hunk {hunk_index}")
    return _edit_hunk(patch, hunk_index, edit)


_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_GUARD = re.compile(r"^(\s*)(if|elif) (.+):$")


def line_mutants(line: str) -> list[str]:
    """Wrong versions of one line of Python code, each a single small change.

    A statement becomes ``pass`` (its effect is lost); an ``if``/``elif`` condition becomes
    ``True`` and ``False`` (the guard always or never lets through); and each comparison
    (``==``, ``<``, ``is``, ``in`` ...) is negated in turn. Mutants that leave the line as
    it was are left out; some may not compile, which the tests then catch.
    """
    indent = line[: len(line) - len(line.lstrip())]
    code = line.strip()
    found: list[str] = []
    guard = _GUARD.match(line)
    if guard:
        found += [f"{indent}{guard.group(2)} {value}:" for value in ("True", "False")]
    elif code and not code.endswith((":", "(", "[", "{", ",")) and code != "pass":
        found.append(f"{indent}pass")
    found += [indent + flipped for flipped in _negated_comparisons(code)]
    return [mutant for mutant in dict.fromkeys(found) if mutant != line]


def _negated_comparisons(code: str) -> list[str]:
    try:
        tokens = [
            token
            for token in tokenize.generate_tokens(io.StringIO(code + "\n").readline)
            if token.type in (tokenize.OP, tokenize.NAME)
        ]
    except (tokenize.TokenError, SyntaxError):
        return []
    found = []
    in_loop = False
    for position, token in enumerate(tokens):
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        previous = tokens[position - 1] if position else None
        start, end = token.start[1], token.end[1]
        if token.string == "for":
            in_loop = True
        if token.type == tokenize.OP and token.string in _NEGATED:
            found.append(code[:start] + _NEGATED[token.string] + code[end:])
        elif token.string == "is" and following is not None and following.string == "not":
            found.append(code[:start] + "is" + code[following.end[1] :])
        elif token.string == "is":
            found.append(code[:start] + "is not" + code[end:])
        elif token.string == "not" and following is not None and following.string == "in":
            found.append(code[:start] + "in" + code[following.end[1] :])
        elif token.string == "in" and not in_loop and not (previous and previous.string == "not"):
            found.append(code[:start] + "not in" + code[end:])
    return found


# --- semantics-preserving rewrites --------------------------------------------------------------


def rewrite_problem(rewrite: str, gold: str, variant: str) -> str | None:
    """Why `variant` (one file's source) is not a `rewrite` of `gold`; None when it is one.

    ``docstring``: only docstrings differ (the ASTs without them are equal).
    ``rename_locals``: the ASTs are equal but for names, renamed one to one, and every
    renamed name is a local variable (assigned in a function; no parameter or attribute).
    ``reorder_statements``: the same lines in another order.
    """
    if gold == variant:
        return "it leaves the file as gold has it"
    try:
        gold_tree, variant_tree = ast.parse(gold), ast.parse(variant)
    except SyntaxError as exc:
        return f"it does not parse: {exc.msg}"
    if rewrite == "docstring":
        same = _without_docstrings(gold_tree) == _without_docstrings(variant_tree)
        return None if same else "it changes more than docstrings"
    if rewrite == "rename_locals":
        return _rename_problem(gold_tree, variant_tree)
    if rewrite == "reorder_statements":
        same = sorted(gold.splitlines()) == sorted(variant.splitlines())
        return None if same else "it changes more than the order of lines"
    return f"unknown rewrite {rewrite!r}"


def _without_docstrings(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def _rename_problem(gold_tree: ast.Module, variant_tree: ast.Module) -> str | None:
    gold_nodes, variant_nodes = list(ast.walk(gold_tree)), list(ast.walk(variant_tree))
    if [type(n) for n in gold_nodes] != [type(n) for n in variant_nodes]:
        return "it changes more than names"
    names: dict[str, str] = {}  # every name of gold -> its spelling in the variant
    for old, new in zip(gold_nodes, variant_nodes, strict=True):
        if isinstance(old, ast.Name) and isinstance(new, ast.Name):
            if names.setdefault(old.id, new.id) != new.id:
                return f"it renames {old.id!r} inconsistently"
            new.id = old.id
    if ast.dump(gold_tree) != ast.dump(variant_tree):
        return "it changes more than names"
    if len(set(names.values())) != len(names):
        return "two names become one"
    renamed = {old: new for old, new in names.items() if old != new}
    stored = {
        name.id
        for function in ast.walk(gold_tree)
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        for name in ast.walk(function)
        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store)
    }
    # parameters, attributes and keywords are no Name nodes: renaming them fails the dump
    not_local = sorted(name for name in renamed if name not in stored)
    return f"it renames names that are not locals: {not_local}" if not_local else None


# --- running tests ----------------------------------------------------------------------------

_PYTEST_LINE = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+)")
_UNITTEST_LINE = re.compile(
    r"^(\w+ \([\w.]+\)) \.\.\. "
    r"(ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$"
)
_UNITTEST_STATUS = {"ok": "PASSED", "FAIL": "FAILED", "ERROR": "ERROR"}


def parse_pytest_log(text: str) -> dict[str, str]:
    """Statuses from the short test summary of `pytest -rA`."""
    statuses: dict[str, str] = {}
    for line in text.splitlines():
        match = _PYTEST_LINE.match(line)
        if match:
            status, name = match.groups()
            if status == "ERROR" and name in statuses and statuses[name] == PASSED:
                statuses[name] = "ERROR"  # an error in teardown after a passing call
            else:
                statuses.setdefault(name, status)
    return statuses


def parse_unittest_log(text: str) -> dict[str, str]:
    """Statuses from the lines `unittest -v` prints, `name (module.Class.name) ... ok`."""
    statuses: dict[str, str] = {}
    for line in text.splitlines():
        match = _UNITTEST_LINE.match(line)
        if match:
            name, word = match.groups()
            if word.startswith("skipped"):
                statuses[name] = "SKIPPED"
            elif word == "expected failure":
                statuses[name] = "XFAIL"
            elif word == "unexpected success":
                statuses[name] = "FAILED"
            else:
                statuses[name] = _UNITTEST_STATUS[word]
    return statuses


LOG_PARSERS: dict[str, Callable[[str], dict[str, str]]] = {
    "pytest": parse_pytest_log,
    "unittest": parse_unittest_log,
}


def targets_for(task: dict, patches: Iterable[str]) -> list[str]:
    """What the sandbox appends to the test command: the test files the patches touch."""
    files: list[str] = []
    for patch in patches:
        for path in touched_files(patch):
            if path.endswith(".py") and is_test_file(path) and path not in files:
                files.append(path)
    if task["log_parser"] == "unittest":
        return [path[: -len(".py")].replace("/", ".") for path in files]
    return files


_bytecode_cache: Path | None = None


def _run_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "PYTHON", "GIT_")) and k != "COV_CORE_SOURCE"
    }
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if _bytecode_cache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(_bytecode_cache)
    # The sandbox image has pytest alone; plugins of the calling environment stay out.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


_WARM_TEST = """\
import calendar, collections, dataclasses, datetime, functools, io, random, re, string
import tempfile, textwrap, typing, unicodedata, unittest


class WarmUp(unittest.TestCase):
    def test_nothing(self):
        self.assertTrue(True)
"""


def warm_bytecode_cache(root: Path) -> None:
    """Compile what the test runs import (pytest, the standard library) once, under `root`.

    Later runs read that cache but never write to it: the libraries' own files, which the
    scenarios keep rewriting, are always compiled afresh.
    """
    global _bytecode_cache
    env = _run_env()
    env.pop("PYTHONDONTWRITEBYTECODE")
    env["PYTHONPYCACHEPREFIX"] = str(root)
    project = root.parent / "warm"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "__init__.py").write_text("")
    (project / "tests" / "test_warm.py").write_text(_WARM_TEST)
    for command in TEST_COMMANDS.values():
        subprocess.run(
            [sys.executable, *shlex.split(command)[1:]],
            cwd=project,
            env=env,
            capture_output=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    _bytecode_cache = root


def run_tests(workdir: Path, task: dict, targets: Sequence[str]) -> tuple[dict[str, str], str]:
    """Run the task's test command on `targets` (all tests when empty); statuses and log."""
    command = shlex.split(task["test_command"])
    if command[0] == "python":
        command[0] = sys.executable
    try:
        result = subprocess.run(
            [*command, *targets],
            cwd=workdir,
            env=_run_env(),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {}, "timeout"
    log = result.stdout + result.stderr
    return LOG_PARSERS[task["log_parser"]](log), log


# --- structural lint --------------------------------------------------------------------------


def lint(tasks: list[dict], labels: dict[str, dict]) -> list[str]:
    """Problems with the rows and the labels file that need no test run to see."""
    problems: list[str] = []
    seen: set[str] = set()
    for task in tasks:
        iid = task.get("instance_id", "?")
        missing = [name for name in REQUIRED_FIELDS if name not in task]
        if missing:
            problems.append(f"{iid}: missing fields {missing}")
            continue
        lib = library_of(task)
        if iid in seen:
            problems.append(f"{iid}: duplicate instance_id")
        seen.add(iid)
        if not re.fullmatch(rf"{re.escape(lib)}__{re.escape(lib)}-\d+", iid):
            problems.append(f"{iid}: instance_id is not <lib>__<lib>-<n>")
        if task["repo"] != f"hackaudit-examples/{lib}":
            problems.append(f"{iid}: repo should be hackaudit-examples/{lib}")
        for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            value = task[name]
            if not isinstance(value, str):
                problems.append(f"{iid}: {name} must be a JSON-encoded string")
                continue
            decoded = json.loads(value)
            if not isinstance(decoded, list) or not all(isinstance(v, str) for v in decoded):
                problems.append(f"{iid}: {name} is not a list of names")
        if not decode_names(task["FAIL_TO_PASS"]):
            problems.append(f"{iid}: FAIL_TO_PASS is empty")
        if task["difficulty"] not in DIFFICULTIES:
            problems.append(f"{iid}: difficulty {task['difficulty']!r}")
        parser = task["log_parser"]
        if TEST_COMMANDS.get(parser) != task["test_command"]:
            problems.append(f"{iid}: test_command does not fit log_parser {parser!r}")
        env = task["environment"]
        expected_env = {"source": f"../repos/{lib}", "pip_packages": ["pytest"], "install": None}
        if env != expected_env:
            problems.append(f"{iid}: environment should be {expected_env}")
        for path in touched_files(task["patch"]):
            if is_test_path(path):
                problems.append(f"{iid}: gold patch touches test file {path}")
        for path in touched_files(task["test_patch"]):
            if not is_test_path(path):
                problems.append(f"{iid}: test patch touches non-test file {path}")
        problems.extend(_lint_names(task))
        problems.extend(_lint_label(iid, labels.get(iid)))
        pinning = (labels.get(iid) or {}).get("pinning_tests") or []
        unlisted = [name for name in pinning if name not in decode_names(task["FAIL_TO_PASS"])]
        if unlisted:
            problems.append(f"{iid}: pinning tests not in FAIL_TO_PASS: {unlisted}")
    for iid in sorted(set(labels) - seen):
        problems.append(f"{iid}: labelled but no such task")
    return problems


def _lint_names(task: dict) -> list[str]:
    iid = task["instance_id"]
    problems = []
    names = decode_names(task["FAIL_TO_PASS"]) + decode_names(task["PASS_TO_PASS"])
    if task["log_parser"] == "pytest":
        pattern = re.compile(r"^tests/[\w/]+\.py::[\w:]+(\[[^\]\s]+\])?$")
    else:
        pattern = re.compile(r"^(\w+) \(tests\.[\w.]+\.\1\)$")
    for name in names:
        if not pattern.match(name):
            problems.append(f"{iid}: test name {name!r} is not in {task['log_parser']} form")
    if len(set(names)) != len(names):
        problems.append(f"{iid}: a test is listed twice")
    return problems


def _lint_label(iid: str, entry: dict | None) -> list[str]:
    if entry is None:
        return [f"{iid}: no label"]
    problems = []
    label = entry.get("label")
    if label not in LABEL_KINDS:
        return [f"{iid}: unknown label {label!r}"]
    if entry.get("valid") is not (label not in ("broken", "flaky")):
        problems.append(f"{iid}: valid should be {label not in ('broken', 'flaky')}")
    if not entry.get("note"):
        problems.append(f"{iid}: label has no note")
    if label == "hackable":
        if entry.get("how") not in HOW_KINDS:
            problems.append(f"{iid}: hackable label needs `how` in {HOW_KINDS}")
        for name in ("known_exploit", "held_back_test_patch", "held_back_tests"):
            if not entry.get(name):
                problems.append(f"{iid}: hackable label needs {name}")
        exploit_tests = [
            p for p in touched_files(entry.get("known_exploit", "")) if is_test_path(p)
        ]
        if entry.get("how") == "harness_hole" and not exploit_tests:
            problems.append(f"{iid}: a harness_hole exploit works through test files")
        if entry.get("how") != "harness_hole" and exploit_tests:
            problems.append(f"{iid}: the exploit touches test files {exploit_tests}")
        for path in touched_files(entry.get("held_back_test_patch", "")):
            if not is_test_path(path):
                problems.append(f"{iid}: held-back test patch touches non-test file {path}")
    elif "how" in entry or "known_exploit" in entry:
        problems.append(f"{iid}: only hackable labels carry how / known_exploit")
    if label == "equivalent_hunk" and not isinstance(entry.get("droppable_hunk"), int):
        problems.append(f"{iid}: equivalent_hunk label needs droppable_hunk (an int)")
    if label == "over_strict":
        problems.extend(_lint_over_strict(iid, entry))
    elif any(name in entry for name in OVER_STRICT_FIELDS):
        problems.append(f"{iid}: only over_strict labels carry {', '.join(OVER_STRICT_FIELDS)}")
    return problems


OVER_STRICT_FIELDS = ("pins", "rewrite", "correct_variant", "pinning_tests", "probe_script")


def _lint_over_strict(iid: str, entry: dict) -> list[str]:
    problems = []
    if entry.get("pins") not in PIN_KINDS:
        problems.append(f"{iid}: over_strict label needs `pins` in {PIN_KINDS}")
    if entry.get("rewrite") not in REWRITE_KINDS:
        problems.append(f"{iid}: over_strict label needs `rewrite` in {REWRITE_KINDS}")
    for name in ("correct_variant", "pinning_tests", "probe_script"):
        if not entry.get(name):
            problems.append(f"{iid}: over_strict label needs {name}")
    variant_tests = [p for p in touched_files(entry.get("correct_variant", "")) if is_test_path(p)]
    if variant_tests:
        problems.append(f"{iid}: the correct variant touches test files {variant_tests}")
    return problems


def label_counts(labels: dict[str, dict]) -> tuple[Counter[str], Counter[str]]:
    kinds = Counter(entry["label"] for entry in labels.values())
    hows = Counter(entry["how"] for entry in labels.values() if entry["label"] == "hackable")
    return kinds, hows


# --- the check --------------------------------------------------------------------------------


class CheckFailed(Exception):
    """A task does not hold up to what its row and label claim."""


@dataclass
class Outcome:
    instance_id: str
    label: str
    ok: bool
    lines: list[str]
    runs: int = 0


Step = tuple[str, str]  # (patch text, what it is, for messages)


class Workspace:
    """A git copy of one library at its base commit, reset before every scenario."""

    def __init__(self, task: dict, root: Path) -> None:
        self.task = task
        self.dir = root / "repo"
        self.patch_dir = root / "patches"
        self.patch_dir.mkdir()
        self.head = init_repo(source_dir(task), self.dir)
        self.runs = 0

    def reset(self) -> None:
        git(self.dir, "reset", "-q", "--hard", self.head)
        git(self.dir, "clean", "-q", "-fdx")

    def apply(self, patch: str, what: str) -> None:
        path = self.patch_dir / f"{len(list(self.patch_dir.iterdir()))}.diff"
        path.write_text(patch, encoding="utf-8")
        try:
            git(self.dir, "apply", "--whitespace=nowarn", str(path))
        except RuntimeError as exc:
            raise CheckFailed(f"{what} does not apply: {exc}") from None

    def run(self, steps: Sequence[Step], targets: Sequence[str] | None = None) -> dict[str, str]:
        """Reset, apply the patches in order, run the tests the patches touch (or `targets`)."""
        self.reset()
        for patch, what in steps:
            if patch:
                self.apply(patch, what)
        if targets is None:
            targets = targets_for(self.task, [patch for patch, _ in steps])
        self.runs += 1
        statuses, _ = run_tests(self.dir, self.task, targets)
        return statuses


def _not_passed(statuses: dict[str, str], names: Iterable[str]) -> list[str]:
    return [name for name in names if statuses.get(name) != PASSED]


def _passed(statuses: dict[str, str], names: Iterable[str]) -> list[str]:
    return [name for name in names if statuses.get(name) == PASSED]


def _short(names: Sequence[str]) -> str:
    shown = ", ".join(names[:3])
    return shown + (f" (+{len(names) - 3} more)" if len(names) > 3 else "")


def check_task(task: dict, label: dict, *, quick: bool = False) -> Outcome:
    """Every scenario of one task in a fresh copy of its library."""
    iid = task["instance_id"]
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix=f"hackaudit-{iid}-") as tmp:
        ws = Workspace(task, Path(tmp))
        try:
            _check_task(ws, task, label, lines, quick=quick)
        except CheckFailed as exc:
            lines.append(f"FAIL {exc}")
            return Outcome(iid, label["label"], False, lines, ws.runs)
    return Outcome(iid, label["label"], True, lines, ws.runs)


def _check_task(ws: Workspace, task: dict, label: dict, lines: list[str], *, quick: bool) -> None:
    kind = label["label"]
    f2p = decode_names(task["FAIL_TO_PASS"])
    p2p = decode_names(task["PASS_TO_PASS"])
    gold: Step = (task["patch"], "gold patch")
    test: Step = (task["test_patch"], "test patch")

    if ws.head != task["base_commit"]:
        raise CheckFailed(f"base_commit is {task['base_commit']}, the recipe gives {ws.head}")
    lines.append("base_commit reproduces")

    statuses = ws.run([test])
    if _not_passed(statuses, p2p):
        raise CheckFailed(f"PASS_TO_PASS fails on base: {_short(_not_passed(statuses, p2p))}")
    if kind == "empty_passes":
        if _not_passed(statuses, f2p):
            failing = _short(_not_passed(statuses, f2p))
            raise CheckFailed(f"labelled empty_passes, yet without a fix {failing} fail")
        lines.append(f"test patch alone: all {len(f2p)} FAIL_TO_PASS already pass")
    else:
        if _passed(statuses, f2p):
            raise CheckFailed(f"FAIL_TO_PASS passes with no fix: {_short(_passed(statuses, f2p))}")
        lines.append(
            f"test patch alone: {len(f2p)} FAIL_TO_PASS fail, {len(p2p)} PASS_TO_PASS pass"
        )

    statuses = ws.run([gold, test])
    unlisted = sorted(set(statuses) - set(f2p) - set(p2p))
    if unlisted:
        raise CheckFailed(f"tests of the touched files missing from the lists: {_short(unlisted)}")
    if _not_passed(statuses, p2p):
        raise CheckFailed(f"PASS_TO_PASS fails on gold: {_short(_not_passed(statuses, p2p))}")
    if kind == "broken":
        failing = _not_passed(statuses, f2p)
        if not failing:
            raise CheckFailed("labelled broken, yet gold passes every FAIL_TO_PASS")
        lines.append(f"gold + test: {len(failing)} FAIL_TO_PASS still fail: {_short(failing)}")
    elif kind == "flaky":
        _check_flaky(ws, gold, test, f2p, lines)
    else:
        if _not_passed(statuses, f2p):
            raise CheckFailed(f"gold fails FAIL_TO_PASS: {_short(_not_passed(statuses, f2p))}")
        lines.append(f"gold + test: all {len(f2p) + len(p2p)} listed tests pass")

    statuses = ws.run([gold, test], targets=[])
    tolerated = set(f2p) if kind in ("broken", "flaky") else set()
    failing = [name for name, status in statuses.items() if status != PASSED]
    if not statuses or set(failing) - tolerated:
        raise CheckFailed(f"wider suite on gold: {_short(failing) or 'no test ran'}")
    lines.append(
        f"wider suite on gold: {len(statuses) - len(failing)} of {len(statuses)} pass"
        + (f" (failing: the {kind} task's own {_short(failing)})" if failing else "")
    )

    if kind == "hackable":
        _check_exploit(ws, task, label, gold, test, f2p + p2p, lines)
    elif kind == "equivalent_hunk":
        _check_equivalent_hunk(ws, task, label, test, f2p + p2p, lines, quick=quick)
    elif kind == "robust" and not quick:
        _check_mutants(ws, task, test, f2p + p2p, lines)
    elif kind == "over_strict":
        _check_over_strict(ws, task, label, gold, test, f2p + p2p, lines, quick=quick)


def _check_flaky(ws: Workspace, gold: Step, test: Step, f2p: list[str], lines: list[str]) -> None:
    """Run gold until both outcomes have shown (a fair coin repeats 40 times once in 2**39)."""
    outcomes: list[bool] = []
    while len(outcomes) < FLAKY_MAX_RUNS and len(set(outcomes)) < 2:
        outcomes.append(not _not_passed(ws.run([gold, test]), f2p))
    if len(set(outcomes)) < 2:
        raise CheckFailed(f"labelled flaky, yet {len(outcomes)} gold runs all gave {outcomes[0]}")
    lines.append(f"gold + test: FAIL_TO_PASS passed in {sum(outcomes)} of {len(outcomes)} runs")


def _check_exploit(
    ws: Workspace, task: dict, label: dict, gold: Step, test: Step, graded: list[str], lines
) -> None:
    exploit: Step = (label["known_exploit"], "known exploit")
    held: Step = (label["held_back_test_patch"], "held-back test patch")
    held_tests = label["held_back_tests"]
    if label["known_exploit"].strip() == task["patch"].strip():
        raise CheckFailed("the known exploit is the gold patch")
    statuses = ws.run([exploit, test])
    if _not_passed(statuses, graded):
        failing = _short(_not_passed(statuses, graded))
        raise CheckFailed(f"the exploit fails the task's tests: {failing}")
    lines.append(f"exploit + test: all {len(graded)} listed tests pass")
    statuses = ws.run([exploit, test, held])
    if _passed(statuses, held_tests):
        passing = _short(_passed(statuses, held_tests))
        raise CheckFailed(f"the exploit passes held-back tests: {passing}")
    lines.append(f"exploit + held-back: all {len(held_tests)} held-back tests fail")
    statuses = ws.run([gold, test, held])
    if _not_passed(statuses, held_tests + graded):
        failing = _short(_not_passed(statuses, held_tests + graded))
        raise CheckFailed(f"gold fails with the held-back tests: {failing}")
    lines.append(f"gold + held-back: all {len(held_tests)} held-back tests pass")


def _check_equivalent_hunk(
    ws: Workspace, task: dict, label: dict, test: Step, graded: list[str], lines, *, quick: bool
) -> None:
    droppable = label["droppable_hunk"]
    count = len(hunks(task["patch"]))
    if count < 2:
        raise CheckFailed("an equivalent_hunk gold needs two hunks or more")
    for index in range(count):
        variant: Step = (drop_hunk(task["patch"], index), f"gold without hunk {index}")
        passes = not _not_passed(ws.run([variant, test]), graded)
        if index != droppable:
            if passes:
                raise CheckFailed(f"gold without hunk {index} passes too")
            continue
        if not passes:
            raise CheckFailed(f"gold without hunk {index} fails the task's tests")
        failing = _wider_failures(ws, [variant, test])
        if failing:
            raise CheckFailed(f"gold without hunk {index} fails the wider suite: {_short(failing)}")
    lines.append(f"gold without hunk {droppable} passes everything; without any other it fails")
    if not quick:
        _check_line_mutants(ws, task, droppable, test, graded, lines)


def _wider_failures(ws: Workspace, steps: Sequence[Step]) -> list[str]:
    """The tests of the library's whole suite that do not pass with `steps` applied."""
    statuses = ws.run(steps, targets=[])
    if not statuses:
        return ["no test ran"]
    return [name for name, status in statuses.items() if status != PASSED]


def _check_line_mutants(
    ws: Workspace, task: dict, droppable: int, test: Step, graded: list[str], lines
) -> None:
    """Only the droppable hunk may be changed without the task's tests noticing.

    Every single-line mutant of gold (see `line_mutants`) in any other hunk must fail the
    task's tests. One in the droppable hunk may pass them only if it passes the library's
    whole suite too, as dropping that hunk does: otherwise the tests accept a wrong patch.
    """
    patch = task["patch"]
    caught = {"kept": 0, "droppable": 0}
    equivalent = 0
    for hunk_index, line_index, text in added_lines(patch, _gold_docstrings(ws, patch)):
        for mutant in line_mutants(text):
            what = f"hunk {hunk_index} line {text.strip()!r} -> {mutant.strip()!r}"
            variant = replace_added_line(patch, hunk_index, line_index, mutant)
            steps = [(variant, f"gold with {what}"), test]
            if _not_passed(ws.run(steps), graded):
                caught["droppable" if hunk_index == droppable else "kept"] += 1
                continue
            if hunk_index != droppable:
                raise CheckFailed(f"the task's tests accept gold with {what}")
            failing = _wider_failures(ws, steps)
            if failing:
                raise CheckFailed(
                    f"the task's tests accept gold with {what}, "
                    f"which fails the wider suite: {_short(failing)}"
                )
            equivalent += 1
    if not caught["kept"]:
        raise CheckFailed(f"no one-line mutant to try outside hunk {droppable}")
    lines.append(
        f"line mutants: all {caught['kept']} outside hunk {droppable} fail the task's tests; "
        f"in hunk {droppable}: {caught['droppable']} fail them, {equivalent} harmless (the "
        "whole suite passes)"
    )


def _gold_docstrings(ws: Workspace, patch: str) -> dict[str, set[int]]:
    """Docstring lines of the files gold touches, as gold leaves them."""
    ws.reset()
    ws.apply(patch, "gold patch")
    return {
        path: docstring_lines((ws.dir / path).read_text(encoding="utf-8"))
        for path in touched_files(patch)
        if path.endswith(".py") and (ws.dir / path).exists()
    }


def _check_mutants(
    ws: Workspace, task: dict, test: Step, graded: list[str], lines, kind: str = "robust"
) -> None:
    """A robust gold: dropping any hunk, or any added line of code, fails `graded`."""
    patch = task["patch"]
    variants: list[Step] = []
    if len(hunks(patch)) > 1:
        variants += [(drop_hunk(patch, i), f"hunk {i}") for i in range(len(hunks(patch)))]
    variants += [
        (drop_added_line(patch, h, i), f"added line {text.strip()!r}")
        for h, i, text in added_lines(patch, _gold_docstrings(ws, patch))
    ]
    survivors = []
    for variant, what in variants:
        try:
            statuses = ws.run([(variant, f"gold without {what}"), test])
        except CheckFailed:
            continue  # a partial gold that does not apply is no surviving fix
        if not _not_passed(statuses, graded):
            survivors.append(what)
    if survivors:
        raise CheckFailed(f"labelled {kind}, yet the tests pass without {_short(survivors)}")
    lines.append(f"{kind}: all {len(variants)} partial golds (a hunk or a line dropped) fail")


def _check_over_strict(
    ws: Workspace,
    task: dict,
    label: dict,
    gold: Step,
    test: Step,
    graded: list[str],
    lines,
    *,
    quick: bool,
) -> None:
    """A correct rewrite of gold that the task's tests reject, and tests strong otherwise.

    The correct variant must apply, behave as gold (the probe script prints the same with
    either, and something else with no fix; the library's whole suite passes with it but
    for the pinning tests), and
    fail exactly the pinning tests among those the task grades. Without the pinning tests
    the task's tests must still catch every partial gold, as a robust task's do.
    """
    if label["correct_variant"].strip() == task["patch"].strip():
        raise CheckFailed("the correct variant is the gold patch")
    variant: Step = (label["correct_variant"], "correct variant")
    _check_rewrite(ws, task, label)
    lines.append(f"correct variant is a {label['rewrite']} rewrite of gold")
    pinning = list(label["pinning_tests"])
    rejected = _not_passed(ws.run([variant, test]), graded)
    if set(rejected) != set(pinning):
        raise CheckFailed(
            f"the correct variant fails {_short(rejected) or 'no test'}, "
            f"not exactly the pinning tests {_short(pinning)}"
        )
    lines.append(f"correct variant + test: rejected by the pinning tests alone ({len(pinning)})")
    stray = sorted(set(_wider_failures(ws, [variant, test])) - set(pinning))
    if stray:
        raise CheckFailed(f"the correct variant fails the wider suite: {_short(stray)}")
    gold_out, variant_out = (
        _probe_output(ws, step, label["probe_script"]) for step in (gold, variant)
    )
    if gold_out != variant_out:
        raise CheckFailed("the probe script prints differently with gold and the correct variant")
    if _probe_output(ws, ("", "base"), label["probe_script"], tolerate_failure=True) == gold_out:
        raise CheckFailed("the probe script prints the same with no fix: it probes nothing")
    lines.append(
        f"correct variant behaves as gold: the wider suite passes but for the pinning tests, "
        f"and {len(gold_out.splitlines())} probe lines match (the unfixed base's differ)"
    )
    if not quick:
        behaviour = [name for name in graded if name not in pinning]
        _check_mutants(ws, task, test, behaviour, lines, kind="over_strict")


def _check_rewrite(ws: Workspace, task: dict, label: dict) -> None:
    """The correct variant changes gold's files by the rewrite its label names, no more."""
    files = touched_files(task["patch"])
    if sorted(touched_files(label["correct_variant"])) != sorted(files):
        raise CheckFailed("the correct variant touches other files than gold")
    sources = []
    for patch, what in ((task["patch"], "gold patch"), (label["correct_variant"], "variant")):
        ws.reset()
        ws.apply(patch, what)
        sources.append({path: (ws.dir / path).read_text(encoding="utf-8") for path in files})
    gold, variant = sources
    changed = [path for path in files if gold[path] != variant[path]]
    if not changed:
        raise CheckFailed("the correct variant leaves gold's files as they are")
    for path in changed:
        problem = rewrite_problem(label["rewrite"], gold[path], variant[path])
        if problem:
            raise CheckFailed(
                f"the correct variant is no {label['rewrite']} rewrite of {path}: {problem}"
            )


def _probe_output(ws: Workspace, step: Step, script: str, tolerate_failure: bool = False) -> str:
    """What `script` prints, run from the library's root with `step` applied alone.

    A script that fails or prints nothing is a fault, unless `tolerate_failure` (as on the
    unfixed base, where it may well fail): then its output is returned as it is.
    """
    ws.reset()
    if step[0]:
        ws.apply(*step)
    try:
        result = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ws.dir,
            env=_run_env(),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise CheckFailed(f"the probe script times out with the {step[1]}") from None
    if not tolerate_failure and (result.returncode != 0 or not result.stdout.strip()):
        detail = result.stderr.strip().splitlines()[-1:] or ["no output"]
        raise CheckFailed(f"the probe script fails with the {step[1]}: {detail[0]}")
    return result.stdout


@contextlib.contextmanager
def bytecode_cache() -> Iterator[None]:
    """Within the block, test runs share a warmed, read-only bytecode cache."""
    global _bytecode_cache
    with tempfile.TemporaryDirectory(prefix="hackaudit-pyc-") as cache:
        warm_bytecode_cache(Path(cache) / "pyc")
        try:
            yield
        finally:
            _bytecode_cache = None


def check(
    only: Sequence[str] = (),
    jobs: int | None = None,
    quick: bool = False,
    report: Callable[[str], None] = print,
) -> bool:
    """Lint, then check every task (or those in `only`); report; True when all hold up."""
    tasks = load_tasks()
    labels = load_labels()
    problems = lint(tasks, labels)
    for problem in problems:
        report(f"LINT {problem}")
    if only:
        unknown = set(only) - {task["instance_id"] for task in tasks}
        if unknown:
            report(f"unknown instance ids: {', '.join(sorted(unknown))}")
            return False
        tasks = [task for task in tasks if task["instance_id"] in only]
    tasks = [task for task in tasks if task["instance_id"] in labels]
    with bytecode_cache(), ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        outcomes = list(
            pool.map(lambda t: check_task(t, labels[t["instance_id"]], quick=quick), tasks)
        )
    for outcome in outcomes:
        mark = "ok  " if outcome.ok else "FAIL"
        report(f"{mark} {outcome.instance_id} [{outcome.label}] ({outcome.runs} test runs)")
        for line in outcome.lines:
            report(f"       {line}")
    failed = [outcome.instance_id for outcome in outcomes if not outcome.ok]
    kinds, hows = label_counts({t["instance_id"]: labels[t["instance_id"]] for t in tasks})
    report(
        f"{len(outcomes) - len(failed)}/{len(outcomes)} tasks hold up; labels "
        + ", ".join(f"{kind}={kinds[kind]}" for kind in LABEL_KINDS if kinds[kind])
        + "; hackable by "
        + ", ".join(f"{how}={count}" for how, count in sorted(hows.items()))
    )
    if failed:
        report(f"failed: {', '.join(failed)}")
    return not failed and not problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("check", help="verify every task end to end")
    run.add_argument("--only", nargs="*", default=[], help="instance ids to check")
    run.add_argument("-j", "--jobs", type=int, default=None, help="tasks checked at once")
    run.add_argument("--quick", action="store_true", help="skip the mutation runs")
    base = sub.add_parser("base-commit", help="print the base commit of a library folder")
    base.add_argument("repo_dir", type=Path)
    sub.add_parser("lint", help="structural checks only, no test runs")
    args = parser.parse_args(argv)
    if args.command == "base-commit":
        print(base_commit(args.repo_dir))
        return 0
    if args.command == "lint":
        problems = lint(load_tasks(), load_labels())
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    return 0 if check(args.only, args.jobs, args.quick) else 1


if __name__ == "__main__":
    sys.exit(main())
