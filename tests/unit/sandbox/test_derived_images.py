"""An image's derived image (runnable, warm) is worked out once, however many runs ask at once."""

from __future__ import annotations

import asyncio
import threading

from hackaudit.sandbox.adapters.docker_backend import DerivedImages


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
