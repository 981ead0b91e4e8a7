"""The repair stage: a FIX verdict with task exploits is sent to the repairer (when the audit says
one runs), a hardened task is re-audited afresh under its own id, the new verdict names the one
it replaces, both are kept, and redelivered messages resend the same messages only."""

from __future__ import annotations

from hackaudit.scorer.adapters.store import InMemoryAuditStore
from hackaudit.scorer.domain.eqs import ScoringPolicy
from hackaudit.scorer.handlers import ScorerHandlers
from hackaudit.shared import subjects
from hackaudit.shared.contracts import (
    AttackCompleted,
    AttackRequested,
    AuditOptions,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    GoldCoverage,
    HunkCoverage,
    Message,
    ProbeDifference,
    Provenance,
    ReferenceOutcome,
    ReferencePool,
    ReferenceRole,
    ReferenceStatus,
    RepairCompleted,
    RepairRequested,
    RunCompleted,
    RunPurpose,
    RunResult,
    RunStatus,
    Task,
    TaskIngested,
    TaskScored,
    TestStatus,
    Verdict,
)

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="gold", test_patch="tests",
    FAIL_TO_PASS=["t::a"],
)  # fmt: skip
HARDENED = TASK.model_copy(update={"test_patch": "tests+1", "fail_to_pass": ("t::a", "t::new")})
DIFF = ProbeDifference(origin="probe", expression="f(3)", function="f", modules=("lib",))
# Gold's change: lines 3 and 4 of lib/a.py run under the graded tests, 5 and lib/b.py:8 do not.
COVERAGE = GoldCoverage(
    measured=True,
    hunks=(
        HunkCoverage(path="lib/a.py", start=3, lines=(3, 4, 5), executed={3: ("t::a",), 4: ("",)}),
        HunkCoverage(path="lib/b.py", start=8, lines=(8,)),
    ),
    changed_lines=4,
    executed_lines=2,
)


def cand(diff: str, strategy: str = "mutation") -> Candidate:
    return Candidate(
        instance_id=TASK.instance_id, diff=diff, provenance=Provenance(strategy=strategy)
    )


EXPLOIT = cand("wrong")
HARNESS = cand("conftest", "harness")
REWRITE = cand("gold-renamed", "rename-locals")
MUTANT = cand("mutant")


class Bus:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Message]] = []

    async def send(self, subject: str, message: Message) -> None:
        self.sent.append((subject, message))

    def of(self, kind: type[Message]) -> list[Message]:
        return [m for _, m in self.sent if isinstance(m, kind)]


def _run(cid: str, purpose: RunPurpose, resolved: bool, repeats: int = 1) -> RunCompleted:
    status = TestStatus.PASSED if resolved else TestStatus.FAILED
    result = RunResult(status=RunStatus.COMPLETED, resolved=resolved, tests={"t::a": status})
    return RunCompleted(
        correlation_id=cid, instance_id=TASK.instance_id, purpose=purpose,
        request_key=f"{cid}-{purpose.value}", results=(result,) * repeats,
    )  # fmt: skip


def _pool() -> ReferencePool:
    def member(c: Candidate, role: ReferenceRole, status: ReferenceStatus) -> ReferenceOutcome:
        return ReferenceOutcome(candidate=c, role=role, status=status)

    return ReferencePool(
        outcomes=(
            member(Candidate.gold(TASK), ReferenceRole.CORRECT, ReferenceStatus.ACCEPTED),
            member(REWRITE, ReferenceRole.CORRECT, ReferenceStatus.ACCEPTED),
            member(Candidate.empty(TASK), ReferenceRole.INCORRECT, ReferenceStatus.REJECTED),
            member(MUTANT, ReferenceRole.INCORRECT, ReferenceStatus.ACCEPTED),
        )
    )


def _attack(cid: str, exploits: bool) -> AttackCompleted:
    outcomes = [
        CandidateOutcome(candidate=cand(f"b{i}"), verdict=CandidateVerdict.BLOCKED)
        for i in range(3)
    ]
    if exploits:
        outcomes += [
            CandidateOutcome(
                candidate=EXPLOIT, verdict=CandidateVerdict.EXPLOIT, differences=(DIFF,)
            ),
            CandidateOutcome(candidate=HARNESS, verdict=CandidateVerdict.EXPLOIT, tampering=True),
        ]
    return AttackCompleted(
        correlation_id=cid, instance_id=TASK.instance_id, outcomes=tuple(outcomes),
        reference=_pool() if exploits else None, gold_coverage=COVERAGE,
    )  # fmt: skip


