"""A scorer that saved a step and died before sending its messages: the message that caused the
step is delivered again, and the step's messages must be sent then, else the audit stalls for ever
(no attack requested) or its verdict is stored and never published. The bus drops the copies
of messages that had been sent after all, by their idempotency keys."""

from __future__ import annotations

import pytest

from hackaudit.scorer.adapters.store import InMemoryAuditStore
from hackaudit.scorer.domain import audit
from hackaudit.scorer.domain.eqs import ScoringPolicy
from hackaudit.scorer.handlers import ScorerHandlers
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    AuditOptions,
    JudgeLabel,
    JudgeRequested,
    Message,
    RunCompleted,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
    TaskIngested,
    TaskScored,
    TestStatus,
)
from tests.unit.scorer.test_judge_step import ATTACK, answer, attacked

POLICY = ScoringPolicy()
TASK = Task.model_validate(
    {"instance_id": "lib__lib-1", "repo": "x/lib", "base_commit": "abc", "patch": "gold",
     "test_patch": "tests", "FAIL_TO_PASS": ["t::a"]}
)  # fmt: skip


class DiesOnce:
    """A send that fails once, on the first message of the given type: the process died there."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.die_on: type[Message] | None = None

    async def __call__(self, subject: str, message: Message) -> None:
        if self.die_on is not None and isinstance(message, self.die_on):
            self.die_on = None
            raise RuntimeError("killed between saving the step and sending its messages")
        self.sent.append(message)


def answered(request: RunRequested, resolved: bool) -> RunCompleted:
    status = TestStatus.PASSED if resolved else TestStatus.FAILED
    result = RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests={"t::a": status})
    return RunCompleted(
        correlation_id=request.correlation_id, instance_id=request.task.instance_id,
        purpose=request.purpose, request_key=request.idempotency_key, results=(result,),
    )  # fmt: skip


async def started(send: DiesOnce) -> tuple[ScorerHandlers, RunRequested, RunRequested]:
    handlers = ScorerHandlers(InMemoryAuditStore(), send, POLICY)
    options = AuditOptions(gold_repeats=1)
    await handlers.task_ingested(TaskIngested(correlation_id="c1", task=TASK, options=options))
    gold, empty = (m for m in send.sent if isinstance(m, RunRequested))
    return handlers, gold, empty


@pytest.mark.parametrize(
    ("gold_resolves", "expected"), [(True, AttackRequested), (False, TaskScored)]
)
async def test_a_reference_run_delivered_again_resends_what_sanity_decided(
    gold_resolves: bool, expected: type[Message]
) -> None:
    send = DiesOnce()
    handlers, gold, empty = await started(send)
    await handlers.run_completed(answered(gold, gold_resolves))
    send.die_on = expected
    with pytest.raises(RuntimeError):
        await handlers.run_completed(answered(empty, False))  # saved, then the process died
    assert not any(isinstance(m, expected) for m in send.sent)

    await handlers.run_completed(answered(empty, False))  # redelivered: its ack never came

    assert [type(m) for m in send.sent if isinstance(m, expected)] == [expected]


async def test_an_attack_delivered_again_after_scoring_resends_the_verdict() -> None:
    send = DiesOnce()
    handlers, gold, empty = await started(send)
    await handlers.run_completed(answered(gold, True))
    await handlers.run_completed(answered(empty, False))
    attack = AttackCompleted(correlation_id="c1", instance_id=TASK.instance_id)
    send.die_on = TaskScored
    with pytest.raises(RuntimeError):
        await handlers.attack_completed(attack)

    await handlers.attack_completed(attack)
    await handlers.attack_completed(attack)  # and again: the same verdict, the same key

    verdicts = [m for m in send.sent if isinstance(m, TaskScored)]
    assert len(verdicts) == 2 and verdicts[0] == verdicts[1]


def test_a_judgement_delivered_again_after_scoring_resends_the_same_verdict() -> None:
    state, (request,) = audit.on_attack(attacked(), ATTACK, POLICY)
    assert isinstance(request, JudgeRequested)
    done = answer({1: JudgeLabel.CORRECT}, request)
    state, (scored,) = audit.on_judge(state, done, POLICY)
    assert isinstance(scored, TaskScored) and state.stage is audit.Stage.SCORED

    again, out = audit.on_judge(state, done, POLICY)

    assert again == state and out == [scored]
