"""Differential probes: run gold and a candidate on the same inputs and compare what they give.

A probe is a generated test module that calls, on fixed inputs,

* the functions gold changes (top-level ones with the tests' inputs, values beside them and
  generic values; methods on instances built the way the tests build them);
* the functions and classes the tests call — the public entry points the tests go through — with
  the tests' inputs and values beside them (`probe_inputs`).

and, after them, the graded tests themselves replayed with each assert turned into an
observation of what it checks (`replay`).

Each case's outcome — the value returned in a stable form (repr without memory addresses, the
state of an object without a repr of its own, sets sorted, iterators drained with each item
written down as it is yielded, and marked when it changed later) or the type of the
exception raised — is computed twice when the module is imported (a case whose two outcomes
differ is *unstable*) and written, as a digest and a readable head, into the name of one test
method. The runner's own report carries the names, so nothing depends on a log tail. Whatever the
task's own runner (pytest, unittest, Django's, sympy's `bin/test`), the probe module runs under
the image's interpreter as `python -m unittest -v`, which every Python has; the run applies the
task's test patch too, so the tests read as the graders see them. Hash randomisation is off.

Gold runs the probe several times; a case counts only when every gold run gives it the same
outcome. A candidate differs from gold when its outcome for such a case differs. For a private
helper (`_name`) a case where gold raises is left out: that input is outside what the helper is
ever given, and a difference there says nothing about the patch.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hackaudit.attacker.domain.confirm import issue_examples, replay
from hackaudit.attacker.domain.confirm.probe_inputs import Inputs, input_sets, pool_sets
from hackaudit.attacker.domain.confirm.probe_source import CLASS, LOADED, PROBE_PATH, render
from hackaudit.attacker.domain.confirm.replay import UNSTABLE, ReplayTarget, agreed
from hackaudit.attacker.domain.generate import targets
from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.attacker.domain.reading.layout import layout
from hackaudit.attacker.domain.reading.runners import Runner, runner_of
from hackaudit.attacker.domain.reading.test_literals import TestLiterals, extract, is_literal_value
from hackaudit.shared.contracts import RunResult, Task

__all__ = ["PROBE_PATH", "Output", "ProbeCase", "plan", "probe_command", "suite_command"]

MAX_CASES = 400
PER_CALLABLE = 60
MAX_INITS = 4
_NAME = re.compile(r"test_case(\d+)_([0-9a-f]{12}|unstable|timeout)_?(\w*)")
_PYTEST = re.compile(r"(?:\S*python[\d.]*\s+-m\s+)?\S*pytest\b")
_UNITTEST = re.compile(r"\S*python[\d.]*\s+-m\s+unittest\b")
_CLASS = re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)")


@dataclass(frozen=True)
class ProbeCase:
    modules: tuple[str, ...]  # where `function` is looked up, first match wins
    function: str  # dotted: "f", "Class" (a constructor call) or "Class.method"
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()
    init: Inputs | None = None  # for "Class.method": how the instance is built
    strict: bool = True  # False: a case gold raises on is no evidence (private helpers) ...
    deliberate: frozenset[str] = frozenset()  # ... unless gold's own added lines raise that type

    def describe(self) -> str:
        call = ", ".join([repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs])
        owner = self.function
        if self.init is not None:
            cls, _, method = self.function.rpartition(".")
            init_args, init_kwargs = self.init
            built = ", ".join([repr(a) for a in init_args] + [f"{k}={v!r}" for k, v in init_kwargs])
            owner = f"{cls}({built}).{method}"
        return f"{owner}({call})"[:240]

    def row(self) -> str:
        return repr((self.modules, self.function, self.args, self.kwargs, self.init))


# --- planning ----------------------------------------------------------------------------------


def _class_of(gold: diffs.Patch, fn: targets.ChangedFunction) -> str | None:
    """The class a changed method belongs to, as far as its hunk (or the @@ line) shows."""
    hunk = gold.files[fn.file].hunks[fn.hunk]
    method_indent: int | None = None
    for side in (hunk.new_side(), hunk.old_side()):
        for i, line in enumerate(side):
            if re.match(rf"^\s*(async\s+)?def\s+{re.escape(fn.name)}\s*\(", line):
                method_indent = len(pysource.indent_of(line))
                for above in reversed(side[:i]):
                    match = _CLASS.match(above)
                    if match and len(match.group(1)) < method_indent:
                        return match.group(2)
    match = _CLASS.match(hunk.section)
    return match.group(2) if match else None


def _literal_inputs(literals: TestLiterals, name: str, *, attribute: bool | None) -> list[Inputs]:
    out = []
    for case in literals.for_function(name):
        if attribute is not None and case.via_attribute is not attribute:
            continue
        if is_literal_value(case.args) and is_literal_value(case.kwargs):
            out.append(case.inputs)
    return out


def _fits(sig: pysource.Signature | None, inputs: Inputs) -> bool:
    if sig is None:
        return True
    args, kwargs = inputs
    params = sig.call_params
    required = sig.required - (1 if sig.is_method else 0)
    if len(args) > len(params) and not sig.varargs:
        return False
    names = set(params[len(args) :]) | set(sig.keyword_only)
    if any(k not in names and not sig.varkw for k, _ in kwargs):
        return False
    return len(args) + sum(1 for k, _ in kwargs if k in params) >= required


def _arities(sig: pysource.Signature) -> list[int]:
    params = len(sig.call_params)
    required = sig.required - (1 if sig.is_method else 0)
    return sorted({required, min(params, max(required, 1))})


def _function_cases(
    fn: targets.ChangedFunction,
    module: str,
    literals: TestLiterals,
    constants: list[Any],
    deliberate: frozenset[str] = frozenset(),
) -> list[ProbeCase]:
    sig = fn.signature
    assert sig is not None
    found = [i for i in _literal_inputs(literals, fn.name, attribute=None) if _fits(sig, i)]
    inputs = input_sets(found, PER_CALLABLE) + pool_sets(_arities(sig), constants)
    strict = not fn.name.startswith("_")
    return [
        ProbeCase((module,), fn.name, args, kwargs, strict=strict, deliberate=deliberate)
        for args, kwargs in inputs
        if _fits(sig, (args, kwargs))
    ]


def _method_cases(
    fn: targets.ChangedFunction,
    cls: str,
    modules: tuple[str, ...],
    literals: TestLiterals,
    constants: list[Any],
    deliberate: frozenset[str] = frozenset(),
) -> list[ProbeCase]:
    sig = fn.signature
    assert sig is not None
    inits = input_sets(_literal_inputs(literals, cls, attribute=None) or [((), ())], MAX_INITS)
    found = [i for i in _literal_inputs(literals, fn.name, attribute=True) if _fits(sig, i)]
    calls = input_sets(found, PER_CALLABLE) if found else []
    if not calls:
        calls = [i for i in pool_sets(_arities(sig), constants) if _fits(sig, i)]
    strict = not fn.name.startswith("_")
    return [
        ProbeCase(
            modules,
            f"{cls}.{fn.name}",
            args,
            kwargs,
            init=init,
            strict=strict,
            deliberate=deliberate,
        )
        for args, kwargs in calls
        for init in inits
    ]


def _called_names(literals: TestLiterals, package: str | None, modules: Sequence[str]) -> list[str]:
    """Names the tests call directly (`f(...)`) or on a module (`pkg.f(...)`), in test order."""
    module_words = {package, *(m for name in modules for m in name.split("."))} - {None}
    out: list[str] = []
    for case in literals.cases:
        name = case.function
        if name.startswith(("test", "assert", "_")) or name in out:
            continue
        if case.via_attribute:
            root = (case.receiver or "").split(".")[0]
            if root not in module_words:
                continue
        out.append(name)
    return out


def _interleave(groups: Sequence[Sequence[ProbeCase]], limit: int) -> list[ProbeCase]:
    out: list[ProbeCase] = []
    seen: set[str] = set()
    depth = max((len(g) for g in groups), default=0)
    for rank in range(depth):
        for group in groups:
            if rank < len(group) and len(out) < limit:
                key = group[rank].row()
                if key not in seen:
                    seen.add(key)
                    out.append(group[rank])
    return out


def plan(task: Task, max_cases: int = MAX_CASES) -> list[ProbeCase]:
    """Probe cases for what gold changes and what the tests call (empty when nothing fits)."""
    try:
        gold = diffs.read(task.gold_diff)
    except diffs.DiffError:
        return []
    literals = extract(task.test_diff)
    deliberate = raised_by_gold(task.patch)
    constants = list({repr(c): c for c in literals.constants}.values())[:10]
    lay = layout(task.gold_diff, task.test_diff)
    changed = [m for m in map(pysource.module_name, lay.source_files) if m]
    tests = [m for m in map(pysource.module_name, lay.test_files) if m]
    lookup = tuple(dict.fromkeys([*tests, *([lay.package] if lay.package else []), *changed]))
    groups: list[list[ProbeCase]] = []
    probed: set[str] = set()
    for fn in targets.changed_functions(gold):
        sig = fn.signature
        module = pysource.module_name(fn.path)
        if sig is None or sig.is_async or module is None:
            continue
        if fn.top_level and not sig.is_method:
            groups.append(_function_cases(fn, module, literals, constants, deliberate))
            probed.add(fn.name)
        elif sig.is_method and sig.positional[0] == "self":
            cls = _class_of(gold, fn)
            if cls is not None:
                modules = tuple(dict.fromkeys([module, *lookup]))
                groups.append(_method_cases(fn, cls, modules, literals, constants, deliberate))
    for name in _called_names(literals, lay.package, changed):
        if name in probed:
            continue
        found = _literal_inputs(literals, name, attribute=None)
        groups.append([ProbeCase(lookup, name, a, k) for a, k in input_sets(found, PER_CALLABLE)])
    return _interleave(groups, max_cases)


# --- the file and what a run of it says --------------------------------------------------------


def source(cases: Sequence[ProbeCase], replayed: str = "") -> str:
    return render([c.row() for c in cases], replayed)


def patch(
    cases: Sequence[ProbeCase], task: Task | None = None, found: Sequence[ReplayTarget] = ()
) -> str:
    """The run's test patch: the task's own (so the test files read as the tests see them) and
    the probe file, with the replay of `found` when a task is given (and the module of the
    issue's examples when `found` replays them)."""
    replayed = replay.source(task, found) if task is not None else ""
    files = [diffs.new_file(PROBE_PATH, source(cases, replayed))]
    examples = issue_examples.module_source(task) if task is not None else None
    if examples is not None and any(t.path == issue_examples.ISSUE_PATH for t in found):
        files.append(diffs.new_file(issue_examples.ISSUE_PATH, examples))
    probe = diffs.emit_patch(diffs.Patch(files=tuple(files)))
    if task is None or not task.test_patch.strip():
        return probe
    return task.test_patch.rstrip("\n") + "\n" + probe


@dataclass(frozen=True)
class Output:
    tag: str  # digest of the outcome, or "unstable" / "timeout"
    head: str  # the outcome's first characters, as a name: "returns_0_0_4", "raises_ValueError"

    @property
    def comparable(self) -> bool:
        return self.tag not in UNSTABLE

    @property
    def raises(self) -> bool:
        return self.head.startswith("raises")


def outputs(result: RunResult) -> dict[int, Output]:
    """Each case's outcome, read from the names of the tests the run reported."""
    out: dict[int, Output] = {}
    for name in result.tests:
        match = _NAME.search(name)
        if match:
            out[int(match.group(1))] = Output(match.group(2), match.group(3))
    return out


def reference(results: Sequence[RunResult]) -> dict[int, Output]:
    """Gold's outcomes that every run agrees on (nothing when a run did not complete)."""
    return agreed(results, outputs, lambda o: o.comparable and not o.head.startswith("unresolved"))


_RAISE = re.compile(r"^\+\s*raise\s+([A-Za-z_][\w.]*)", re.MULTILINE)


def raised_by_gold(patch: str) -> frozenset[str]:
    """The exception types gold's added lines raise (`raise ValueError(...)` -> ValueError)."""
    return frozenset(name.rsplit(".", 1)[-1] for name in _RAISE.findall(patch))


def _deliberate(expected: Output, case: ProbeCase) -> bool:
    """Gold raises here an exception its own added lines raise: the input is one the fix is
    about, so a private helper that lets it through is evidence after all."""
    raised = expected.head.removeprefix("raises_")
    return any(raised == name or raised.startswith(f"{name}_") for name in case.deliberate)


def differences(
    cases: Sequence[ProbeCase], gold: dict[int, Output], candidate: dict[int, Output]
) -> list[tuple[int, Output, Output]]:
    """(case, gold's outcome, the candidate's) for every stable case the two disagree on."""
    out = []
    for i, expected in sorted(gold.items()):
        got = candidate.get(i)
        if got is None or not got.comparable or i >= len(cases):
            continue
        if expected.raises and not cases[i].strict and not _deliberate(expected, cases[i]):
            continue
        if got.tag != expected.tag:
            out.append((i, expected, got))
    return out


# --- commands ----------------------------------------------------------------------------------


RUNNERS = tuple(r.value for r in Runner)
DJANGO_COMMAND = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
SYMPY_COMMAND = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose"
TESTS = "{tests}"
# The interpreter the task's environment puts first (the venv's or the conda env's `python`),
# else `python3`: every image that runs Python tests has one of them.
PYTHON = '"$(command -v python || command -v python3)"'


def runner(task: Task) -> str | None:
    """The runner the task's tests use — "pytest", "unittest", "django" or "sympy" (`runners`)
    — or None when the task names a log parser of another kind."""
    if task.log_parser and task.log_parser not in RUNNERS:
        return None
    return runner_of(task).value


def _prefix(command: str | None, pattern: re.Pattern[str]) -> str:
    match = pattern.search(command or "")
    return (command or "")[: match.start()] if match else ""


def probe_command(task: Task) -> str:
    """The command that runs the probe file, whatever the task's runner: the interpreter's own
    `unittest` on the probe module (the sandbox's directives land in a shell comment)."""
    prefix = ""
    if runner(task) == "pytest":
        prefix = _prefix(task.test_command, _PYTEST)
    elif runner(task) == "unittest":
        prefix = _prefix(task.test_command, _UNITTEST)
    module = PROBE_PATH.removesuffix(".py")
    return f"{prefix}PYTHONHASHSEED=0 {PYTHON} -m unittest -v {module} # {TESTS}"


def loaded_test(task: Task) -> str:
    """The probe's always-passing test, as `unittest -v` names it."""
    module = PROBE_PATH.removesuffix(".py")
    return f"{LOADED} ({module}.{CLASS}.{LOADED})"


def _pytest_suite(task: Task, scope: str, files: Sequence[str] | None = None) -> str | None:
    command = task.test_command or "pytest -rA"
    match = _PYTEST.search(command)
    if match is None:
        if command.split()[-1:] == ["--"]:
            # A wrapper that hands what follows `--` to pytest (`tox --current-env -e py39 --`).
            return _named_suite(task, command, _suite_paths(task, scope, files))
        return None
    prefix, runner_, rest = command[: match.start()], match.group(0), command[match.end() :]
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
    return f"{prefix}{runner_} {shlex.join(kept + _suite_paths(task, scope, files))}".strip()


def _suite_paths(task: Task, scope: str, files: Sequence[str] | None) -> list[str]:
    """What a path-taking runner is given: `files`, else the test directories (`near`), else
    nothing (the whole repository)."""
    if files is not None:
        return list(files)
    return list(layout(task.gold_diff, task.test_diff).test_dirs) if scope == "near" else []


def _unittest_suite(task: Task, scope: str) -> str:
    dirs = layout(task.gold_diff, task.test_diff).test_dirs
    start = dirs[0] if scope == "near" and len(dirs) == 1 else "."
    prefix = _prefix(task.test_command, _UNITTEST)
    # The sandbox puts the test patch's modules where `{tests}` stands: here, in a shell
    # comment, so that discovery runs the whole directory instead of those modules alone.
    return f"{prefix}python -m unittest discover -v -s {shlex.quote(start)} -t . # {{tests}}"


def _named_suite(task: Task, default: str, labels: Sequence[str]) -> str:
    """The task's command (or its runner's default) on `labels` instead of its test files."""
    base = re.sub(r"\s*\{tests\}", "", task.test_command or default).strip()
    # The sandbox puts the test patch's files where `{tests}` stands: here, in a shell comment.
    return " ".join([base, *map(shlex.quote, labels), f"# {TESTS}"])


def _django_labels(task: Task) -> list[str]:
    """Django's labels for the test patch's directories (`tests/admin_views` -> admin_views)."""
    labels = []
    for folder in layout(task.gold_diff, task.test_diff).test_dirs:
        label = folder.strip("/").removeprefix("tests").strip("/").replace("/", ".")
        if label and label not in labels:
            labels.append(label)
    return labels


def suite_command(task: Task, scope: str, files: Sequence[str] | None = None) -> str | None:
    """The task's test command widened from its selected tests to the test directories the
    test patch touches (`near`) or to the whole repository (`full`), run by the task's own
    runner; None when the runner is not known (`runner`). With `files`, the same command on
    those test files alone (pytest and sympy, whose commands take paths; None for the others)."""
    kind = runner(task)
    if kind == "pytest":
        return _pytest_suite(task, scope, files)
    if kind == "sympy":
        return _named_suite(task, SYMPY_COMMAND, _suite_paths(task, scope, files))
    if files is not None:  # unittest discovery and Django's labels are not given files here
        return None
    if kind == "unittest":
        return _unittest_suite(task, scope)
    if kind == "django":
        return _named_suite(task, DJANGO_COMMAND, _django_labels(task) if scope == "near" else [])
    return None


def files_of_tests(tests: Iterable[str], reported: Iterable[str]) -> list[str] | None:
    """The test files that hold `tests`, or None when one's file is not known.

    pytest names carry their file (`tests/test_x.py::test_y`); sympy's runner names a failed
    test's file in its traceback header, which the log parser reports as `path.py:test_y`
    beside the bare `test_y` (`reported` are the names a run reported)."""
    headers: dict[str, list[str]] = {}
    for name in reported:
        path, sep, test = name.rpartition(".py:")
        if sep and not test.startswith(":"):
            headers.setdefault(test, []).append(path + ".py")
    files: list[str] = []
    for test in tests:
        head = test.split("::", 1)[0]
        found = [head] if "::" in test and head.endswith(".py") else headers.get(test, [])
        if not found:
            return None
        files.extend(f for f in found if f not in files)
    return files


def suite_parser(task: Task) -> str | None:
    """The log parser the wider suite's log is read with: the task's, or its runner's."""
    return task.log_parser or runner(task)
