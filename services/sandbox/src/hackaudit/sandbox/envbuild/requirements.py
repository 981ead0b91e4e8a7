"""Reads pip requirements from a repository's own files at the base commit, as pure functions.

SWE-bench installs some repositories' requirements from files they carry (its
`MAP_REPO_TO_REQS_PATHS`): the first listed file that exists is read, `-r` includes are followed
(relative to the including file), and lines that point at the repository itself or at local
folders (`-e`, `.`, paths, `file:` URLs) are skipped, as are other options and URLs, which
cannot be had without network. `pyproject.toml`'s `[build-system] requires` names what an
install without build isolation needs beforehand. What the install step will ask for is read from
pyproject.toml, setup.cfg and the literal lists of a setup.py, the latter as SWE-bench's
pre-install `sed` steps leave it.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import tomllib
from collections.abc import Callable, Sequence

from hackaudit.sandbox.envbuild.recipe import requirement_name

ReadFile = Callable[[str], str | None]
"""Reads a repository file by its path at the base commit; None when it does not exist."""

_MAX_INCLUDES = 20
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def requirement_lines(text: str) -> list[str]:
    """The logical lines of a requirements file, comments and continuations resolved."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = (pending + line.strip()).strip()
        pending = ""
        if line:
            lines.append(line)
    return lines


def _is_local(line: str) -> bool:
    first = line.split(";")[0].strip()
    return (
        first in {".", ".."}
        or first.startswith(("./", "../", "/", "file:", "~"))
        or bool(_URL.match(first))
        or first.startswith("git+")
    )


def read_requirements(paths: Sequence[str], read: ReadFile) -> tuple[str, ...]:
    """The requirements of the first of `paths` that exists (with its includes), in order."""
    for path in paths:
        text = read(path)
        if text is not None:
            found: list[str] = []
            _collect(path, text, read, found, seen={path})
            return tuple(dict.fromkeys(found))
    return ()


def _collect(path: str, text: str, read: ReadFile, found: list[str], seen: set[str]) -> None:
    for line in requirement_lines(text):
        include = re.match(r"^(-r|--requirement)(\s+|=)?(\S+)$", line)
        if include:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), include.group(3)))
            if target in seen or len(seen) > _MAX_INCLUDES:
                continue
            seen.add(target)
            nested = read(target)
            if nested is not None:
                _collect(target, nested, read, found, seen)
            continue
        if line.startswith("-") or _is_local(line):
            continue
        found.append(line)


def build_requirements(pyproject: str | None) -> tuple[str, ...]:
    """`[build-system] requires` of a pyproject.toml text; () when absent or unreadable."""
    if not pyproject:
        return ()
    try:
        data = tomllib.loads(pyproject)
    except tomllib.TOMLDecodeError:
        return ()
    system = data.get("build-system")
    requires = system.get("requires") if isinstance(system, dict) else None
    if not isinstance(requires, list):
        return ()
    return tuple(str(r).strip() for r in requires if isinstance(r, str) and r.strip())


_EXTRAS = re.compile(r"(?:^|\s)(?:-e\s+)?\.\[([A-Za-z0-9_,.\s-]+)\]")


def install_extras(install: str | None) -> tuple[str, ...]:
    """The extras an install command asks of the repository itself (`pip install -e .[test]`)."""
    if not install:
        return ()
    found: list[str] = []
    for group in _EXTRAS.findall(install):
        found += [e.strip() for e in group.split(",") if e.strip()]
    return tuple(dict.fromkeys(found))


def declared_requirements(
    pyproject: str | None, setup_cfg: str | None, extras: Sequence[str] = ()
) -> tuple[str, ...]:
    """What the repository declares it needs to install and run, with the extras asked for.

    Read statically from `pyproject.toml` (`[project]` dependencies and optional dependencies)
    and `setup.cfg` (`[options]` install_requires and setup_requires, `[options.extras_require]`).
    A `setup.py` that computes its requirements is not run: its needs must be named by the task.
    """
    found: list[str] = []
    found += _pyproject_declared(pyproject, extras)
    found += _setup_cfg_declared(setup_cfg, extras)
    return tuple(dict.fromkeys(r for r in found if r and not _is_local(r)))


def _pyproject_declared(text: str | None, extras: Sequence[str]) -> list[str]:
    if not text:
        return []
    try:
        project = tomllib.loads(text).get("project")
    except tomllib.TOMLDecodeError:
        return []
    if not isinstance(project, dict):
        return []
    found = [str(r) for r in project.get("dependencies", ()) if isinstance(r, str)]
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict):
        for extra in extras:
            found += [str(r) for r in optional.get(extra, ()) if isinstance(r, str)]
    return found


def _setup_cfg_declared(text: str | None, extras: Sequence[str]) -> list[str]:
    if not text:
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    found: list[str] = []
    for key in ("install_requires", "setup_requires"):
        found += _cfg_list(parser.get("options", key, fallback=""))
    for extra in extras:
        found += _cfg_list(parser.get("options.extras_require", extra, fallback=""))
    return found


def _cfg_list(value: str) -> list[str]:
    """One requirement per line; comments (`# ...`, whole lines or trailing) are dropped. A line
    of requirements separated by semicolons (setuptools' older `list-semi` form, `a; b; c`) is
    split, unless what follows the semicolon is an environment marker."""
    lines = (line.split(" #", 1)[0].strip() for line in value.replace(";\n", ";").splitlines())
    found: list[str] = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        _, semicolon, rest = line.partition(";")
        if semicolon and not _MARKER_VARIABLE.search(rest):
            found += [part.strip() for part in line.split(";") if part.strip()]
        else:
            found.append(line)
    return found


