"""Packs the build context: the Dockerfile, the wheels and the committed repository, as one tar.

The tar is written to an unnamed temporary file, not memory, since a repository with its history
can be large. Entries are added in sorted order with fixed owner and mtime, so the same inputs
give the same context.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from hackaudit.sandbox.envbuild.recipe import CONTEXT_TESTBED, CONTEXT_WHEELS

_MTIME = 1767225600  # 2026-01-01T00:00:00Z


@contextmanager
def build_context(dockerfile: str, wheels: Sequence[Path], testbed: Path) -> Iterator[BinaryIO]:
    """A rewound temporary file holding the context tar, removed when the block ends."""
    with tempfile.TemporaryFile(prefix="hackaudit-context-") as handle:
        with tarfile.open(fileobj=handle, mode="w") as tar:
            _add_bytes(tar, "Dockerfile", dockerfile.encode())
            _add_dir(tar, CONTEXT_WHEELS)
            for wheel in sorted(wheels, key=lambda w: w.name):
                tar.add(wheel, arcname=f"{CONTEXT_WHEELS}/{wheel.name}", filter=_normalised)
            _add_tree(tar, testbed, CONTEXT_TESTBED)
        handle.seek(0)
        yield handle


def _add_tree(tar: tarfile.TarFile, root: Path, arcname: str) -> None:
    tar.add(root, arcname=arcname, recursive=False, filter=_normalised)
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        tar.add(path, arcname=f"{arcname}/{rel}", recursive=False, filter=_normalised)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = _normalised(tarfile.TarInfo(name))
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _add_dir(tar: tarfile.TarFile, name: str) -> None:
    info = _normalised(tarfile.TarInfo(name))
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    tar.addfile(info)


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = _MTIME
    return info
