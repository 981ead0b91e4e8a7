"""The forged-result tests again, on warm containers (`isolation = "warm"`): what is checked, and
what the attacker's forgery still passes, does not depend on how the run was isolated."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sandbox_calc import TaskImage, sandbox_settings
from test_sandbox_forged_results import *  # noqa: F403 - the same tests, with the fixture below
from test_sandbox_forged_results import pytestmark  # noqa: F401

from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.runner import Runner


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox(
    tmp_path_factory: pytest.TempPathFactory, calc_image: TaskImage
) -> AsyncIterator[Runner]:
    settings = sandbox_settings(
        tmp_path_factory.mktemp("warm-forged"), isolation="warm", max_concurrent_runs=1
    )
    runner = bootstrap(settings)
    await runner.start()
    yield runner
    await runner.close()
