"""Where each base image's tag comes from: a fixed tag, or the repository's base image script.

The script builds the base image of one Debian suite when it is missing (debootstrap + `docker
import`, minutes) and prints its tag; when the image exists it only prints the tag. It is run
once per suite and builder, and once more for a suite's variant with a C compiler. A target
that is an image reference (a Python no Debian release carries) is answered with that
reference; the builder checks it is present.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hackaudit.sandbox.envbuild.bases import DEFAULT_SUITE, BaseTarget
from hackaudit.sandbox.envbuild.errors import BaseImageUnavailable
from hackaudit.sandbox.envbuild.settings import EnvBuildSettings


class FixedBaseImage:
    """One tag for the default suite's environments (`HACKAUDIT_BASE_IMAGE`)."""

    def __init__(self, tag: str, *, suite: str = DEFAULT_SUITE) -> None:
        self._tag = tag
        self._suite = suite

    def base_image(self, target: BaseTarget | None = None) -> str:
        if target is not None and target.compiler:
            raise BaseImageUnavailable(
                f"HACKAUDIT_BASE_IMAGE={self._tag} is used as it is, but {target.describe()} "
                "must compile extensions: unset HACKAUDIT_BASE_IMAGE so that the base image "
                "script builds its base with a compiler"
            )
        if target is None or target.suite == self._suite:
            return self._tag
        if target.image is not None:
            return target.image
        raise BaseImageUnavailable(
            f"HACKAUDIT_BASE_IMAGE={self._tag} serves Debian {self._suite} only; "
            f"{target.describe()} needs another base: unset HACKAUDIT_BASE_IMAGE so that the "
            "base image script builds it"
        )


class ScriptBaseImage:
    def __init__(self, script: Path, *, suite: str = "bookworm", timeout_s: float = 3600) -> None:
        self._script = script
        self._suite = suite
        self._timeout_s = timeout_s
        self._tags: dict[tuple[str, bool], str] = {}

    def base_image(self, target: BaseTarget | None = None) -> str:
        if target is not None and target.image is not None:
            return target.image
        suite = target.suite if target is not None and target.suite else self._suite
        compiler = target is not None and target.compiler
        if (suite, compiler) not in self._tags:
            self._tags[suite, compiler] = self._run(suite, compiler)
        return self._tags[suite, compiler]

    def _run(self, suite: str, compiler: bool) -> str:
        try:
            done = subprocess.run(
                ["bash", str(self._script)],
                capture_output=True,
                text=True,
                check=False,
                timeout=self._timeout_s,
                env=_with_suite(suite, compiler),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BaseImageUnavailable(f"{self._script} could not run: {exc}") from exc
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            tail = " | ".join(done.stderr.strip().splitlines()[-5:])
            raise BaseImageUnavailable(f"{self._script} failed ({done.returncode}): {tail}")
        return lines[-1].strip()


class UnconfiguredBaseImage:
    def base_image(self, target: BaseTarget | None = None) -> str:
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


def _with_suite(suite: str, compiler: bool = False) -> dict[str, str]:
    return {
        **os.environ,
        "HACKAUDIT_BASE_SUITE": suite,
        "HACKAUDIT_BASE_COMPILER": "1" if compiler else "0",
    }
