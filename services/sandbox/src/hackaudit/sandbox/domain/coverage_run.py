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

The rcfile measures only the files of interest (`include`), and loads a plugin of the run's own
(`programs.coverage_contexts_program`, unpacked beside coverage.py) that names each line's context
after the test function running it (`module.Class.test_x`) for pytest, unittest, Django's and
sympy's `bin/test` alike: coverage.py's own `test_function` contexts start at the first `test*`
function called, which under sympy's runner is the runner's method `SymPyTests.test`, so every
line fell under that one name. Each process writes its own data file (`parallel`) in the stage
directory.

After the tests, once every process they left is gone (a run whose processes survive the kill
gets no report), the wrapper runs `report_script` in a directory it makes then. The kit in the
stage directory is the run's uid's to write while the tests run, and so is `/testbed`: a
`sitecustomize.py` or a module named like one of the standard library's planted there would
run in the report step and could rewrite its report. So nothing there is run or imported: the
interpreter is the one the tests' command finds, by its real path, never in a place the run
could write (one in `/testbed` is taken from the image's read-only pristine copy), as is every
command and library the step starts (`PATH`, `LD_LIBRARY_PATH`); it runs
isolated (`-I -S`: no `PYTHON*` variables, no user or site packages, no script or working
directory on `sys.path`) from the new directory; coverage.py is unpacked there from the wheel
the sandbox sent, checked against its SHA-256 in the script; its configuration is the
script's own; and the processes' data files — regular files only — are copied there and read
as data. Then `coverage combine`, and the compaction program (`programs.coverage_compact_program`,
its text and the run's request are part of the script, read before the tests ran), which reads
the combined data through coverage.py's API, keeps only the files and lines asked for, names
each test once and adds the files' text when asked (`Coverage.with_source`); the wrapper sends
that compact report base64-encoded after its nonce marker (`coverage`), never through the
runner's output. Written out whole, as coverage.py's `json --show-contexts` report, a few
thousand tests over a large module run to hundreds of megabytes (a sympy suite's filled the
run's writable space); the compact one stays within the size of a message on the bus
(`MAX_REFS`, `SOURCE_CAP`, `SOURCES_CAP`).

The tests' own code runs in the measured processes and as the same user, so it can still
falsify its own measurements — the data files, or the files' text — while it runs; it cannot
act once its run is over. A coverage run grades nothing, and its numbers are a map, not
evidence.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from hackaudit.sandbox.domain.protocol import (
    PRISTINE_REPOSITORY,
    REPOSITORY,
    SEALED_PATH,
    WRITABLE_PLACES,
)
from hackaudit.shared.contracts import Coverage, CoverageResult, FileCoverage

STAGE_VARIABLE = "HACKAUDIT_COVERAGE"
RCFILE = "coverage.rc"
SITECUSTOMIZE = "sitecustomize.py"
REPORT_SCRIPT = "coverage-report.sh"
LIBRARY = "coverage-lib"
DATA = "coverage-data"
REPORT = "coverage.json"
COMPACT_FORMAT = "hackaudit-coverage-1"
# A result travels in one bus message (NATS: 1 MB by default), with the run's other fields.
# Executed lines' tests, counted per line as the reader expands them: past this many, the lines
# are listed as cut (`CoverageResult.cut`), executed but with their tests left out.
MAX_REFS = 80_000
# Files' text (`with_source`) is wanted for the shape of the code around a changed line (which
# function holds it): a file over SOURCE_CAP bytes — generated tables, vendored bundles — or
# past SOURCES_CAP in all is left out whole rather than cut, and its lines are simply not widened.
SOURCE_CAP = 256 * 1024
SOURCES_CAP = 384 * 1024
_PROGRAMS = "hackaudit.sandbox.domain.programs"
USER_BASE = "coverage-user"
PTH = "hackaudit-coverage.pth"
ANY_PYTHON = "any"


def wheel_name(python: str) -> str:
    """The stage file of the wheel for Python `python` ("3.11", or `ANY_PYTHON`)."""
    return f"coverage-{python}.whl"


STARTER = "hackaudit_coverage_start"
# The plugin that names each line's context after the test function running it, under every
# runner (`programs.coverage_contexts_program`); unpacked beside coverage.py.
CONTEXTS = "hackaudit_coverage_contexts"
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
        f"plugins = {CONTEXTS}\n"
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
        f"{stage}/{CONTEXTS}.py {stage}/{LIBRARY}/ "
        '|| echo "hackaudit: coverage.py could not be set up" >&2',
        f"export PYTHONUSERBASE={stage}/{USER_BASE}",
        # exits non-zero when this interpreter reads no user site, but names it all the same
        'hackaudit_site="$("$hackaudit_py" -m site --user-site)"',
        '[ -n "$hackaudit_site" ] && mkdir -p "$hackaudit_site" '
        f'&& cp {stage}/{PTH} "$hackaudit_site"/',
        f'export PYTHONPATH={stage}/{LIBRARY}"${{PYTHONPATH:+:$PYTHONPATH}}"',
        f"export COVERAGE_PROCESS_START={stage}/{RCFILE}",
    )


@cache
def _program(name: str) -> str:
    return resources.files(_PROGRAMS).joinpath(name).read_text(encoding="utf-8")


def _compact_program() -> str:
    return _program("coverage_compact_program.py")


def contexts_plugin() -> str:
    """The text of the plugin naming contexts after test functions (`CONTEXTS`)."""
    return _program("coverage_contexts_program.py")


def wanted(invocation: Coverage) -> dict[str, Any]:
    """What the compaction program keeps of coverage.py's report for `invocation`."""
    return {
        "files": {
            path: list(invocation.lines[path]) if path in invocation.lines else None
            for path in invocation.files
        },
        "first": {path: list(lines) for path, lines in invocation.first.items()},
        "sources": invocation.with_source,
        "source_cap": SOURCE_CAP,
        "sources_cap": SOURCES_CAP,
        "max_refs": MAX_REFS,
    }


def compact_program(invocation: Coverage) -> str:
    """The compaction program with this run's request (`programs.coverage_compact_program`)."""
    request = json.dumps(wanted(invocation), sort_keys=True)
    call = "main(sys.argv[1], sys.argv[2], sys.argv[3])"
    return f"{_compact_program()}\n\nWANTED = json.loads({request!r})\n{call}\n"


# The report step's interpreter, isolated: no `PYTHON*` variables, no user site, no directory of
# a script or of the working directory on `sys.path` (`-I`, Python 3.4 on), and no `site`
# (`-S`): no site-packages, so no `.pth` file (an editable install's puts `/testbed` on the
# path). Its path holds the standard library and the kit unpacked for this step alone.
ISOLATED = "-I -S"
# Runs coverage.py's command line from the unpacked kit (its path is the first argument).
_COVERAGE_MAIN = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from coverage.cmdline import main; sys.exit(main())"
)
REPORT_DIR_VARIABLE = "HACKAUDIT_REPORT"
# Prints a file's SHA-256, with the image's interpreter (no tool beyond it needed).
_SHA256 = 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())'


