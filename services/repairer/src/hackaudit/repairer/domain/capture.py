"""Capturing gold's exact outcome on the inputs where exploits differ from it.

A difference names the input and only a summary of the two outcomes, so before a regression test
can assert gold's behaviour the repairer runs the expression on gold in the sandbox: a small
module, added beside the task's test patch and run by the image's own interpreter whatever the
task's runner (a `Capture` invocation, like the attacker's probes), evaluates each expression
when it is imported and names one test method per case after the outcome — JSON (the `repr`,
`str`, type name and attributes of the value, or the exception's type), hex-encoded so that any
text survives the runner's report.
That module is a real one, `programs.capture_program`, that the linters, the type checker and
the unit tests see; the run's module is its text, read as package data, followed by the cases
assigned as Python literals and the call that names them.
Probe expressions are evaluated with their first name imported from the first module that has
it; replayed ones in the namespace of the test module they come from (the task's test patch is
applied too), and one that needs a name the module does not have (a local of its test:
NameError) is not captured. Gold runs it several times; an outcome that is not the same in every
run is unstable and not used.
"""

from __future__ import annotations

import binascii
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from hackaudit.repairer.domain import test_patch
from hackaudit.repairer.domain.regression import Captured, importable_root
from hackaudit.shared.contracts import Capture, ProbeDifference, RunResult, RunStatus, Task

CAPTURE_PATH = "test_hackaudit_capture.py"
CLASS = "HackauditCapture"
LOADED = "test_hackaudit_capture_loaded"
MAX_TEXT = 300  # longer reprs make poor assertions and long test names: not captured
_NAME = re.compile(r"test_cap(\d+)_([0-9a-f]+)")
_PROGRAMS = "hackaudit.repairer.domain.programs"


def _test_modules(test_path: str) -> list[str]:
    """Import names the replayed test's module may have: dotted from the root, or from under
    its first directory (Django's `tests/` is on the path, not a package)."""
    module = test_path.removesuffix(".py").replace("/", ".")
    names = [module]
    if "." in module:
        names.append(module.split(".", 1)[1])
    return names


def module_file(module: str, paths: Sequence[str]) -> str | None:
    """The test patch's file that imports as `module` (None: none of them)."""
    return next((p for p in paths if p.endswith(".py") and module in _test_modules(p)), None)


def case_row(difference: ProbeDifference, fallback: Sequence[str] = ()) -> list[object]:
    """One case; a replayed expression is evaluated in its test's module, else in the first of
    the test patch's modules (`fallback`) that has every name it needs."""
    path = difference.test.split("::", 1)[0]
    own = _test_modules(path) if path else []
    return [
        difference.origin,
        list(difference.modules),
        importable_root(difference),
        difference.expression,
        list(dict.fromkeys([*own, *fallback])),
    ]


@cache
def program_text() -> str:
    """The text of the capture program (`programs/capture_program.py`)."""
    return resources.files(_PROGRAMS).joinpath("capture_program.py").read_text(encoding="utf-8")


def source(differences: Sequence[ProbeDifference], test_files: Sequence[str] = ()) -> str:
    """The capture module: the capture program's text, then these cases (each written as an
    ASCII Python literal) and the limit on a value's text, then the call that names the cases."""
    fallback = [m for p in test_files if p.endswith(".py") for m in _test_modules(p)]
    rows = "".join(f"    {case_row(d, fallback)!a},\n" for d in differences)
    data = (
        "\n\n# --- this run's cases ---\n\n"
        f"CASES = [\n{rows}]\n"
        f"MAX_TEXT = {int(MAX_TEXT)!r}\n"
        "\n_name_cases()\n"
    )
    return program_text() + data


def invocation(task: Task, differences: Sequence[ProbeDifference]) -> Capture:
    """The capture run: the capture module, added beside the task's test patch (so replayed
    tests' modules exist)."""
    files = test_patch.paths(task.test_diff.applied())
    module = source(differences, files)
    return Capture(files={CAPTURE_PATH: module}, test=CAPTURE_PATH, loaded=f"{CLASS}.{LOADED}")


@dataclass(frozen=True)
class CaptureOutcome:
    captured: Captured | None  # None: not usable (see `problem`)
    problem: str = ""


def _decode(code: str) -> dict[str, object] | None:
    try:
        value = json.loads(binascii.unhexlify(code).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, binascii.Error):
        return None
    return value if isinstance(value, dict) else None


def _one_run(result: RunResult) -> dict[int, str]:
    out: dict[int, str] = {}
    for name in result.tests:
        match = _NAME.search(name)
        if match:
            out[int(match.group(1))] = match.group(2)
    return out


def read(results: Sequence[RunResult], count: int) -> list[CaptureOutcome]:
    """Each case's captured outcome, usable only when every run completed and agrees on it."""
    if not results or any(r.status is not RunStatus.COMPLETED for r in results):
        status = results[0].status.value if results else "missing"
        return [CaptureOutcome(None, f"capture run ended {status}")] * count
    runs = [_one_run(r) for r in results]
    out = []
    for i in range(count):
        codes = {run.get(i) for run in runs}
        if None in codes:
            out.append(CaptureOutcome(None, "the capture module did not load or report the case"))
        elif len(codes) > 1:
            out.append(CaptureOutcome(None, "unstable: gold's outcome differs across runs"))
        else:
            out.append(_outcome(_decode(codes.pop() or "")))
    return out


def _outcome(data: dict[str, object] | None) -> CaptureOutcome:
    if data is None:
        return CaptureOutcome(None, "unreadable capture")
    for flag, why in (
        ("unresolved", "the expression's name or test module could not be imported"),
        ("unrepresentable", "the value has no repr"),
        ("too_long", f"the value's text is longer than {MAX_TEXT} characters"),
        ("failed", "the capture itself failed"),
    ):
        if data.get(flag):
            return CaptureOutcome(None, why)
    module = str(data.get("module", ""))
    if "raised" in data:
        return CaptureOutcome(Captured(raised=str(data["raised"]), module=module))
    return CaptureOutcome(
        Captured(
            value_repr=str(data.get("repr", "")),
            value_str=str(data.get("str", "")),
            value_type=str(data.get("type", "")),
            value_state=str(data.get("state", "")),
            value_items=str(data.get("items", "")),
            value_each=str(data.get("each", "")),
            module=module,
        )
    )
