"""Provides wheels from a host wheelhouse that `pip download` fills, so images never need network.

For a set of requirements, pip first resolves them against the wheelhouse alone (`--no-index`),
copying exactly the wheels it picks into a staging folder. Only when that fails (a package not
yet downloaded) does it download into the wheelhouse from the package index and resolve again. So
a task seen before is resolved offline, and resolves to the same wheels as long as the wheelhouse
holds no newer match for its requirements.

Wheels are chosen for the base image, not the host: CPython `python_version`, and for compiled
wheels the manylinux tags the base image's glibc supports.

A resolution is remembered in `<wheelhouse>/.resolutions/`, keyed by the requirements, the target
and the wheelhouse's file list: while no wheel is added, the same requirements are answered from
the record without running pip (pip's own offline resolution takes about a second).
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from hackaudit.sandbox.envbuild.errors import WheelhouseError
from hackaudit.sandbox.envbuild.settings import EnvBuildSettings
from hackaudit.shared.logs import get_logger

log = get_logger(__name__)


class PipWheelhouse:
    def __init__(self, settings: EnvBuildSettings) -> None:
        self._settings = settings
        self._python: str | None = settings.pip_python

    def wheels_for(self, packages: Sequence[str], into: Path) -> list[Path]:
        if not packages:
            return []
        wheelhouse = self._settings.wheelhouse
        wheelhouse.mkdir(parents=True, exist_ok=True)
        into.mkdir(parents=True, exist_ok=True)
        remembered = self._remembered(packages, into)
        if remembered is not None:
            return remembered
        wheels = self._resolve(packages, into)
        self._remember(packages, wheels)
        return wheels

    def _resolve(self, packages: Sequence[str], into: Path) -> list[Path]:
        wheelhouse = self._settings.wheelhouse
        offline = self._download(packages, into, ["--no-index", "--find-links", str(wheelhouse)])
        if offline.returncode != 0:
            log.info("wheelhouse.download", packages=len(packages))
            online = self._download(packages, wheelhouse, [])
            if online.returncode != 0:
                raise WheelhouseError(
                    f"pip download {' '.join(packages)} failed: {_tail(online.stderr)}"
                )
            for stale in into.iterdir():
                stale.unlink()
            offline = self._download(
                packages, into, ["--no-index", "--find-links", str(wheelhouse)]
            )
            if offline.returncode != 0:
                raise WheelhouseError(
                    f"the wheelhouse cannot install {' '.join(packages)} even after downloading: "
                    f"{_tail(offline.stderr)}"
                )
        return sorted(into.glob("*.whl"))

    def _record(self, packages: Sequence[str]) -> Path:
        wheelhouse = self._settings.wheelhouse
        key = {
            "packages": sorted(packages),
            "python": self._settings.python_version,
            "platform": _platform_args(self._settings.glibc_minor),
            "wheelhouse": sorted(p.name for p in wheelhouse.glob("*.whl")),
        }
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
        return wheelhouse / ".resolutions" / f"{digest[:32]}.json"

    def _remembered(self, packages: Sequence[str], into: Path) -> list[Path] | None:
        record = self._record(packages)
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

    def _remember(self, packages: Sequence[str], wheels: Sequence[Path]) -> None:
        record = self._record(packages)
        record.parent.mkdir(exist_ok=True)
        partial = record.with_suffix(".tmp")
        partial.write_text(json.dumps([w.name for w in wheels]))
        partial.replace(record)

    def _download(
        self, packages: Sequence[str], dest: Path, extra: list[str]
    ) -> subprocess.CompletedProcess[str]:
        command = [
            self._pip_python(),
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--quiet",
            "--only-binary=:all:",
            "--python-version",
            self._settings.python_version,
            "--implementation",
            "cp",
            *_platform_args(self._settings.glibc_minor),
            "--dest",
            str(dest),
            *extra,
            "--",
            *packages,
        ]
        try:
            return subprocess.run(
                command,
                capture_output=True,
                text=True,
                check=False,
                timeout=self._settings.pip_timeout_s,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WheelhouseError(f"pip download could not run: {exc}") from exc

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


def _has_pip(python: str) -> bool:
    try:
        done = subprocess.run(
            [python, "-m", "pip", "--version"], capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])