def report_rcfile(invocation: Coverage) -> str:
    """coverage.py's configuration for the report step: the run's files of interest, and the
    data files copied into the step's own directory."""
    measured = rcfile(invocation)
    return (
        measured.replace(
            f"data_file = ${{{STAGE_VARIABLE}}}/{DATA}/.coverage",
            f"data_file = ${{{REPORT_DIR_VARIABLE}}}/{DATA}/.coverage",
        )
        .replace("parallel = True\n", "")
        .replace(f"plugins = {CONTEXTS}\n", "")
    )


def _interpreter_lines() -> list[str]:
    """Shell lines that set `hackaudit_py` to the real path of the interpreter the tests' command
    finds, never one in a place the run could write (one under `/testbed` is taken from the
    image's pristine copy of the repository, which the run cannot change)."""
    places = "|".join(f"{place}|{place}/*" for place in WRITABLE_PLACES)
    return [
        _PYTHON + ' || { echo "hackaudit: no python" >&2; exit 1; }',
        "case $hackaudit_py in "
        f'{REPOSITORY}/*) hackaudit_py={PRISTINE_REPOSITORY}"${{hackaudit_py#{REPOSITORY}}}";; '
        "esac",
        'hackaudit_py=$(realpath -e -- "$hackaudit_py") || exit 1',
        f'case $hackaudit_py in {places}) echo "hackaudit: the interpreter $hackaudit_py lies '
        'where the run could write" >&2; exit 1;; esac',
    ]


def _search_path_lines() -> list[str]:
    """Shell lines that keep, of the command and library search paths, only the directories the
    run could not write (`protocol.SEALED_PATH`), and drop the loader's preloads."""
    return [
        *SEALED_PATH.splitlines(),
        "unset LD_PRELOAD LD_AUDIT",
        'PATH=$(sealed_path "$PATH"); PATH=${PATH:-/usr/bin:/bin}',
        'hackaudit_ld=$(sealed_path "${LD_LIBRARY_PATH-}")',
        'if [ -n "$hackaudit_ld" ]; then export LD_LIBRARY_PATH=$hackaudit_ld; '
        "else unset LD_LIBRARY_PATH; fi",
    ]