# The variables of PEP 508 environment markers: a `;` before one of them starts a marker.
_MARKER_VARIABLE = re.compile(
    r"\b(python_version|python_full_version|os_name|sys_platform|platform_release|"
    r"platform_system|platform_version|platform_machine|platform_python_implementation|"
    r"implementation_name|implementation_version|extra)\b"
)


def setup_py_declared(text: str | None, extras: Sequence[str] = ()) -> tuple[str, ...]:
    """The literal `install_requires` / `extras_require` of a `setup.py`, without running it.

    Found as module-level assignments or as `setup(...)` keywords whose values are literals
    (lists of strings, a dict of them); anything computed is not seen.
    """
    if not text:
        return ()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ()
    names: dict[str, ast.expr] = {}
    values: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                names.setdefault(target.id, node.value)
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg in {"install_requires", "extras_require"}:
                    values[keyword.arg] = keyword.value
    for name in ("install_requires", "extras_require"):
        value = values.get(name, names.get(name))
        if isinstance(value, ast.Name):
            value = names.get(value.id)
        if value is not None:
            values[name] = value
    found = list(_literal_strings(values, "install_requires"))
    groups = _literal(values, "extras_require")
    if isinstance(groups, dict):
        for extra in extras:
            found += [r for r in groups.get(extra, ()) if isinstance(r, str)]
    return tuple(dict.fromkeys(r.strip() for r in found if r.strip() and not _is_local(r)))


def _literal(values: dict[str, ast.expr], name: str) -> object:
    node = values.get(name)
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def _literal_strings(values: dict[str, ast.expr], name: str) -> list[str]:
    value = _literal(values, name)
    return [r for r in value if isinstance(r, str)] if isinstance(value, list | tuple) else []


_SED = re.compile(r"^sed\s+-i\s+(['\"])s/((?:[^/\\]|\\.)*)/((?:[^/\\]|\\.)*)/(g?)\1\s+(\S+)$")
# `grep -q 'X' FILE && sed -i ... FILE || sed -i ... FILE`: SWE-bench's pin that depends on
# what the file already says.
_GREP_THEN_ELSE = re.compile(
    r"^grep\s+-q\s+(['\"])(.*?)\1\s+(\S+)\s+&&\s+(sed\s.*?)\s+\|\|\s+(sed\s.*)$"
)


def _literally(replacement: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: replacement


def apply_sed_edits(text: str, path: str, commands: Sequence[str]) -> str:
    """`text` (the file at `path`) as the pre-install `sed -i 's/A/B/[g]' path` steps leave it.

    Only these simple substitutions are understood (a literal-ish pattern as a Python regular
    expression, GNU sed's first-match-per-line unless `g`), alone or chosen by a test of the
    file, `grep -q 'X' path && sed ... || sed ...` (the first when the file holds a line
    matching X, else the second); other steps are ignored, so the requirements read from the
    file are those the install step will see.
    """
    for command in commands:
        command = command.strip()
        chosen = _GREP_THEN_ELSE.match(command)
        if chosen is not None:
            if chosen.group(3) != path:
                continue
            found = _search(chosen.group(2), text)
            command = chosen.group(4) if found else chosen.group(5)
        text = _substituted(text, path, command.strip())
    return text


def _search(pattern: str, text: str) -> bool:
    """Whether some line of `text` matches grep's basic pattern (read as a Python one)."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        return any(pattern in line for line in text.split("\n"))
    return any(compiled.search(line) for line in text.split("\n"))


def _substituted(text: str, path: str, command: str) -> str:
    match = _SED.match(command)
    if match is None or match.group(5) != path:
        return text
    pattern, replacement = match.group(2), match.group(3).replace("\\/", "/")
    count = 0 if match.group(4) else 1
    try:
        compiled = re.compile(pattern.replace("\\/", "/"))
    except re.error:
        return text
    return "\n".join(
        compiled.sub(_literally(replacement), line, count=count) for line in text.split("\n")
    )


def project_name(pyproject: str | None, setup_cfg: str | None, setup_py: str | None) -> str | None:
    """The distribution name the repository declares: pyproject, setup.cfg or setup.py literal."""
    if pyproject:
        try:
            project = tomllib.loads(pyproject).get("project")
        except tomllib.TOMLDecodeError:
            project = None
        if isinstance(project, dict) and isinstance(project.get("name"), str):
            return str(project["name"])
    if setup_cfg:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(setup_cfg)
            name = parser.get("metadata", "name", fallback="").strip()
        except configparser.Error:
            name = ""
        if name:
            return name
    if setup_py:
        try:
            tree = ast.parse(setup_py)
        except SyntaxError:
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    value = keyword.value
                    if keyword.arg == "name" and isinstance(value, ast.Constant):
                        return str(value.value) if isinstance(value.value, str) else None
    return None


# Build requirements that only a build compiling C extensions asks for.
_COMPILING_BUILD_TOOLS = frozenset(
    {"cython", "extension-helpers", "numpy", "oldest-supported-numpy", "pybind11", "cffi"}
)
_SETUP_PY_EXTENSIONS = re.compile(r"\b(?:Extension|cythonize)\s*\(|\bext_modules\s*=")


def needs_compiler(pyproject: str | None, setup_py: str | None) -> bool:
    """Does installing the repository compile extensions (so its image needs a C compiler)?

    Yes when its `[build-system] requires` names a tool that builds C extensions (Cython,
    extension-helpers, numpy headers, pybind11, cffi), or its setup.py declares extensions.
    """
    names = {requirement_name(r) for r in build_requirements(pyproject)}
    if names & _COMPILING_BUILD_TOOLS:
        return True
    return bool(setup_py) and _SETUP_PY_EXTENSIONS.search(setup_py or "") is not None
