"""The three things the builder needs from outside, each a small port with a real and a fake side.

- `ImageEngine`: look an image up, build one from a context tar (the Docker engine).
- `BaseImageSource`: the tag of the base image an environment starts from, per base target.
- `WheelSource`: the exact wheel files that install a set of pip requirements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, Protocol

from hackaudit.sandbox.envbuild.bases import BaseTarget


class ImageEngine(Protocol):
    def image_id(self, ref: str) -> str | None:
        """The local image's id, or None when no image has that name (nothing is pulled)."""
        ...

    def build(self, context: BinaryIO, *, tag: str, labels: Mapping[str, str]) -> str:
        """Builds the tar `context` (Dockerfile at its root) without network; returns the id."""
        ...


class BaseImageSource(Protocol):
    def base_image(self, target: BaseTarget | None = None) -> str:
        """The tag of the base for `target` (the default suite's when None), made if need be."""
        ...


class WheelSource(Protocol):
    def wheels_for(
        self,
        packages: Sequence[str],
        into: Path,
        *,
        python_version: str | None = None,
        glibc_minor: int | None = None,
        constraints: Sequence[str] = (),
    ) -> list[Path]:
        """Puts into `into` exactly the wheels that install `packages` on the given Python and
        glibc (the source's defaults when None), within `constraints` (pip's `-c`: they limit
        versions, they add no package); returns their paths."""
        ...
