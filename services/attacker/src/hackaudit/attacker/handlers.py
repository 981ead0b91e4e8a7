"""Message handlers: thin — a contract in, one use-case call, a contract out."""

from __future__ import annotations

from hackaudit.attacker.bootstrap import Attacker
from hackaudit.attacker.domain.ports import SandboxPort
from hackaudit.attacker.service_layer.attack import run_attack
from hackaudit.shared.contracts import AttackCompleted, AttackRequested


async def handle_attack_requested(
    request: AttackRequested, attacker: Attacker, sandbox: SandboxPort
) -> AttackCompleted:
    return await run_attack(request, sandbox, attacker.llm, attacker.store, attacker.config)
