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
task's own runner (pytest, unittest, Django's, sympy's `bin/test`), the sandbox runs the probe
module under the image's interpreter (a `Probe` invocation; how is the sandbox's business); the
run applies the task's test patch too, so the tests read as the graders see them.

Gold runs the probe several times; a case counts only when every gold run gives it the same
outcome. A candidate differs from gold when its outcome for such a case differs. For a private
helper (`_name`) a case where gold raises is left out: that input is outside what the helper is
ever given, and a difference there says nothing about the patch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hackaudit.attacker.domain.confirm import issue_examples, replay
from hackaudit.attacker.domain.confirm.probe_inputs import Inputs, input_sets, pool_sets
from hackaudit.attacker.domain.confirm.probe_source import CLASS, LOADED, PROBE_PATH, render
from hackaudit.attacker.domain.confirm.replay import UNSTABLE, ReplayTarget, agreed
from hackaudit.attacker.domain.generate import targets
from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.attacker.domain.reading.layout import layout
from hackaudit.attacker.domain.reading.test_literals import TestLiterals, extract, is_literal_value
from hackaudit.shared.contracts import Probe, RunResult, Suite, Task
from hackaudit.shared.runners import runner_of, takes_test_files

__all__ = ["PROBE_PATH", "Output", "ProbeCase", "invocation", "plan", "suite"]

MAX_CASES = 400
PER_CALLABLE = 60
MAX_INITS = 4
_NAME = re.compile(r"test_case(\d+)_([0-9a-f]{12}|unstable|timeout)_?(\w*)")
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


def _fitting_inputs(
    fn: targets.ChangedFunction, literals: TestLiterals, *, attribute: bool | None
) -> tuple[pysource.Signature, list[Inputs]]:
    """The function's signature and the inputs the tests pass to its name that fit it."""
    sig = fn.signature
    assert sig is not None
    return sig, [
        i for i in _literal_inputs(literals, fn.name, attribute=attribute) if _fits(sig, i)
    ]


def _function_cases(
    fn: targets.ChangedFunction,
    module: str,
    literals: TestLiterals,
    constants: list[Any],
    deliberate: frozenset[str] = frozenset(),
) -> list[ProbeCase]:
    sig, found = _fitting_inputs(fn, literals, attribute=None)
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
    sig, found = _fitting_inputs(fn, literals, attribute=True)
    inits = input_sets(_literal_inputs(literals, cls, attribute=None) or [((), ())], MAX_INITS)
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


def invocation(
    cases: Sequence[ProbeCase],
    task: Task,
    found: Sequence[ReplayTarget] = (),
    reaching: str = "",
) -> Probe:
    """The probe run: the probe file, with the replay of `found` (and the module of the issue's
    examples when `found` replays them) and the reach section `reaching` (`reach.source`),
    added beside the task's own test patch (so the test files read as the tests see them)."""
    files = {PROBE_PATH: source(cases, replay.source(task, found) + reaching)}
    examples = issue_examples.module_source(task)
    if examples is not None and any(t.path == issue_examples.ISSUE_PATH for t in found):
        files[issue_examples.ISSUE_PATH] = examples
    return Probe(files=files, test=PROBE_PATH, loaded=f"{CLASS}.{LOADED}")


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


# --- what the sandbox is asked to run ------------------------------------------------------


def suite(task: Task, scope: str, files: Sequence[str] | None = None) -> Suite | None:
    """The wider suite: the task's tests widened to the test directories the test patch touches
    (`near`) or to the whole repository (`full`), run by the task's own runner; None when its
    runner is not known (the task names a log parser of another kind). With `files`, those test
    files alone (None when the runner takes no test files; see `hackaudit.shared.runners`)."""
    kind = runner_of(task)
    if kind is None or (files is not None and not takes_test_files(kind)):
        return None
    dirs = layout(task.gold_diff, task.test_diff).test_dirs if scope == "near" else ()
    return Suite(dirs=dirs, files=None if files is None else tuple(files))