def _wheel_lines(wheels: Mapping[str, bytes]) -> list[str]:
    """Shell lines that copy the wheel for the interpreter's version (`hackaudit_v`) into the
    report directory and check it is the one the sandbox sent (its SHA-256, held in the script)."""
    digests = {name: hashlib.sha256(body).hexdigest() for name, body in wheels.items()}
    cases = " ".join(f"{name}) echo {digest};;" for name, digest in sorted(digests.items()))
    stage = f'"${STAGE_VARIABLE}"'
    return [
        f"hackaudit_hash() {{ case $1 in {cases} esac; }}",
        'hackaudit_w=coverage-"$hackaudit_v".whl; hackaudit_want=$(hackaudit_hash "$hackaudit_w")',
        f'[ -n "$hackaudit_want" ] || {{ hackaudit_w={wheel_name(ANY_PYTHON)}; '
        'hackaudit_want=$(hackaudit_hash "$hackaudit_w"); }',
        f'[ -f {stage}/"$hackaudit_w" ] && cp -- {stage}/"$hackaudit_w" kit.whl || exit 1',
        f'[ "$(hackaudit_run -c \'{_SHA256}\' kit.whl)" = "$hackaudit_want" ] '
        '|| { echo "hackaudit: coverage.py\'s wheel was changed during the run" >&2; exit 1; }',
    ]


def report_script(
    preamble: Iterable[str], invocation: Coverage, wheels: Mapping[str, bytes]
) -> str:
    """The script the wrapper runs after the tests, once every process they left is gone, with
    a new directory of its own as `$1` (after `preamble`: the environment of the test script,
    for the interpreter it finds). Nothing the run wrote is run or imported: commands and
    libraries are looked up only outside the places the run could write
    (`protocol.SEALED_PATH`), the interpreter too, which runs isolated (`ISOLATED`) from the
    new directory; coverage.py is unpacked there from the wheel the sandbox sent (checked by
    its hash), with a configuration of the script's own; the processes' data files are copied
    there and read as data. Then: combine them, write coverage.py's JSON report, and compact
    it to what `invocation` asked for (the program is in the script: the wrapper read it
    before the tests ran) as `$1/coverage.json`."""
    stage = f'"${STAGE_VARIABLE}"'
    rc = "--rcfile=report.rc"
    lines = [
        *preamble,
        f'export {REPORT_DIR_VARIABLE}="$1"',
        f'cd "${REPORT_DIR_VARIABLE}" || exit 1',
        *_search_path_lines(),
        *_interpreter_lines(),
        f'hackaudit_run() {{ "$hackaudit_py" {ISOLATED} "$@"; }}',
        "hackaudit_v=$(hackaudit_run -c "
        "'import sys; print(\"%d.%d\" % sys.version_info[:2])') || exit 1",
        *_wheel_lines(wheels),
        f"hackaudit_run -m zipfile -e kit.whl {LIBRARY} || exit 1",
        "cat > report.rc <<'HACKAUDIT_RC'",
        report_rcfile(invocation).rstrip("\n"),
        "HACKAUDIT_RC",
        f"mkdir {DATA} && find {stage}/{DATA} -maxdepth 1 -type f -name '.coverage.*' "
        f"-exec cp -- {{}} {DATA}/ \\; || exit 1",
        f'hackaudit_coverage() {{ hackaudit_run -c "{_COVERAGE_MAIN}" "$PWD/{LIBRARY}" "$@"; }}',
        f"hackaudit_coverage combine {rc} || exit 1",
        f"hackaudit_run - \"$PWD/{LIBRARY}\" report.rc {REPORT} <<'HACKAUDIT_COMPACT'",
        compact_program(invocation).rstrip("\n"),
        "HACKAUDIT_COMPACT",
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
        f"{CONTEXTS}.py": contexts_plugin().encode(),
        PTH: PTH_LINE.encode(),
        REPORT_SCRIPT: report_script(preamble, invocation, kit).encode(),
        **kit,
    }


class UnreadableReport(ValueError):
    """coverage.py's JSON report is not what it writes (cut short, or not JSON)."""


def read_report(text: str | bytes, invocation: Coverage) -> CoverageResult:
    """The typed result of the compact report (`programs.coverage_compact_program`) for the
    files of interest of `invocation`. Raises UnreadableReport."""
    try:
        report = json.loads(text)
        if report.get("format") != COMPACT_FORMAT:
            raise ValueError(f"not a compact report ({str(report.get('format'))[:40]!r})")
        tests = tuple(str(t) for t in report["tests"])
        sets = [tuple(int(i) for i in s) for s in report["sets"]]
        measured: dict[str, Any] = report["files"]
        files = {path: _file(measured[path], sets) for path in invocation.files if path in measured}
        cut = {
            str(path): tuple(int(n) for n in lines)
            for path, lines in (report.get("cut") or {}).items()
        }
        sources = {
            str(path): str(text)
            for path, text in (report.get("sources") or {}).items()
            if path in files
        }
        return CoverageResult(
            tests=tests,
            files=files,
            per_test=any(tests),
            coverage_version=str(report.get("version", "")),
            sources=sources,
            cut=cut,
        )
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        raise UnreadableReport(f"coverage.py's report is unreadable: {exc}") from exc


def _file(data: Mapping[str, Any], sets: list[tuple[int, ...]]) -> FileCoverage:
    executed = {int(n): sets[int(i)] for n, i in data["executed"].items()}
    missing = tuple(sorted(int(n) for n in data.get("missing", ())))
    return FileCoverage(executed=dict(sorted(executed.items())), missing=missing)
