"""An image's derived image (runnable, warm) is worked out once, however many runs ask at once."""

from __future__ import annotations

import asyncio
import io
import threading

import pytest
from docker.errors import DockerException

from hackaudit.sandbox.adapters.docker_backend import DerivedImages, build_image
from hackaudit.sandbox.errors import ContainerFailed


async def test_concurrent_callers_share_one_derivation_per_image() -> None:
    calls: list[str] = []
    release = threading.Event()

    def derive(image: str) -> str:
        release.wait(5)
        calls.append(image)
        return f"{image}-derived"

    images = DerivedImages(derive)
    pending = asyncio.gather(*(images.of(name) for name in ["a", "a", "b", "a"]))
    await asyncio.sleep(0.05)
    release.set()
    assert await pending == ["a-derived", "a-derived", "b-derived", "a-derived"]
    assert await images.of("a") == "a-derived"
    assert sorted(calls) == ["a", "b"]


class _Images:
    def __init__(self, fails: bool) -> None:
        self.fails = fails
        self.built: list[tuple[str, str, str | None]] = []

    def build(self, *, fileobj: io.BytesIO, tag: str, network_mode: str, rm: bool) -> None:
        if self.fails:
            raise DockerException("no space left")
        self.built.append((fileobj.read().decode(), tag, network_mode))


class _Client:
    def __init__(self, fails: bool = False) -> None:
        self.images = _Images(fails)


def test_a_derived_image_is_built_offline_under_its_tag() -> None:
    client = _Client()
    assert build_image(client, "FROM base\n", "derived:1", "cannot derive") == "derived:1"
    assert client.images.built == [("FROM base\n", "derived:1", "none")]


def test_a_failed_build_is_a_container_failure_that_says_what_failed() -> None:
    with pytest.raises(ContainerFailed, match=r"^cannot derive x: no space left$"):
        build_image(_Client(fails=True), "FROM base\n", "derived:1", "cannot derive x")
