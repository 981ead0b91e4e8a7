"""Which base image an environment starts from, as a pure function of its Python and base.

A Debian release that carries the Python asked for is built locally (debootstrap, no registry):
bullseye has 3.9, bookworm 3.11, trixie 3.13. Any other Python comes from an image reference
(setting `HACKAUDIT_PYTHON_IMAGE`, default `python:{version}-slim`), which must already be
present locally. The target also says which wheels suit the base: its Python version and the
glibc its manylinux wheels may need.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hackaudit.sandbox.envbuild.errors import TaskNotBuildable

DEFAULT_SUITE = "bookworm"
PYTHON_IMAGE_SETTING = "HACKAUDIT_PYTHON_IMAGE"


@dataclass(frozen=True)
class DebianRelease:
    suite: str
    python: str
    glibc_minor: int


DEBIAN_RELEASES: tuple[DebianRelease, ...] = (
    DebianRelease("bullseye", "3.9", 31),
    DebianRelease("bookworm", "3.11", 36),
    DebianRelease("trixie", "3.13", 41),
)


@dataclass(frozen=True)
class BaseTarget:
    """One base: a Debian suite built locally, or an image reference used as it is."""

    python: str
    glibc_minor: int
    suite: str | None = None
    image: str | None = None
    # A Debian base that also carries a C compiler and the Python headers, for repositories
    # that compile extensions when installed (see `needs_compiler`).
    compiler: bool = False

    @property
    def key(self) -> str:
        if self.suite is None:
            return f"image {self.image}"
        return f"{self.suite} with a compiler" if self.compiler else self.suite

    def describe(self) -> str:
        where = f"Debian {self.suite}" if self.suite else f"image {self.image}"
        return f"Python {self.python} ({where}{', with a C compiler' if self.compiler else ''})"

    def with_compiler(self) -> BaseTarget:
        """The same base with a compiler; an image reference is used as it is."""
        return self if self.suite is None else replace(self, compiler=True)


def debian_release(suite: str) -> DebianRelease | None:
    return next((r for r in DEBIAN_RELEASES if r.suite == suite), None)


def base_target(
    python: str | None,
    base: str | None,
    *,
    python_image: str = "python:{version}-slim",
    python_image_glibc_minor: int = 28,
) -> BaseTarget:
    """The base for an environment asking for `python` and/or the Debian release `base`.

    Raises TaskNotBuildable for an unknown release, or a release that does not carry `python`.
    """
    if base is not None:
        release = debian_release(base)
        if release is None:
            known = ", ".join(r.suite for r in DEBIAN_RELEASES)
            raise TaskNotBuildable(
                f"environment.base {base!r} is not supported; use one of {known}, or set "
                "environment.python instead"
            )
        if python is not None and python != release.python:
            raise TaskNotBuildable(
                f"environment.base {base!r} carries Python {release.python}, but "
                f"environment.python is {python}; give only one of them"
            )
        return BaseTarget(release.python, release.glibc_minor, suite=release.suite)
    if python is None:
        return base_target(None, DEFAULT_SUITE)
    release = next((r for r in DEBIAN_RELEASES if r.python == python), None)
    if release is not None:
        return BaseTarget(python, release.glibc_minor, suite=release.suite)
    image = python_image.replace("{version}", python)
    return BaseTarget(python, python_image_glibc_minor, image=image)


def missing_image_message(target: BaseTarget) -> str:
    """Why a task whose Python no Debian release carries cannot be built, and what to set."""
    carried = ", ".join(f"{r.python} ({r.suite})" for r in DEBIAN_RELEASES)
    return (
        f"no base for Python {target.python}: no Debian release here carries it (only "
        f"{carried} are built locally), and the image {target.image} is not present locally "
        f"(nothing can be pulled). Load an image with Python {target.python} and git, and "
        f"point {PYTHON_IMAGE_SETTING} at it (`{{version}}` stands for the Python version)"
    )
