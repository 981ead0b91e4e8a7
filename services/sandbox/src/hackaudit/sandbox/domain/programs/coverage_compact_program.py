"""Reads a coverage run's data down to what the run asked for, inside the container.

For every executed line of every measured file, coverage.py's data hold the name of every test
function that ran it: a run of a few thousand tests over a large module holds hundreds of
megabytes of names once written out as coverage.py's JSON report (`json --show-contexts`; a
sympy suite's filled the run's writable space), although the run asked about a few files and
lines. So this program reads the combined data file itself, through coverage.py's API
(`measured`: the files of interest only, each line's tests, the statements never run), and
writes a compact report:

- only the files asked for (`WANTED["files"]`, repository paths) and, where lines are given,
  only those lines;
- each test name once (`tests`), each distinct set of tests once (`sets`, indexes into
  `tests`), and each executed line as the index of its set — lines of one block share a set;
- with `WANTED["sources"]`, the text of each measured file (`sources`), a file over
  `WANTED["source_cap"]` bytes, or past the total of `WANTED["sources_cap"]`, left out whole
  (a cut text would misplace every function after the cut);
- when the lines' tests would add up to more than `WANTED["max_refs"]` (counted per line, as
  the reader expands them), the lines past that budget are listed in `cut` instead, without
  their tests, so that the reader knows the map is incomplete rather than reading those lines
  as run by no test. The lines of `WANTED["first"]` (per file) take the budget before any
  other line of any file: a run over whole files keeps the tests of the lines it is about.

It is the text of a script run by the report script (`coverage_run.report_script`), followed by
the run's `WANTED` and the call `main(library, rcfile, compact_report)`: coverage.py unpacked in
`library`, the report step's configuration (its data file) in `rcfile`. It runs under the image's
own interpreter, so it is written for any Python 3 from 3.6: no f-strings, no variable
annotations, nothing but the standard library.
"""

import json
import os
import sys

TYPE_CHECKING = False  # a name mypy reads as true; `typing.TYPE_CHECKING` is newer than 3.5.0
if TYPE_CHECKING:
    from typing import Any  # noqa: F401 (named in type comments)

FORMAT = "hackaudit-coverage-1"
REPOSITORY = "/testbed"

# This run's request: the script assigns it after this text.
WANTED = {}  # type: dict[str, Any]


def _relative(path):
    # type: (str) -> str
    prefix = REPOSITORY + "/"
    if path.startswith(prefix):
        path = path[len(prefix) :]
    if path.startswith("./"):
        path = path[2:]
    return path


def compact(report, wanted, read_source=None):
    # type: (dict[str, Any], dict[str, Any], Any) -> dict[str, Any]
    """The compact report of coverage.py's `report` for `wanted` (see the module docstring);
    `read_source(path)` gives a file's bytes (None: unreadable)."""
    measured = {}
    for name, data in (report.get("files") or {}).items():
        measured[_relative(name)] = data
    names = {}  # type: dict[str, int]
    sets = {}  # type: dict[tuple[int, ...], int]
    budget = int(wanted.get("max_refs") or 0)
    first = wanted.get("first") or {}
    found = []  # type: list[Any]
    for path, lines in sorted(wanted["files"].items()):
        data = measured.get(_relative(path))
        if data is None:
            continue
        keep = None if lines is None else set(lines)
        executed = [
            int(n) for n in data.get("executed_lines") or () if keep is None or int(n) in keep
        ]
        missing = [
            int(n) for n in data.get("missing_lines") or () if keep is None or int(n) in keep
        ]
        found.append((path, data.get("contexts") or {}, sorted(executed), sorted(missing)))
    # (priority, file's order, line): the lines asked for first, then file by file, in order
    order = []  # type: list[tuple[int, int, int]]
    for index, (path, _, executed, _) in enumerate(found):
        wanted_first = set(first.get(path) or ())
        order.extend((0 if line in wanted_first else 1, index, line) for line in executed)
    refs = 0
    kept = {}  # type: dict[tuple[int, int], int]
    dropped = {}  # type: dict[int, list[int]]
    for _, index, line in sorted(order):
        ran = sorted(set(found[index][1].get(str(line), ())))
        tests = tuple(sorted(names.setdefault(t, len(names)) for t in ran))
        if budget and refs + len(tests) > budget:
            dropped.setdefault(index, []).append(line)
            continue
        refs += len(tests)
        kept[(index, line)] = sets.setdefault(tests, len(sets))
    files = {}  # type: dict[str, Any]
    cut = {}  # type: dict[str, list[int]]
    for index, (path, _, executed, missing) in enumerate(found):
        files[path] = {
            "executed": {str(n): kept[(index, n)] for n in executed if (index, n) in kept},
            "missing": missing,
        }
        if index in dropped:
            cut[path] = sorted(dropped[index])
    ordered = sorted(names, key=names.__getitem__)
    result = {
        "format": FORMAT,
        "version": str((report.get("meta") or {}).get("version", "")),
        "tests": ordered,
        "sets": [list(s) for s in sorted(sets, key=sets.__getitem__)],
        "files": files,
        "cut": cut,
        "sources": {},
    }
    if wanted.get("sources") and read_source is not None:
        result["sources"] = _sources(sorted(files), wanted, read_source)
    return result


def _sources(paths, wanted, read_source):
    # type: (list[str], dict[str, Any], Any) -> dict[str, str]
    found = {}
    total = 0
    for path in paths:
        data = read_source(path)
        if data is None or len(data) > int(wanted.get("source_cap") or 0):
            continue
        if total + len(data) > int(wanted.get("sources_cap") or 0):
            continue
        try:
            found[path] = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        total += len(data)
    return found


def _read(path):
    # type: (str) -> Any
    full = os.path.join(REPOSITORY, path)
    try:
        with open(full, "rb") as handle:
            return handle.read()
    except (OSError, IOError):
        return None


def measured(library, rcfile, wanted):
    # type: (str, str, dict[str, Any]) -> dict[str, Any]
    """The files of interest in the run's combined data, shaped as coverage.py's JSON report
    (`executed_lines`, `missing_lines`, `contexts`: line -> test names), read through its API."""
    sys.path.insert(0, library)
    import coverage  # type: ignore[import-not-found]  # the kit's, in the report step

    cov = coverage.Coverage(config_file=rcfile)
    cov.load()
    data = cov.get_data()
    files = {}
    for name in data.measured_files():
        if _relative(name) not in wanted["files"]:
            continue
        try:
            _, statements, _, missing, _ = cov.analysis2(name)
            executed = sorted(set(statements) - set(missing))
        except Exception:  # its text is gone: the lines as recorded
            executed, missing = sorted(data.lines(name) or ()), []
        contexts = data.contexts_by_lineno(name)
        files[name] = {
            "executed_lines": executed,
            "missing_lines": sorted(missing),
            "contexts": {str(n): list(c) for n, c in contexts.items()},
        }
    return {"meta": {"version": coverage.__version__}, "files": files}


def main(library, rcfile, target):
    # type: (str, str, str) -> None
    report = measured(library, rcfile, WANTED)
    result = compact(report, WANTED, _read)
    with open(target, "w") as handle:
        json.dump(result, handle, separators=(",", ":"))
    sys.stdout.write("compact coverage report: %d file(s)\n" % len(result["files"]))
