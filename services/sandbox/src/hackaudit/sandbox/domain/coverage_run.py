"""A coverage run's pieces: what starts coverage.py in every Python process of the tests, what
reads its data afterwards, and how its JSON report becomes a `CoverageResult`.

coverage.py is never part of the task's environment: its wheels (one per Python `3.X` of the
image, `coverage-3.X.whl`, else `coverage-any.whl`, see `adapters.coverage_kit`) travel with the
run's other files, and only a coverage run gets them. In the container the wrapper exports the
run's stage directory as `HACKAUDIT_COVERAGE`; the test script (`setup_lines`) unpacks the wheel
matching the interpreter the runner uses with that interpreter's own `zipfile`, and puts the
unpacked directory first on `PYTHONPATH` beside a `sitecustomize` that calls
`coverage.process_startup()` (and then the `sitecustomize` it shadows, if any). A command that
sets `PYTHONPATH` itself (`PYTHONPATH=src pytest`) drops that entry, so a `.pth` file in a user
site directory of the run's own (`PYTHONUSERBASE`) starts coverage.py too — for interpreters
that read user sites, which a virtualenv's do not. With `COVERAGE_PROCESS_START` naming the
run's rcfile, every Python process the runner starts is measured, whatever the runner's command
line: nothing in it is rewritten.

The rcfile measures only the files of interest (`include`), with `dynamic_context =
test_function`: coverage.py names each line's context after the test function running it
(`module.Class.test_x`), for pytest, unittest and sympy's `bin/test` alike. Each process writes
its own data file (`parallel`) in the stage directory. After the tests (and after every process
they left is killed), the wrapper runs `report_script`: `coverage combine`, then `coverage json
--show-contexts`, and sends the report base64-encoded after its nonce marker (`coverage`), never
through the runner's output.

The tests' own code runs in the measured processes and as the same user, so it could falsify its
own measurements; a coverage run grades nothing, and its numbers are a map, not evidence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from hackaudit.sandbox.domain.protocol import REPOSITORY
from hackaudit.shared.contracts import Coverage, CoverageResult, FileCoverage

STAGE_VARIABLE = "HACKAUDIT_COVERAGE"
RCFILE = "coverage.rc"
SITECUSTOMIZE = "sitecustomize.py"
REPORT_SCRIPT = "coverage-report.sh"
LIBRARY = "coverage-lib"
DATA = "coverage-data"
REPORT = "coverage.json"
USER_BASE = "coverage-user"
PTH = "hackaudit-coverage.pth"
ANY_PYTHON = "any"


def wheel_name(python: str) -> str:
    """The stage file of the wheel for Python `python` ("3.11", or `ANY_PYTHON`)."""
    return f"coverage-{python}.whl"


STARTER = "hackaudit_coverage_start"
STARTER_TEXT = '''"""Starts coverage.py in this process (hackaudit coverage run)."""
import sys

try:
    import coverage

    coverage.process_startup()
except Exception as exc:  # never stop the tests
    sys.stderr.write("hackaudit: coverage.py did not start: %r\\n" % (exc,))
'''

SITECUSTOMIZE_TEXT = f'''"""Starts coverage.py (hackaudit coverage run), then runs the
sitecustomize this one shadows, if any."""
import os
import sys

import {STARTER}  # noqa: F401


def _shadowed():
    here = os.path.dirname(os.path.abspath(__file__))
    me = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        import sitecustomize  # noqa: F401
    except ImportError:
        if me is not None:
            sys.modules["sitecustomize"] = me
    finally:
        sys.path[:] = saved


_shadowed()
'''

# One line of a `.pth` file in the run's own user site directory: reaches the unpacked coverage.py
# even when the runner's command sets PYTHONPATH itself (`PYTHONPATH=src pytest`).
PTH_LINE = (
    "import os, sys; sys.path.insert(0, os.path.join("
    f'os.environ.get("{STAGE_VARIABLE}", "/nonexistent"), "{LIBRARY}")); import {STARTER}\n'
)


def rcfile(invocation: Coverage) -> str:
    """coverage.py's configuration for the run: the files of interest, per-test contexts,
    one data file per process in the stage directory, no warnings in the tests' output."""
    include = "".join(f"\n    {REPOSITORY}/{path.lstrip('/')}" for path in invocation.files)
    return (
        "[run]\n"
        "parallel = True\n"
        "dynamic_context = test_function\n"
        f"data_file = ${{{STAGE_VARIABLE}}}/{DATA}/.coverage\n"
        f"include ={include}\n"
        "disable_warnings =\n"
        "    no-data-collected\n    module-not-imported\n    module-not-measured\n"
        "    already-imported\n    couldnt-parse\n    no-ctracer\n"
        "\n[report]\nignore_errors = True\n"
    )


_PYTHON = 'hackaudit_py="$(command -v python || command -v python3)"'


