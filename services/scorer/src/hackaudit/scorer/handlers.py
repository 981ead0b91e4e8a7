"""Thin handlers: load the task's audit state, take one domain step, save it, send what it says."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from hackaudit.scorer.adapters.store import AuditStore
from hackaudit.scorer.domain import audit, repair
from hackaudit.scorer.domain.eqs import ScoringPolicy
from hackaudit.shared import subjects
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    JudgeCompleted,
    JudgeRequested,
    Message,
    RepairCompleted,
    RepairRequested,
    RunCompleted,
    RunRequested,
    TaskIngested,
    TaskScored,
)
from hackaudit.shared.errors import PermanentError
from hackaudit.shared.logs import get_logger

Send = Callable[[str, Message], Awaitable[None]]
log = get_logger("hackaudit.scorer")

SUBJECT_OF: dict[type[Message], str] = {
    RunRequested: subjects.RUN_REQUESTED,
    AttackRequested: subjects.ATTACK_REQUESTED,
    TaskScored: subjects.TASK_SCORED,
    JudgeRequested: subjects.JUDGE_REQUESTED,
    RepairRequested: subjects.REPAIR_REQUESTED,
    TaskIngested: subjects.TASK_INGESTED,  # the re-audit of a repaired task
}


class ScorerHandlers:
    """`in_flight`: audits started at most at once before their verdict (0: no limit); the
    others wait, queued in the order they came, and start as verdicts free places."""

    def __init__(self, store: AuditStore, send: Send, policy: ScoringPolicy, in_flight: int = 0):
        self.store = store
        self.send = send
        self.policy = policy
        self.in_flight = in_flight
        self._admitting = asyncio.Lock()

    async def _emit(self, messages: list[Message]) -> None:
        for message in messages:
            await self.send(SUBJECT_OF[type(message)], message)

    def _state(self, correlation_id: str) -> audit.AuditState:
        state = self.store.load(correlation_id)
        if state is None:
            raise PermanentError(f"no audit {correlation_id!r} in the results store")
        return state

    async def task_ingested(self, msg: TaskIngested) -> None:
        state = self.store.load(msg.correlation_id)
        if state is None:
            self.store.save(audit.begin(msg))
            log.info("audit queued", audit=msg.correlation_id, task=msg.task.instance_id)
        elif state.stage is audit.Stage.SANITY:
            await self._emit(audit.reference_runs(state))
        await self._admit()

    async def _admit(self) -> None:
        """Start queued audits while there are places. Their runs are sent before the state is
        saved: a scorer that dies between the two starts the audit again on its next message,
        and the bus drops the copies of runs already sent. One admission at a time here, and
        the state is read again after sending: a run's result may have come in meanwhile and
        started the audit already (`audit.on_run`), which a save of the state read before
        sending would undo."""
        async with self._admitting:
            for cid in self.store.queued(audit.places(self.store.in_flight(), self.in_flight)):
                queued = self.store.load(cid)
                if queued is None:
                    continue
                _, out = audit.admit(queued)
                if not out:
                    continue
                await self._emit(out)
                current = self.store.load(cid)
                if current is None or current.stage is not audit.Stage.QUEUED:
                    continue
                state, _ = audit.admit(current)
                self.store.save(state)
                log.info("audit started", audit=cid, task=state.task.instance_id)

    async def run_completed(self, msg: RunCompleted) -> None:
        state, out = repair.after_score(
            *audit.on_run(self._state(msg.correlation_id), msg, self.policy)
        )
        self.store.save(state)
        await self._emit(out)
        await self._admit()

    async def attack_completed(self, msg: AttackCompleted) -> None:
        state, out = audit.on_attack(self._state(msg.correlation_id), msg, self.policy)
        await self._scored(state, out)

    async def judge_completed(self, msg: JudgeCompleted) -> None:
        state = self.store.load(msg.correlation_id)
        if state is None:
            return  # a judgement asked for by another service, about an audit not ours
        state, out = audit.on_judge(state, msg, self.policy)
        await self._scored(state, out)

    async def repair_completed(self, msg: RepairCompleted) -> None:
        state = self.store.load(msg.correlation_id)
        if state is None:
            return  # a repair asked for by someone else, about an audit not ours
        state, out = repair.on_repair(state, msg)
        self.store.save(state)
        log.info(
            "repair in",
            task=state.task.instance_id,
            blocked=len(msg.blocked),
            unblocked=len(msg.unblocked),
            reaudit=bool(out),
        )
        await self._emit(out)

    async def _scored(self, state: audit.AuditState, out: list[Message]) -> None:
        state, out = repair.after_score(state, out)
        self.store.save(state)
        if state.scored is not None:
            unverified = state.scored.unverified
            log.info(
                "task scored",
                task=state.task.instance_id,
                verdict=state.scored.verdict.value,
                eqs=state.scored.eqs,
                not_verified=len(unverified.caveats()) if unverified is not None else None,
            )
        await self._emit(out)
        await self._admit()
