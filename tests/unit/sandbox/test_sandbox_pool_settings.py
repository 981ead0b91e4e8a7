"""The container pool's bookkeeping (with stand-in create/remove) and the settings."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

from hackaudit.sandbox.adapters.artifact_store import FileArtifactStore, safe_key
from hackaudit.sandbox.adapters.container_pool import ContainerPool
from hackaudit.sandbox.domain.grading import GradingPolicy
from hackaudit.sandbox.settings import SandboxSettings


class Engine:
    """Stands in for the Docker engine: names containers, remembers what was removed."""

    def __init__(self, fail: bool = False) -> None:
        self.names = (f"c{i}" for i in itertools.count())
        self.created: list[str] = []
        self.removed: list[str] = []
        self.fail = fail

    async def create(self) -> str:
        await asyncio.sleep(0.01)
        if self.fail:
            raise RuntimeError("engine refused")
        name = next(self.names)
        self.created.append(name)
        return name

    async def remove(self, name: str) -> None:
        self.removed.append(name)


async def test_every_container_serves_one_run_and_the_pool_refills() -> None:
    engine = Engine()
    pool = ContainerPool("img", 2, engine.create, engine.remove)
    pool.refill()
    await asyncio.sleep(0.05)
    first = await pool.acquire()
    second = await pool.acquire()
    pool.discard(first)
    pool.discard(second)
    await asyncio.sleep(0.05)

    assert first != second
    assert pool.idle == 2
    assert set(engine.removed) == {first, second}
    await pool.close()
    assert set(engine.removed) == set(engine.created)


async def test_an_empty_pool_makes_a_container_on_the_spot() -> None:
    engine = Engine()
    pool = ContainerPool("img", 0, engine.create, engine.remove)
    assert await pool.acquire() == "c0"
    await pool.close()


async def test_a_failing_engine_surfaces_to_the_run_not_a_hang() -> None:
    engine = Engine(fail=True)
    pool = ContainerPool("img", 1, engine.create, engine.remove)
    with pytest.raises(RuntimeError, match="engine refused"):
        await asyncio.wait_for(pool.acquire(), timeout=2)
    await pool.close()


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HACKAUDIT_SANDBOX_MEMORY_MB", "512")
    monkeypatch.setenv("HACKAUDIT_SANDBOX_POOL_SIZE", "4")
    monkeypatch.setenv("HACKAUDIT_SANDBOX_GRADING_POLICY", "swebench-strict-skip")
    monkeypatch.setenv("HACKAUDIT_SANDBOX_ARTIFACTS_DIR", str(tmp_path))
    monkeypatch.setenv("HACKAUDIT_SANDBOX_TIMEOUT_CAP_S", "90")
    settings = SandboxSettings()

    assert settings.memory_mb == 512 and settings.pool_size == 4
    assert settings.run_options().grading is GradingPolicy.SWEBENCH_STRICT_SKIP
    assert settings.timeout_policy().size(None) == 90
    assert settings.artifacts_dir == tmp_path


def test_artifact_keys_stay_inside_the_store(tmp_path: Path) -> None:
    store = FileArtifactStore(tmp_path)
    location = Path(store.write("../../etc/x/../run.log", "log"))

    assert safe_key("../a/./b") == "_/a/_/b"
    assert location.is_relative_to(tmp_path)
    assert location.read_text() == "log"