async def _audit(handlers: ScorerHandlers, ingested: TaskIngested, exploits: bool) -> None:
    cid = ingested.correlation_id
    await handlers.task_ingested(ingested)
    await handlers.run_completed(_run(cid, RunPurpose.GOLD, True, 3))
    await handlers.run_completed(_run(cid, RunPurpose.EMPTY, False))
    await handlers.attack_completed(_attack(cid, exploits))


async def test_a_fix_verdict_is_repaired_and_the_hardened_task_re_audited() -> None:
    bus, store = Bus(), InMemoryAuditStore()
    handlers = ScorerHandlers(store, bus.send, ScoringPolicy())
    first = TaskIngested(correlation_id="c1", task=TASK, options=AuditOptions(repair=True))
    await _audit(handlers, first, exploits=True)
    (scored,) = bus.of(TaskScored)
    assert isinstance(scored, TaskScored) and scored.verdict is Verdict.FIX
    (request,) = bus.of(RepairRequested)
    assert isinstance(request, RepairRequested)
    assert [c.candidate_id for c in request.exploits] == [EXPLOIT.candidate_id, MUTANT.candidate_id]
    assert request.outcomes[0].differences == (DIFF,)  # the harness finding is not the task's
    assert request.correct_variants == (REWRITE,)  # gold left out: the gold gate covers it
    assert request.unexecuted == ("lib/a.py:5", "lib/b.py:8")  # the repair's line targets
    assert dict(bus.sent)[subjects.REPAIR_REQUESTED] == request

    # A redelivered attack result resends the same request (the bus drops it by its key).
    await handlers.attack_completed(_attack("c1", True))
    assert [m.idempotency_key for m in bus.of(RepairRequested)] == [request.idempotency_key] * 2
    assert [m.idempotency_key for m in bus.of(TaskScored)] == [scored.idempotency_key] * 2

    done = RepairCompleted(
        correlation_id="c1", instance_id=TASK.instance_id, hardened_task=HARDENED,
        blocked=(EXPLOIT.candidate_id,),
    )  # fmt: skip
    await handlers.repair_completed(done)
    await handlers.repair_completed(done)  # redelivered
    again = bus.of(TaskIngested)
    assert len(again) == 2 and again[0] == again[1]
    reaudit = again[0]
    assert isinstance(reaudit, TaskIngested)
    assert reaudit.correlation_id == "c1/repaired" and reaudit.task == HARDENED
    assert reaudit.options.repair is False and reaudit.options.seed == 1
    assert (reaudit.repaired_from, reaudit.previous_verdict) == ("c1", "FIX")

    await _audit(handlers, reaudit, exploits=False)
    attacks = bus.of(AttackRequested)
    assert attacks[-1].idempotency_key != attacks[0].idempotency_key  # a fresh attack
    new = bus.of(TaskScored)[-1]
    assert isinstance(new, TaskScored) and new.verdict is Verdict.KEEP
    assert (new.repaired_from, new.previous_verdict) == ("c1", Verdict.FIX)
    assert new.reason.startswith("re-audit of the task hardened by repair of c1 (was FIX); ")
    assert len(bus.of(RepairRequested)) == 2  # no repair of the repaired task
    old, repaired = store.load("c1"), store.load("c1/repaired")
    assert old is not None and old.scored is not None and old.scored.verdict is Verdict.FIX
    assert old.repair == done
    assert repaired is not None and repaired.scored == new


async def test_no_repair_unless_the_audit_says_a_repairer_runs() -> None:
    bus = Bus()
    handlers = ScorerHandlers(InMemoryAuditStore(), bus.send, ScoringPolicy())
    await _audit(handlers, TaskIngested(correlation_id="c1", task=TASK), exploits=True)
    assert bus.of(RepairRequested) == [] and len(bus.of(TaskScored)) == 1


async def test_a_repair_that_hardened_nothing_is_kept_and_the_verdict_stands() -> None:
    bus, store = Bus(), InMemoryAuditStore()
    handlers = ScorerHandlers(store, bus.send, ScoringPolicy())
    ingested = TaskIngested(correlation_id="c1", task=TASK, options=AuditOptions(repair=True))
    await _audit(handlers, ingested, exploits=True)
    done = RepairCompleted(
        correlation_id="c1", instance_id=TASK.instance_id, unblocked=(EXPLOIT.candidate_id,),
        reason="the augmenters have nothing new to propose",
    )  # fmt: skip
    await handlers.repair_completed(done)
    assert bus.of(TaskIngested) == []
    state = store.load("c1")
    assert state is not None and state.repair == done and state.scored is not None
    assert state.scored.verdict is Verdict.FIX
    # An answer about another audit is not ours.
    await handlers.repair_completed(done.model_copy(update={"correlation_id": "other"}))
    assert bus.of(TaskIngested) == []
