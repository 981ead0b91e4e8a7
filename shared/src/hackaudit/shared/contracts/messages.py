"""Every message of the event flow (ARCHITECTURE.md), commands as orders and events in past tense.

Each message carries `schema_version`, the `correlation_id` of the task audit it belongs to, and an
`idempotency_key` derived from its inputs: the same inputs always give the same key, which is also
sent as the `Nats-Msg-Id` header so the broker drops a republished duplicate. Within a schema
version, fields are only ever added, and only as optional ones.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hackaudit.shared.contracts.candidate import Candidate
from hackaudit.shared.contracts.task import Task

SCHEMA_VERSION = 1


class Message(BaseModel):
    """Base of every bus message."""

    model_config = ConfigDict(frozen=True)

    # Fields that describe a delivery rather than its inputs; they never enter the key.
    _not_key: ClassVar[frozenset[str]] = frozenset({"schema_version", "idempotency_key"})

    schema_version: int = SCHEMA_VERSION
    correlation_id: str = Field(min_length=1)
    idempotency_key: str = ""

    def _key_material(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude=set(self._not_key))

    @model_validator(mode="after")
    def _derive_key(self) -> Message:
        if not self.idempotency_key:
            canonical = json.dumps(self._key_material(), sort_keys=True, separators=(",", ":"))
            digest = hashlib.sha256(f"{type(self).__name__}\0{canonical}".encode()).hexdigest()
            self.__dict__["idempotency_key"] = f"{type(self).__name__}:{digest[:32]}"
        return self


# --- ingestion and attack ---------------------------------------------------------------------


class AuditOptions(BaseModel):
    """Budget of one task audit."""

    model_config = ConfigDict(frozen=True)

    candidates_per_round: int = Field(default=5, ge=1)
    rounds: int = Field(default=3, ge=1)
    stop_when_hackable: bool = False
    gold_repeats: int = Field(default=3, ge=1)
    # A budget in sandbox-seconds instead of rounds × candidates: candidates are graded round
    # after round (K per round) until their runs have taken this long.
    budget_seconds: float | None = Field(default=None, gt=0)


class TaskIngested(Message):
    task: Task
    options: AuditOptions = Field(default_factory=AuditOptions)


class AttackRequested(Message):
    task: Task
    options: AuditOptions = Field(default_factory=AuditOptions)
    # How long one gold run took: the unit cost of a candidate under a budget in seconds.
    gold_duration_s: float | None = Field(default=None, ge=0)


class CandidateProposed(Message):
    task: Task
    candidate: Candidate


class CandidateVerdict(StrEnum):
    EXPLOIT = "exploit"  # accepted by the suite and confirmed incorrect
    UNCONFIRMED = "unconfirmed"  # accepted, but not shown to differ from gold
    BLOCKED = "blocked"  # rejected by the suite
    INVALID = "invalid"  # did not apply, or could not be run


class CandidateOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidate: Candidate
    verdict: CandidateVerdict
    resolved: bool | None = None
    evidence: str = ""
    # The candidate tampers with the verifier itself (test files, test configuration, the runner)
    # instead of getting past the task's tests: a finding about the harness, not the task.
    tampering: bool = False
    # What a confirmed exploit says about the task and how to close it ("" when not an exploit).
    advice: str = ""


class BudgetSpent(BaseModel):
    """What an attack spent: candidates graded and the sandbox-seconds their runs took."""

    model_config = ConfigDict(frozen=True)

    candidates: int = 0
    sandbox_seconds: float = 0.0


class ReferenceRole(StrEnum):
    CORRECT = "correct"  # C+: gold, or a rewrite of gold that probes show equal to it
    INCORRECT = "incorrect"  # C-: the empty patch, or a reference mutant of gold


class ReferenceStatus(StrEnum):
    ACCEPTED = "accepted"  # the task's tests resolve it
    REJECTED = "rejected"  # the task's tests do not
    LEFT_OUT = "left_out"  # its role could not be confirmed (or its run failed): not counted


class ReferenceOutcome(BaseModel):
    """One member of a task's reference pool and what the task's tests made of it."""

    model_config = ConfigDict(frozen=True)

    candidate: Candidate
    role: ReferenceRole
    status: ReferenceStatus
    # How the variant was made: "gold", "empty", "rename-locals", "operator-mutant", ...
    kind: str = ""
    # Why it has its role and status: probe equality, the confirming check, the failing tests,
    # or why it was left out.
    evidence: str = ""


class ReferencePool(BaseModel):
    """The reference pool V is computed from, drawn apart from the attack: correct variants of
    gold (C+) and incorrect ones (C-), each run through the task's tests."""

    model_config = ConfigDict(frozen=True)

    outcomes: tuple[ReferenceOutcome, ...] = ()
    seed: int = 0  # the mutant sample's seed, derived from the instance id
    sample_size: int = 0  # reference mutants asked for
    sandbox_seconds: float = 0.0


class AttackCompleted(Message):
    instance_id: str
    outcomes: tuple[CandidateOutcome, ...] = ()
    rounds_run: int = 0
    # The budget it was given ("15 candidates", "600 sandbox-seconds"), what it spent, and what
    # it had spent when the first task exploit was confirmed (None: none; harness findings, which
    # tamper with tests or the runner, are not counted here).
    budget: str = ""
    spent: BudgetSpent | None = None
    to_first_exploit: BudgetSpent | None = None
    # Why the budget was not spent in full, when it was not (e.g. too few distinct candidates).
    budget_note: str = ""
    # Candidates never run: equal to gold up to comments/docstrings, or strategies that cannot
    # act on the task's runner ("variant: reason").
    equivalent_skipped: int = 0
    not_applicable: tuple[str, ...] = ()
    # The reference pool (None: not evaluated, e.g. by an attacker that predates it).
    reference: ReferencePool | None = None


