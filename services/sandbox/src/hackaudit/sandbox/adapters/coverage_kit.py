"""coverage.py's wheels for coverage runs, from a host wheelhouse that `pip download` fills.

A coverage run brings its own coverage.py (the task's environment never gets it), as wheels sent
with the run's files (`domain.coverage_run`), one per CPython the image may run:

- `coverage-3.X.whl`: the newest `cp3X` manylinux wheel for each of `pythons` — compiled, so
  the tests are traced by coverage.py's C tracer (the pure-Python one is several times slower on
  a large suite), and the only kind that exists for 3.6–3.8 (coverage 6.2 is the last for 3.6,
  7.2.7 for 3.7, 7.6.1 for 3.8);
- `coverage-any.whl`: the newest pure-Python `py3-none-any` wheel, for any other Python (newer
  than `pythons`), with the slower tracer.

Each wheel is downloaded once into the wheelhouse folder (`pip download --only-binary=:all:`
for that Python and the host's manylinux platform); the sandbox works offline once they are
there. A Python with no wheel is left out (its runs use the pure-Python wheel when it runs on it).
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import structlog

from hackaudit.sandbox.domain.coverage_run import ANY_PYTHON, wheel_name

log = structlog.get_logger(__name__)

PYTHONS = ("3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13")
_VERSION = re.compile(r"^coverage-(\d+(?:\.\d+)*)-")


class CoverageKitMissing(Exception):
    """No coverage.py wheel could be had for coverage runs."""


def _version(path: Path) -> tuple[int, ...]:
    match = _VERSION.match(path.name)
    return tuple(int(p) for p in match.group(1).split(".")) if match else ()


def _newest(paths: Sequence[Path]) -> Path | None:
    return max(paths, key=_version, default=None)


class WheelhouseCoverageKit:
    """The `CoverageKit` from a wheelhouse folder, filled with `pip download` when a wheel is
    missing (blocking; the files are read once and kept)."""

    def __init__(self, folder: Path, pythons: Sequence[str] = PYTHONS, pip: str | None = None):
        self._folder = folder
        self._pythons = tuple(pythons)
        self._pip = pip
        self._files: dict[str, bytes] | None = None
        self._lock = threading.Lock()

    def files(self) -> Mapping[str, bytes]:
        with self._lock:
            if self._files is None:
                self._files = self._collect()
            return self._files

    def _collect(self) -> dict[str, bytes]:
        self._folder.mkdir(parents=True, exist_ok=True)
        chosen: dict[str, Path] = {}
        for python in self._pythons:
            wheel = self._compiled(python)
            if wheel is not None:
                chosen[python] = wheel
        pure = self._pure()
        if pure is not None:
            chosen[ANY_PYTHON] = pure
        if not chosen:
            raise CoverageKitMissing(f"no coverage.py wheel in {self._folder} nor from pip")
        log.info("sandbox.coverage_kit", wheels=sorted(p.name for p in chosen.values()))
        return {wheel_name(python): path.read_bytes() for python, path in chosen.items()}

    def _compiled(self, python: str) -> Path | None:
        tag = "cp" + python.replace(".", "")
        pattern = f"coverage-*-{tag}-*manylinux*{platform.machine()}*.whl"
        found = sorted(self._folder.glob(pattern))
        if not found:
            platforms = [f"manylinux{v}_{platform.machine()}" for v in ("2014", "2010", "1")]
            platforms.append(f"manylinux_2_17_{platform.machine()}")
            self._download(python, [a for p in platforms for a in ("--platform", p)])
            found = sorted(self._folder.glob(pattern))
        return _newest(found)

    def _pure(self) -> Path | None:
        pattern = "coverage-*-py3-none-any.whl"
        found = sorted(self._folder.glob(pattern))
        if not found:
            newest = self._pythons[-1] if self._pythons else "3.11"
            self._download(newest, ["--platform", "any", "--implementation", "py", "--abi", "none"])
            found = sorted(self._folder.glob(pattern))
        return _newest(found)

    def _download(self, python: str, extra: list[str]) -> None:
        pip = self._pip or shutil.which("pip") or shutil.which("pip3")
        if pip is None:
            log.warning("sandbox.coverage_kit.no_pip", python=python)
            return
        argv = [pip, "download", "-q", "--no-deps", "--only-binary=:all:"]
        argv += ["--python-version", python, *extra, "-d", str(self._folder), "coverage"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("sandbox.coverage_kit.pip_failed", python=python, error=str(exc)[:200])
            return
        if done.returncode != 0:
            error = done.stderr.strip()[-300:]
            log.warning("sandbox.coverage_kit.pip_failed", python=python, error=error)


class StaticCoverageKit:
    """A `CoverageKit` of given files (tests, or a kit prepared elsewhere)."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self._files = dict(files)

    def files(self) -> Mapping[str, bytes]:
        if not self._files:
            raise CoverageKitMissing("no coverage.py wheels were given")
        return self._files
