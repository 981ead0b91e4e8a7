"""A sandbox worker on a faked container engine (`python -m tests.integration.faults.fake_sandbox`).

Everything but Docker is the real sandbox service (the app, the bus policy, the runner that
plans, parses and grades), so the fault tests exercise the real message flow at a rate Docker
cannot reach on this machine. The fake engine answers the calc task's tests as the real one does:
the gold patch passes them all, any other patch fails the FAIL_TO_PASS tests. Each run takes
`FAKE_SANDBOX_RUN_S` seconds (default 0.2), so faults land while runs are under way.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

from hackaudit.sandbox.adapters.artifact_store import MemoryArtifactStore
from hackaudit.sandbox.adapters.fake_backend import FakeBackend, FakeOutcome, FakeRun, junit_xml
from hackaudit.sandbox.adapters.timing_store import MemoryTimingStore
from hackaudit.sandbox.app import build as build_sandbox
from hackaudit.sandbox.bootstrap import bootstrap
from hackaudit.sandbox.demotion import Demotion
from hackaudit.sandbox.domain.execution import Execution, RunPlan
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared.contracts import TestStatus
from hackaudit.shared.service import Service, serve
from hackaudit.shared.settings import BusSettings
from tests.integration.faults.synthetic import F2P, GOLD_PATCH, P2P


def answer(run: FakeRun) -> FakeOutcome:
    """The calc task's tests under this run's patch."""
    fixed = (run.candidate_diff or "").strip() == GOLD_PATCH.strip()
    statuses = dict.fromkeys(P2P, TestStatus.PASSED)
    for name in F2P:
        statuses[name] = TestStatus.PASSED if fixed else TestStatus.FAILED
    summary = "\n".join(f"{status.value} {name}" for name, status in statuses.items())
    return FakeOutcome(
        runner_output=f"=== short test summary info ===\n{summary}\n",
        junit=junit_xml(statuses),
        exit_code=0 if fixed else 1,
        duration_s=0.05,
    )


@dataclass
class SlowFakeBackend:
    """The fake engine, taking `run_s` seconds per run as a container would."""

    run_s: float
    fake: FakeBackend = field(default_factory=lambda: FakeBackend(respond=answer))

    async def start(self) -> None:
        await self.fake.start()

    async def execute(self, plan: RunPlan, demotion: Demotion | None = None) -> Execution:
        await asyncio.sleep(self.run_s)
        return await self.fake.execute(plan, demotion)

    async def close(self) -> None:
        await self.fake.close()


def build(bus_settings: BusSettings) -> Service:
    settings = SandboxSettings(build_images=False, max_concurrent_runs=4)
    runner = bootstrap(
        settings,
        backend=SlowFakeBackend(float(os.environ.get("FAKE_SANDBOX_RUN_S", "0.2"))),
        artifacts=MemoryArtifactStore(),
        timings=MemoryTimingStore(),
    )
    return build_sandbox(bus_settings, settings, runner)


if __name__ == "__main__":
    serve(build)
