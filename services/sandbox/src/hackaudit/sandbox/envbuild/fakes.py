"""In-memory stand-ins for the builder's ports, for tests that need no Docker engine and no pip."""

from __future__ import annotations

import hashlib
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from hackaudit.sandbox.envbuild.bases import BaseTarget
from hackaudit.sandbox.envbuild.errors import ImageBuildFailed


@dataclass
class RecordedBuild:
    tag: str
    labels: dict[str, str]
    dockerfile: str
    members: list[str]


@dataclass
class FakeImageEngine:
    """Images are a name -> id map; `build` records what it was given and adds the tag."""

    images: dict[str, str] = field(default_factory=dict)
    builds: list[RecordedBuild] = field(default_factory=list)
    fail_with: str | None = None

    def image_id(self, ref: str) -> str | None:
        return self.images.get(ref)

    def build(self, context: BinaryIO, *, tag: str, labels: Mapping[str, str]) -> str:
        with tarfile.open(fileobj=context, mode="r") as tar:
            members = sorted(tar.getnames())
            dockerfile = tar.extractfile("Dockerfile")
            text = dockerfile.read().decode() if dockerfile else ""
        self.builds.append(RecordedBuild(tag, dict(labels), text, members))
        if self.fail_with is not None:
            raise ImageBuildFailed(tag, self.fail_with)
        image_id = "sha256:" + hashlib.sha256(tag.encode()).hexdigest()
        self.images[tag] = image_id
        return image_id


@dataclass
class FakeWheelSource:
    """Writes one small file per requirement, named like a wheel, with fixed content."""

    content: bytes = b"wheel"
    calls: list[tuple[str, ...]] = field(default_factory=list)
    targets: list[tuple[str | None, int | None]] = field(default_factory=list)
    constraints: list[tuple[str, ...]] = field(default_factory=list)

    def wheels_for(
        self,
        packages: Sequence[str],
        into: Path,
        *,
        python_version: str | None = None,
        glibc_minor: int | None = None,
        constraints: Sequence[str] = (),
    ) -> list[Path]:
        self.calls.append(tuple(packages))
        self.constraints.append(tuple(constraints))
        self.targets.append((python_version, glibc_minor))
        into.mkdir(parents=True, exist_ok=True)
        paths = []
        for package in packages:
            path = into / f"{package}-1.0-py3-none-any.whl"
            path.write_bytes(self.content)
            paths.append(path)
        return paths


@dataclass
class FakeBaseImages:
    """A tag per base target (`base/<suite>`, or the image reference itself); records targets."""

    asked: list[BaseTarget] = field(default_factory=list)

    def base_image(self, target: BaseTarget | None = None) -> str:
        if target is None:
            return "base/bookworm"
        self.asked.append(target)
        return target.image or f"base/{target.suite}"
