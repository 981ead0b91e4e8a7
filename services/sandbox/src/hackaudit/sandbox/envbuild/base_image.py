"""Where the base image's tag comes from: a fixed tag, or the repository's base image script.

The script builds the base image when it is missing (debootstrap + `docker import`, minutes) and
prints its tag; when the image exists it only prints the tag. It is run once per builder.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hackaudit.sandbox.envbuild.errors import BaseImageUnavailable
from hackaudit.sandbox.envbuild.settings import EnvBuildSettings


class FixedBaseImage:
    def __init__(self, tag: str) -> None:
        self._tag = tag

    def base_image(self) -> str:
        return self._tag


class ScriptBaseImage:
    def __init__(self, script: Path, *, suite: str = "bookworm", timeout_s: float = 3600) -> None:
        self._script = script
        self._suite = suite
        self._timeout_s = timeout_s
        self._tag: str | None = None

    def base_image(self) -> str:
        if self._tag is None:
            self._tag = self._run()
        return self._tag

    def _run(self) -> str:
        try:
            done = subprocess.run(
                ["bash", str(self._script)],
                capture_output=True,
                text=True,
                check=False,
                timeout=self._timeout_s,
                env=_with_suite(self._suite),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BaseImageUnavailable(f"{self._script} could not run: {exc}") from exc
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            tail = " | ".join(done.stderr.strip().splitlines()[-5:])
            raise BaseImageUnavailable(f"{self._script} failed ({done.returncode}): {tail}")
        return lines[-1].strip()


class UnconfiguredBaseImage:
    def base_image(self) -> str:
        raise BaseImageUnavailable(
            "no base image: set HACKAUDIT_BASE_IMAGE to a tag, or HACKAUDIT_BASE_IMAGE_SCRIPT "
            "to the script that builds it"
        )


def base_image_source(
    settings: EnvBuildSettings,
) -> FixedBaseImage | ScriptBaseImage | UnconfiguredBaseImage:
    """HACKAUDIT_BASE_IMAGE when set, else the base image script."""
    if settings.base_image:
        return FixedBaseImage(settings.base_image)
    script = settings.base_image_script_path()
    if script is None:
        return UnconfiguredBaseImage()
    return ScriptBaseImage(script, suite=settings.base_suite)


def _with_suite(suite: str) -> dict[str, str]:
    return {**os.environ, "HACKAUDIT_BASE_SUITE": suite}
