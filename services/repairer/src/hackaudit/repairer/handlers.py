"""Message handlers: thin — a contract in, one use-case call, a contract out."""

from __future__ import annotations

from hackaudit.repairer.bootstrap import Repairer
from hackaudit.repairer.domain.ports import JudgePort, SandboxPort
from hackaudit.repairer.service_layer.repair import run_repair
from hackaudit.shared.contracts import RepairCompleted, RepairRequested


async def handle_repair_requested(
    request: RepairRequested,
    repairer: Repairer,
    sandbox: SandboxPort,
    judge: JudgePort | None = None,
) -> RepairCompleted:
    return await run_repair(
        request, sandbox, repairer.llm, repairer.store, repairer.config, judge=judge
    )
