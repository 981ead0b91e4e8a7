"""Provides wheels from a host wheelhouse that `pip download` fills, so images never need network.

For a set of requirements, pip first resolves them against the wheelhouse alone (`--no-index`),
copying exactly the wheels it picks into a staging folder. Only when that fails (a package not
yet downloaded) does it download into the wheelhouse from the package index and resolve again. So
a task seen before is resolved offline, and resolves to the same wheels as long as the wheelhouse
holds no newer match for its requirements.

Wheels are chosen for the base image, not the host: its CPython version, and for compiled wheels
the manylinux tags its glibc supports (each build passes its base's; the settings give the
defaults). pip evaluates dependency markers (`tomli; python_version < "3.11"`) for the Python it
runs on, whatever `--python-version` says, so pip runs on a host interpreter of the target
version when there is one (`pythonX.Y` on PATH, or a pyenv version) unless
`HACKAUDIT_PIP_PYTHON` names one; otherwise on the default one, and a marker-dependent
requirement may be missed (the image build then names it).

A resolution is remembered in `<wheelhouse>/.resolutions/`, keyed by the requirements, the target
and the wheelhouse's file list: while no wheel is added, the same requirements are answered from
the record without running pip (pip's own offline resolution takes about a second).

Some requirements exist on PyPI only as source (`docopt`); when the binary-only download fails and
a host interpreter of the target version exists, `pip wheel` on it builds them into the wheelhouse.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hackaudit.sandbox.envbuild.errors import WheelhouseError
from hackaudit.sandbox.envbuild.settings import EnvBuildSettings
from hackaudit.shared.logs import get_logger

log = get_logger(__name__)


@dataclass(frozen=True)
class _Target:
    """The base the wheels are for: its CPython version and glibc 2.<glibc_minor>, and the
    version limits (pip constraints) the resolution must keep."""

    python: str
    glibc_minor: int
    constraints: tuple[str, ...] = ()


class PipWheelhouse:
    def __init__(self, settings: EnvBuildSettings) -> None:
        self._settings = settings
        self._python: str | None = settings.pip_python
        self._pythons: dict[str, str | None] = {}

    def wheels_for(
        self,
        packages: Sequence[str],
        into: Path,
        *,
        python_version: str | None = None,
        glibc_minor: int | None = None,
        constraints: Sequence[str] = (),
    ) -> list[Path]:
        if not packages:
            return []
        target = _Target(
            python_version or self._settings.python_version,
            self._settings.glibc_minor if glibc_minor is None else glibc_minor,
            tuple(sorted(constraints)),
        )
        wheelhouse = self._settings.wheelhouse
        wheelhouse.mkdir(parents=True, exist_ok=True)
        into.mkdir(parents=True, exist_ok=True)
        remembered = self._remembered(packages, into, target)
        if remembered is not None:
            return remembered
        wheels = self._resolve(packages, into, target)
        self._remember(packages, wheels, target)
        return wheels

    def _resolve(self, packages: Sequence[str], into: Path, target: _Target) -> list[Path]:
        wheelhouse = self._settings.wheelhouse
        local = ["--no-index", "--find-links", str(wheelhouse)]
        offline = self._download(packages, into, local, target)
        if offline.returncode != 0:
            log.info("wheelhouse.download", packages=len(packages), python=target.python)
            online = self._download(packages, wheelhouse, [], target)
            if online.returncode != 0 and self._matching_python(target.python):
                online = self._build_wheels(packages, target)
            if online.returncode != 0:
                raise WheelhouseError(
                    f"pip download {' '.join(packages)} failed: {_tail(online.stderr)}"
                )
            for stale in into.iterdir():
                stale.unlink()
            offline = self._download(packages, into, local, target)
            if offline.returncode != 0:
                raise WheelhouseError(
                    f"the wheelhouse cannot install {' '.join(packages)} even after downloading: "
                    f"{_tail(offline.stderr)}"
                )
        return sorted(into.glob("*.whl"))

    def _record(self, packages: Sequence[str], target: _Target) -> Path:
        wheelhouse = self._settings.wheelhouse
        key = {
            "packages": sorted(packages),
            "python": target.python,
            "pip_python": self._python_for(target.python),
            "platform": _platform_args(target.glibc_minor),
            "wheelhouse": sorted(p.name for p in wheelhouse.glob("*.whl")),
        }
        if target.constraints:
            key["constraints"] = list(target.constraints)
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
        return wheelhouse / ".resolutions" / f"{digest[:32]}.json"

    def _remembered(
        self, packages: Sequence[str], into: Path, target: _Target
    ) -> list[Path] | None:
        record = self._record(packages, target)
        try:
            names = json.loads(record.read_text())
        except (OSError, ValueError):
            return None
        sources = [self._settings.wheelhouse / str(name) for name in names]
        if not all(source.is_file() for source in sources):
            return None
        for source in sources:
            shutil.copyfile(source, into / source.name)
        return sorted(into / source.name for source in sources)

    def _remember(self, packages: Sequence[str], wheels: Sequence[Path], target: _Target) -> None:
        record = self._record(packages, target)
        record.parent.mkdir(exist_ok=True)
        partial = record.with_suffix(".tmp")
        partial.write_text(json.dumps([w.name for w in wheels]))
        partial.replace(record)

    def _download(
        self, packages: Sequence[str], dest: Path, extra: list[str], target: _Target
    ) -> subprocess.CompletedProcess[str]:
        command = [
            self._python_for(target.python),
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--quiet",
            "--only-binary=:all:",
            "--python-version",
            target.python,
            "--implementation",
            "cp",
            *_platform_args(target.glibc_minor),
            "--dest",
            str(dest),
            *extra,
            "--",
            *packages,
        ]
        with tempfile.TemporaryDirectory(prefix="hackaudit-constraints-") as tmp:
            if target.constraints:
                file = Path(tmp) / "constraints.txt"
                file.write_text("\n".join(target.constraints) + "\n")
                command[command.index("--") : command.index("--")] = ["--constraint", str(file)]
            return self._pip(command, "pip download")

    def _build_wheels(
        self, packages: Sequence[str], target: _Target
    ) -> subprocess.CompletedProcess[str]:
        """Wheels for requirements some of which PyPI has only as source (`pip wheel`).

        Runs on a host interpreter of the target version, so markers and the wheels built are
        for that Python; binary wheels it picks must still suit the base's glibc, which the
        offline resolution that follows checks.
        """
        log.info("wheelhouse.build_wheels", packages=len(packages), python=target.python)
        wheelhouse = str(self._settings.wheelhouse)
        command = [
            self._python_for(target.python),
            *("-m", "pip", "wheel", "--disable-pip-version-check", "--quiet", "--prefer-binary"),
            "--use-pep517",
            *("--wheel-dir", wheelhouse, "--find-links", wheelhouse, "--"),
            *packages,
        ]
        return self._pip(command, "pip wheel")

    def _pip(self, command: list[str], what: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                command,
                capture_output=True,
                text=True,
                check=False,
                timeout=self._settings.pip_timeout_s,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WheelhouseError(f"{what} could not run: {exc}") from exc

    def _matching_python(self, version: str) -> bool:
        return not self._settings.pip_python and self._python_for(version) != self._pip_python()

    def _python_for(self, version: str) -> str:
        """HACKAUDIT_PIP_PYTHON when set, else a host interpreter of `version` with pip, else
        the default one."""
        if self._settings.pip_python:
            return self._settings.pip_python
        if version not in self._pythons:
            found = next(
                (c for c in _interpreters(version) if _has_pip(c, version)),
                None,
            )
            if found is None:
                log.warning("wheelhouse.no_matching_python", python=version)
            self._pythons[version] = found
        return self._pythons[version] or self._pip_python()

    def _pip_python(self) -> str:
        if self._python is None:
            candidates = [sys.executable, shutil.which("python3"), shutil.which("python")]
            self._python = next((c for c in candidates if c and _has_pip(c)), None)
            if self._python is None:
                raise WheelhouseError(
                    "no Python with pip found on the host; set HACKAUDIT_PIP_PYTHON"
                )
        return self._python


def _platform_args(glibc_minor: int) -> list[str]:
    arch = platform.machine() or "x86_64"
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(glibc_minor, 16, -1)]
    tags += [f"manylinux2014_{arch}", f"linux_{arch}"]
    args: list[str] = []
    for tag in tags:
        args += ["--platform", tag]
    return args


def _interpreters(version: str) -> list[str]:
    """Candidate host interpreters of one Python version: on PATH, then pyenv's."""
    found = [shutil.which(f"python{version}") or ""]
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found += [str(p) for p in sorted((root / "versions").glob(f"{version}.*/bin/python{version}"))]
    return [f for f in found if f]


def _has_pip(python: str, version: str | None = None) -> bool:
    """True when `python` runs pip (and, when `version` is given, is that Python version)."""
    check = "import pip, sys; print('%d.%d' % sys.version_info[:2])"
    try:
        done = subprocess.run(
            [python, "-c", check], capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and (version is None or done.stdout.strip() == version)


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])
