"""The three things the builder needs from outside, each a small port with a real and a fake side.

- `ImageEngine`: look an image up, build one from a context tar (the Docker engine).
- `BaseImageSource`: the tag of the base image every environment starts from.
- `WheelSource`: the exact wheel files that install a set of pip requirements.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, Protocol


class ImageEngine(Protocol):
    def image_id(self, ref: str) -> str | None:
        """The local image's id, or None when no image has that name (nothing is pulled)."""
        ...

    def build(self, context: BinaryIO, *, tag: str, labels: Mapping[str, str]) -> str:
        """Builds the tar `context` (Dockerfile at its root) without network; returns the id."""
        ...


class BaseImageSource(Protocol):
    def base_image(self) -> str:
        """The base image's tag, made first if it has to be."""
        ...


class WheelSource(Protocol):
    def wheels_for(self, packages: Sequence[str], into: Path) -> list[Path]:
        """Puts into `into` exactly the wheels that install `packages`; returns their paths."""
        ...
