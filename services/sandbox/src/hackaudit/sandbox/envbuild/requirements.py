"""Reads pip requirements from a repository's own files at the base commit, as pure functions.

SWE-bench installs some repositories' requirements from files they carry (its
`MAP_REPO_TO_REQS_PATHS`): the first listed file that exists is read, `-r` includes are followed
(relative to the including file), and lines that point at the repository itself or at local
folders (`-e`, `.`, paths, `file:` URLs) are skipped, as are other options and URLs, which
cannot be had without network. `pyproject.toml`'s `[build-system] requires` names what an
install without build isolation needs beforehand.
"""

from __future__ import annotations

import configparser
import posixpath
import re
import tomllib
from collections.abc import Callable, Sequence

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
    return [line.strip() for line in value.replace(";\n", ";").splitlines() if line.strip()]