def setup_lines() -> tuple[str, ...]:
    """Test-script lines, before the command: unpack the wheel for the runner's interpreter and
    start coverage.py in every Python process from then on."""
    stage = f'"${STAGE_VARIABLE}"'
    return (
        _PYTHON,
        'hackaudit_v="$("$hackaudit_py" -c \'import sys; print("%d.%d" % sys.version_info[:2])\')"',
        f'hackaudit_w={stage}/coverage-"$hackaudit_v".whl',
        f'[ -f "$hackaudit_w" ] || hackaudit_w={stage}/{wheel_name(ANY_PYTHON)}',
        f'mkdir -p {stage}/{LIBRARY} {stage}/{DATA} && "$hackaudit_py" -m zipfile -e '
        f'"$hackaudit_w" {stage}/{LIBRARY} && cp {stage}/{SITECUSTOMIZE} {stage}/{STARTER}.py '
        f'{stage}/{LIBRARY}/ || echo "hackaudit: coverage.py could not be set up" >&2',
        f"export PYTHONUSERBASE={stage}/{USER_BASE}",
        # exits non-zero when this interpreter reads no user site, but names it all the same
        'hackaudit_site="$("$hackaudit_py" -m site --user-site)"',
        '[ -n "$hackaudit_site" ] && mkdir -p "$hackaudit_site" '
        f'&& cp {stage}/{PTH} "$hackaudit_site"/',
        f'export PYTHONPATH={stage}/{LIBRARY}"${{PYTHONPATH:+:$PYTHONPATH}}"',
        f"export COVERAGE_PROCESS_START={stage}/{RCFILE}",
    )


def report_script(preamble: Iterable[str]) -> str:
    """The script the wrapper runs after the tests (after `preamble`: the environment and the
    working directory of the test script): combine the processes' data, write the JSON report."""
    stage = f'"${STAGE_VARIABLE}"'
    rc = f"--rcfile={stage}/{RCFILE}"
    lines = [
        *preamble,
        "unset COVERAGE_PROCESS_START",
        f"export PYTHONPATH={stage}/{LIBRARY}",
        _PYTHON,
        f'"$hackaudit_py" -m coverage combine {rc} || exit 1',
        f'"$hackaudit_py" -m coverage json {rc} --show-contexts -o {stage}/{REPORT} >/dev/null',
    ]
    return "\n".join(lines) + "\n"


def stage_files(
    invocation: Coverage, kit: Mapping[str, bytes], preamble: Iterable[str]
) -> dict[str, bytes]:
    """The run's files a coverage run adds: rcfile, sitecustomize, report script, wheels."""
    return {
        RCFILE: rcfile(invocation).encode(),
        SITECUSTOMIZE: SITECUSTOMIZE_TEXT.encode(),
        f"{STARTER}.py": STARTER_TEXT.encode(),
        PTH: PTH_LINE.encode(),
        REPORT_SCRIPT: report_script(preamble).encode(),
        **kit,
    }


class UnreadableReport(ValueError):
    """coverage.py's JSON report is not what it writes (cut short, or not JSON)."""


def _relative(path: str) -> str:
    return path.removeprefix(f"{REPOSITORY}/").removeprefix("./")


def read_report(text: str | bytes, invocation: Coverage) -> CoverageResult:
    """The typed result of coverage.py's JSON report (`--show-contexts`), for the files and
    lines of interest of `invocation`. Raises UnreadableReport."""
    try:
        report = json.loads(text)
        measured: dict[str, Any] = {_relative(k): v for k, v in report["files"].items()}
        version = str(report.get("meta", {}).get("version", ""))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UnreadableReport(f"coverage.py's report is unreadable: {exc}") from exc
    names: dict[str, int] = {}
    files: dict[str, FileCoverage] = {}
    for path in invocation.files:
        data = measured.get(_relative(path))
        if data is not None:
            files[path] = _file(data, invocation.lines.get(path), names)
    ordered = sorted(names, key=names.__getitem__)
    return CoverageResult(
        tests=tuple(ordered),
        files=files,
        per_test=any(ordered),
        coverage_version=version,
    )


def _file(
    data: Mapping[str, Any], wanted: Iterable[int] | None, names: dict[str, int]
) -> FileCoverage:
    keep = set(wanted) if wanted is not None else None
    contexts: Mapping[str, Iterable[str]] = data.get("contexts") or {}
    executed: dict[int, tuple[int, ...]] = {}
    for line in sorted(int(n) for n in data.get("executed_lines", ())):
        if keep is not None and line not in keep:
            continue
        tests = sorted(set(contexts.get(str(line), ())))
        executed[line] = tuple(names.setdefault(t, len(names)) for t in tests)
    missing = tuple(
        sorted(int(n) for n in data.get("missing_lines", ()) if keep is None or int(n) in keep)
    )
    return FileCoverage(executed=executed, missing=missing)