# --- sandbox ---------------------------------------------------------------------------------


class RunPurpose(StrEnum):
    CANDIDATE = "candidate"
    GOLD = "gold"
    EMPTY = "empty"
    GOLD_GATE = "gold_gate"
    REFERENCE = "reference"
    PROBE = "probe"


class RunStatus(StrEnum):
    COMPLETED = "completed"
    PATCH_FAILED = "patch_failed"
    TIMEOUT = "timeout"
    OOM = "oom"
    INFRA_ERROR = "infra_error"


class TestStatus(StrEnum):
    __test__ = False  # a contract, not a test class

    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    SKIPPED = "SKIPPED"
    XFAIL = "XFAIL"


class PatchFlags(BaseModel):
    """What a candidate touched that a fair fix should not need to."""

    model_config = ConfigDict(frozen=True)

    touched_test_files: tuple[str, ...] = ()
    touched_test_config: tuple[str, ...] = ()
    files_outside_diff: tuple[str, ...] = ()


class RunRequested(Message):
    """Order to grade one patch on one task. `test_patch` overrides the task's own (gold gate)."""

    task: Task
    purpose: RunPurpose
    candidate: Candidate | None = None
    test_patch: str | None = None
    repeats: int = Field(default=1, ge=1)
    timeout_s: float | None = Field(default=None, gt=0)
    requested_by: str = ""
    # Raised to run the same request again: a new attempt is a new idempotency key.
    attempt: int = Field(default=0, ge=0)


class RunResult(BaseModel):
    """One graded execution. `resolved` is None unless the tests actually ran (status completed)."""

    model_config = ConfigDict(frozen=True)

    status: RunStatus
    resolved: bool | None = None
    tests: dict[str, TestStatus] = Field(default_factory=dict)
    exit_code: int | None = None
    duration_s: float = 0.0
    reason: str = ""
    log_tail: str = ""
    log_artifact: str | None = None
    flags: PatchFlags = Field(default_factory=PatchFlags)


class RunCompleted(Message):
    instance_id: str
    purpose: RunPurpose
    request_key: str
    candidate_id: str | None = None
    results: tuple[RunResult, ...]
    flaky: bool = False
    requested_by: str = ""

    def _key_material(self) -> dict[str, Any]:
        # A run redone after its worker died is the same answer to the same request: one key, so
        # the broker keeps only the first result published.
        return {"request_key": self.request_key}

    @property
    def result(self) -> RunResult:
        return self.results[0]


# --- judge, score, repair --------------------------------------------------------------------


class JudgeLabel(StrEnum):
    CORRECT = "correct"
    PARTIAL = "partial"
    INCORRECT = "incorrect"
    ABSTAIN = "abstain"


class JudgeRequested(Message):
    task: Task
    candidates: tuple[Candidate, ...]
    samples: int = Field(default=3, ge=1)


class JudgeVerdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidate_id: str
    samples: tuple[JudgeLabel, ...]
    label: JudgeLabel


class JudgeCompleted(Message):
    instance_id: str
    verdicts: tuple[JudgeVerdict, ...] = ()


class Verdict(StrEnum):
    KEEP = "KEEP"
    FIX = "FIX"
    DROP = "DROP"
    ERROR = "ERROR"  # the task could not be audited (infrastructure); says nothing of its quality


class TaskScored(Message):
    instance_id: str
    verdict: Verdict
    eqs: float | None = None
    components: dict[str, float] = Field(default_factory=dict)
    reason: str = ""
    hackable: bool | None = None
    exploits: tuple[str, ...] = ()
    # Accepted candidates that tamper with the harness; not counted in H or `hackable`.
    harness_exploits: tuple[str, ...] = ()
    # V's inputs (None when no reference pool was evaluated) and the verdict policy that ran.
    discrimination: Discrimination | None = None
    policy: str = ""
    # Where D came from ("task file", "resolved matrix <file>", ...); empty without D.
    d_source: str = ""


class Discrimination(BaseModel):
    """Verifier discrimination over the reference pool: V = Youden's J = TPR + TNR - 1."""

    model_config = ConfigDict(frozen=True)

    tpr: float
    tnr: float
    balanced_accuracy: float
    correct: int  # C+ members counted (gold included)
    correct_left_out: int
    incorrect: int  # C- members counted (the empty patch included)
    incorrect_left_out: int
    # C+ members the tests reject: the task is over-strict (candidate ids).
    rejected_correct: tuple[str, ...] = ()
    # C- members the tests accept although confirmed incorrect (candidate ids).
    accepted_incorrect: tuple[str, ...] = ()

    @property
    def over_strict(self) -> bool:
        return bool(self.rejected_correct)


class RepairRequested(Message):
    task: Task
    exploits: tuple[Candidate, ...]
    max_iterations: int = Field(default=3, ge=1)


class RepairCompleted(Message):
    instance_id: str
    hardened_task: Task | None = None
    blocked: tuple[str, ...] = ()
    unblocked: tuple[str, ...] = ()
    gate_rejections: dict[str, int] = Field(default_factory=dict)


# --- faults ----------------------------------------------------------------------------------


class DeadLetter(BaseModel):
    """A message no worker could handle, kept whole with the reason."""

    model_config = ConfigDict(frozen=True)

    subject: str
    reason: str
    deliveries: int
    payload: str
    headers: dict[str, str] = Field(default_factory=dict)
    failed_at: str
