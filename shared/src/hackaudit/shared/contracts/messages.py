"""Every message of the event flow (docs/architecture.md): commands as orders, events in past
tense.

Each message carries `schema_version`, the `correlation_id` of the task audit it belongs to, and an
`idempotency_key` derived from its inputs: the same inputs always give the same key, which is also
sent as the `Nats-Msg-Id` header so the broker drops a republished duplicate. Within a schema
version, fields are only ever added, and only as optional ones.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

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
    # Ask the judge service about the candidates for F1 (set by whoever knows one is running;
    # off: F1 is left out and the score says so).
    judge: bool = False
    # Send a FIX task with exploits to the repairer service, then re-audit the hardened task (set
    # by whoever knows a repairer is running; off: the FIX verdict is final).
    repair: bool = False
    # Varied for a re-audit, so that every key derived from the options (the attack's) is new.
    seed: int = Field(default=0, ge=0)
    # The hackaudit version that ran the audit (set by the CLI): an audit is resumed from the
    # results store only under the same version. Empty: not recorded (never resumed from).
    hackaudit_version: str = ""


class TaskIngested(Message):
    task: Task
    options: AuditOptions = Field(default_factory=AuditOptions)
    # A re-audit of a repaired task: the audit whose repair hardened it, and that audit's verdict.
    repaired_from: str = ""
    previous_verdict: str = ""


class AttackRequested(Message):
    task: Task
    options: AuditOptions = Field(default_factory=AuditOptions)
    # How long one gold run took: the unit cost of a candidate under a budget in seconds.
    gold_duration_s: float | None = Field(default=None, ge=0)
    # Gold's graded runs as the audit's sanity step ran them (the request the attacker would send
    # for them: the task's tests, `options.gold_repeats` times): the attacker does not run them
    # again. Empty: the attacker runs them when it needs them.
    gold_runs: tuple[RunResult, ...] = ()


class CandidateVerdict(StrEnum):
    EXPLOIT = "exploit"  # accepted by the suite and confirmed incorrect
    UNCONFIRMED = "unconfirmed"  # accepted, but not shown to differ from gold
    BLOCKED = "blocked"  # rejected by the suite
    INVALID = "invalid"  # did not apply, or could not be run


class ProbeDifference(BaseModel):
    """An input on which a candidate behaves unlike gold: the call (or a replayed test's
    expression), where it was looked up, and both outcomes. A regression test can be written
    from it (the repairer's offline augmenter)."""

    model_config = ConfigDict(frozen=True)

    origin: str  # "probe": a call of what gold changes; "replay": an expression a test asserts on
    expression: str  # Python source of the call, e.g. "Poly([1, 0, -1]).__str__()"
    function: str = ""  # dotted name the expression starts from ("Poly", "Poly.__str__", "f")
    modules: tuple[str, ...] = ()  # where `function` is looked up, first match wins
    test: str = ""  # for "replay": the test ("path::function") the expression comes from
    gold: str = ""  # gold's outcome, as the probe reports it
    candidate: str = ""

    @property
    def private_helper(self) -> bool:
        """A probe's direct call of a private function or method (`_f`, `Class._m`; dunders
        are public protocol). Its inputs come from the probe's generic values, not from the
        helper's callers, so a difference here can lie outside every input it is ever given."""
        parts = self.function.split(".")
        return self.origin == "probe" and any(
            p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts
        )


class CandidateReach(BaseModel):
    """Where a candidate's change sits on gold and what executes it there: `lines` are gold's
    lines ("path:N", new side) the change corresponds to, `tests` the tests (graded or
    repository) and `probes` the number of probes that execute at least one of them on gold;
    `at_import` says a line runs outside every test function (at import or in set-up), where
    every test that uses the module sees it."""

    model_config = ConfigDict(frozen=True)

    lines: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    probes: int = 0
    at_import: bool = False

    @property
    def unreached(self) -> bool:
        """The change sits on gold's statements, and no test, no probe and no import executes
        any of them on gold: nothing checked it. (No line placed: nothing can be said.)"""
        return bool(self.lines) and not (self.tests or self.probes or self.at_import)


class CandidateOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidate: Candidate
    verdict: CandidateVerdict
    resolved: bool | None = None
    evidence: str = ""
    # The candidate tampers with the verifier itself (test files, test configuration, the runner)
    # instead of getting past the task's tests: a finding about the harness, not the task.
    tampering: bool = False
    # The inputs on which a confirmed exploit differs from gold (from the differential probes).
    differences: tuple[ProbeDifference, ...] = ()
    # What a confirmed exploit says about the task and how to close it ("" when not an exploit).
    advice: str = ""
    # What executes the candidate's change on gold (None: not measured). An accepted candidate
    # whose reach is `unreached` was checked by nothing: reported apart from "not shown to differ".
    reach: CandidateReach | None = None

    @property
    def helper_only(self) -> bool:
        """A confirmed exploit whose every difference from gold is a private helper called
        directly by a probe (`ProbeDifference.private_helper`): no public call and no replayed
        test saw it, so it is wrong only if the helper is ever given such an input. Weaker
        evidence than a difference in what the callers see."""
        return bool(self.differences) and all(d.private_helper for d in self.differences)


class BudgetSpent(BaseModel):
    """What an attack spent: candidates graded and the sandbox-seconds their runs took.
    `by_kind`: the sandbox-seconds of every run the attack asked for (gold's and the
    candidates', confirmation's included; the reference pool's apart), per run kind ("grade",
    "probe", "suite", "coverage"); empty when not recorded. A run's sandbox-seconds are its time
    in a run slot: `background_s` is the time those runs went on in the background, behind
    shorter runs at a lowered CPU weight, counted in no figure above."""

    model_config = ConfigDict(frozen=True)

    candidates: int = 0
    sandbox_seconds: float = 0.0
    by_kind: dict[str, float] = Field(default_factory=dict)
    background_s: float = 0.0


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
    gold (C+) and incorrect ones (C-), each run through the task's tests. `sandbox_seconds` is
    what its runs took, within `budget_seconds`: the attack's own sandbox-seconds
    (`attack_seconds`: every run the attack asked for, confirmation's included), within a cap.
    None: not recorded (a pool evaluated before budgets were kept)."""

    model_config = ConfigDict(frozen=True)

    outcomes: tuple[ReferenceOutcome, ...] = ()
    seed: int = 0  # the mutant sample's seed, derived from the instance id
    sample_size: int = 0  # reference mutants asked for
    sandbox_seconds: float = 0.0
    budget_seconds: float | None = None
    attack_seconds: float | None = None


class HunkCoverage(BaseModel):
    """One hunk of gold's source changes and which graded tests execute its changed lines:
    `lines` are the new-side numbers of its added lines, `executed` maps each executed one to
    the tests that ran it ("" for code outside any test function)."""

    model_config = ConfigDict(frozen=True)

    path: str
    start: int
    lines: tuple[int, ...]
    executed: dict[int, tuple[str, ...]] = Field(default_factory=dict)


class RepositoryCoverage(BaseModel):
    """Which repository tests execute gold's changed lines: `tests` are the test files or
    directories run, `executed` maps "path:N" (gold's new side) to the tests that ran it
    (coverage.py's names, "" for code outside any test). `measured` is False (and `reason`
    says why) when the run gave no map; `sandbox_seconds` is what the run took either way."""

    model_config = ConfigDict(frozen=True)

    measured: bool
    reason: str = ""
    tests: tuple[str, ...] = ()
    # Only the tests of `tests` whose names hold one of these words ran (empty: all of them).
    keywords: tuple[str, ...] = ()
    executed: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    executed_lines: int = 0  # changed lines some repository test executes
    sandbox_seconds: float = 0.0


class GoldCoverage(BaseModel):
    """The coverage map of a task, measured once on gold: per hunk of gold's source changes,
    which graded tests execute which changed lines. Reported only, never a verdict's input.
    `measured` is False (and `reason` says why) when it could not be measured."""

    model_config = ConfigDict(frozen=True)

    measured: bool
    reason: str = ""
    hunks: tuple[HunkCoverage, ...] = ()
    changed_lines: int = 0
    executed_lines: int = 0  # changed lines some graded test (or its set-up) executes
    sandbox_seconds: float = 0.0
    # The repository's tests near the change (the test patch's directories, the test modules
    # that import a changed module) run on gold over the same lines: None when not run.
    repository: RepositoryCoverage | None = None

    @property
    def never_executed(self) -> tuple[HunkCoverage, ...]:
        """The hunks none of whose changed lines any graded test executes."""
        return tuple(h for h in self.hunks if not h.executed)

    @property
    def unexecuted(self) -> tuple[str, ...]:
        """Gold's changed statements ("path:N", new side) that no graded test executes."""
        return tuple(f"{h.path}:{n}" for h in self.hunks for n in h.lines if n not in h.executed)


class BudgetUse(StrEnum):
    """How much of its candidate budget an attack used, as its report says."""

    SPENT = "spent"  # graded its whole budget
    STOPPED_AT_EXPLOIT = "stopped_at_exploit"  # stopped at its first confirmed exploit, as asked
    SHORT = "short"  # budget left: the task has too few distinct behaviour-changing candidates
    UNKNOWN = "unknown"  # the attack gave no budget


class UnreachedCandidate(BaseModel):
    """An accepted candidate whose change no test and no probe executes on gold: gold's lines
    ("path:N") its change corresponds to."""

    model_config = ConfigDict(frozen=True)

    candidate_id: str
    lines: tuple[str, ...] = ()


class Unverified(BaseModel):
    """What a verdict leaves unverified, read from the attack: accepted candidates not shown to
    differ from gold (and those among them nothing executes), a budget not used for want of
    candidates, and gold's hunks the graded tests never execute. EQS and the verdict do not
    depend on it; it says how far to trust them. `caveats()` empty: nothing left unverified."""

    model_config = ConfigDict(frozen=True)

    unconfirmed: tuple[str, ...] = ()  # accepted candidates not shown to differ (ids)
    unreached: tuple[UnreachedCandidate, ...] = ()  # of those, the ones nothing executes
    reach_not_measured: int = 0  # unconfirmed candidates whose reach was not measured
    candidates_run: int = 0
    budget: str = ""  # as the attack gave it ("15 candidates (3 rounds of 5)")
    budget_use: BudgetUse = BudgetUse.UNKNOWN
    budget_note: str = ""  # the attack's own words when it ended with budget left
    coverage_measured: bool = False
    coverage_note: str = ""  # why the graded tests' coverage of gold was not measured
    gold_hunks: int = 0  # hunks of gold's source change in the coverage map
    never_executed: tuple[HunkCoverage, ...] = ()  # gold hunks no graded test executes

    def caveats(self) -> tuple[str, ...]:
        """Each thing not verified, as a short phrase (empty: nothing)."""
        found: list[str] = []
        if self.unconfirmed:
            n = len(self.unconfirmed)
            found.append(f"{n} accepted candidate{_s(n)} unconfirmed")
        if self.unreached:
            n = len(self.unreached)
            found.append(f"{n} accepted candidate{_s(n)} unreached by any test or probe")
        if self.budget_use is BudgetUse.SHORT:
            n = self.candidates_run
            found.append(f"only {n} candidate{_s(n)} run of a budget of {self.budget}")
        if not self.coverage_measured:
            found.append("the graded tests' coverage of gold not measured")
        elif self.never_executed:
            found.append(
                f"{len(self.never_executed)} of {self.gold_hunks} gold hunks never executed by "
                "the graded tests"
            )
        return tuple(found)

    def text(self) -> str:
        """One line: "not verified: ..." (empty when nothing is left unverified)."""
        caveats = self.caveats()
        return f"not verified: {', '.join(caveats)}" if caveats else ""


def _s(n: int) -> str:
    return "" if n == 1 else "s"


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
    # The graded tests' coverage of gold's changed lines (None: not measured by this attacker).
    gold_coverage: GoldCoverage | None = None


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
    # A process of the run outlived the sandbox's final kill: the files it changed were not
    # checked (no `files_outside_diff`), and its container was not reused.
    processes_left: bool = False


class Grade(BaseModel):
    """Run the task's own graded tests (its test patch, or `RunRequested.test_patch`) the way
    its verifier runs them, and grade FAIL_TO_PASS / PASS_TO_PASS. The default invocation."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["grade"] = "grade"


class _AddedModule(BaseModel):
    """A test module added to the repository beside the test patch and run on its own."""

    model_config = ConfigDict(frozen=True)

    # path -> text of every file added (the module run, and any module it imports)
    files: dict[str, str]
    test: str  # the path (among `files`) of the module that is run
    # "Class.method": a test of that module that passes whenever the module loads; the run is
    # resolved when it passed.
    loaded: str


class Probe(_AddedModule):
    """A differential probe: the attacker's probe module, run by the image's interpreter
    whatever the task's runner, with hash randomisation off."""

    kind: Literal["probe"] = "probe"


class Capture(_AddedModule):
    """The repairer's capture of gold's outcomes: its module, run by the image's interpreter
    whatever the task's runner."""

    kind: Literal["capture"] = "capture"


class Suite(BaseModel):
    """The task's wider test suite, run by the task's own runner and read by its parser: the
    test directories in `dirs` (none: the whole repository), or only the test files or tests
    in `files` (pytest node ids; `file::function` for sympy's runner; only for runners that take
    test files, see `hackaudit.shared.runners`). `keywords`: only the tests whose names hold
    one of these words (pytest's `-k "a or b"`: a test's, its class's or its module's name;
    sympy's `-k`: a test function's name), for the same runners; empty: every test."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["suite"] = "suite"
    dirs: tuple[str, ...] = ()
    files: tuple[str, ...] | None = None
    keywords: tuple[str, ...] = ()


class Coverage(BaseModel):
    """Line coverage of some source files by some tests, per test: the tests run under the
    task's own runner with coverage.py (given only to this run, never to a graded one) and each
    executed line of `files` is reported with the test functions that executed it
    (`RunResult.coverage`). Never graded: the run's `resolved` stays None.

    `tests`: the runner's arguments, as test files (`tests/test_x.py`, converted to the form the
    runner takes) or ids (`tests/test_x.py::test_a` for pytest, `tests.test_x.T.test_a` for
    unittest), passed as they are; None: the graded ones (the test patch's files, as a graded
    run selects them). `lines`: per file, the only lines of interest (absent: all of the file).
    `first`: per file, lines whose tests are kept before any other line's when the report must
    be cut to stay small (`CoverageResult.cut`): the lines a reader cannot do without."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["coverage"] = "coverage"
    files: tuple[str, ...] = Field(min_length=1)
    lines: dict[str, tuple[int, ...]] = Field(default_factory=dict)
    first: dict[str, tuple[int, ...]] = Field(default_factory=dict)
    tests: tuple[str, ...] | None = None
    # Also return the text of each measured file as the run saw it (`CoverageResult.sources`).
    with_source: bool = False
    # Run this wider suite (its command, as a `Suite` run builds it) instead of `tests`: the
    # repository's tests near the change, measured.
    suite: Suite | None = None


# What a run request runs. A union that grows: a new kind is a new member with its own `kind`
# (a consumer that predates it refuses such a request instead of running something else).
Invocation = Annotated[Grade | Probe | Capture | Suite | Coverage, Field(discriminator="kind")]


class RunRequested(Message):
    """Order to run one patch on one task. What runs is `invocation` (the task's graded tests
    by default); `test_patch` overrides the task's own (gold gate). The sandbox alone turns an
    invocation into a command line and a log parser."""

    task: Task
    purpose: RunPurpose
    candidate: Candidate | None = None
    test_patch: str | None = None
    repeats: int = Field(default=1, ge=1)
    timeout_s: float | None = Field(default=None, gt=0)
    requested_by: str = ""
    # Raised to run the same request again: a new attempt is a new idempotency key.
    attempt: int = Field(default=0, ge=0)
    invocation: Invocation = Field(default_factory=Grade)

    def _key_material(self) -> dict[str, Any]:
        # A grade run keeps the key it had before invocations existed.
        material = super()._key_material()
        if isinstance(self.invocation, Grade):
            material.pop("invocation", None)
        return material


class FileCoverage(BaseModel):
    """One measured file: each executed line with the tests that executed it (indexes into
    `CoverageResult.tests`), and the lines coverage.py could execute that nothing did."""

    model_config = ConfigDict(frozen=True)

    executed: dict[int, tuple[int, ...]] = Field(default_factory=dict)
    missing: tuple[int, ...] = ()


class CoverageResult(BaseModel):
    """What a `Coverage` run measured: per file (repository path) -> per line -> the tests that
    executed it. Test names are listed once in `tests` and lines refer to them by index; a name
    is the test function as coverage.py's `test_function` context gives it
    (`tests.test_ops.OpsTest.test_add`, `tinysym.tests.test_core.test_print`), and "" stands for
    code run outside any test function (imports, fixtures, set-up). `per_test` is False when
    the run recorded no test function at all (every line then falls under ""). A file of
    interest absent from `files` was never imported."""

    model_config = ConfigDict(frozen=True)

    tests: tuple[str, ...] = ()
    files: dict[str, FileCoverage] = Field(default_factory=dict)
    per_test: bool = False
    coverage_version: str = ""
    # With `Coverage.with_source`: each measured file's text (repository path -> text).
    sources: dict[str, str] = Field(default_factory=dict)
    # Executed lines whose tests were left out to keep the result small (path -> lines): the
    # map says nothing of which tests run them.
    cut: dict[str, tuple[int, ...]] = Field(default_factory=dict)

    def tests_of(self, path: str, line: int) -> tuple[str, ...]:
        """The tests that executed `line` of `path` ("" for code outside any test)."""
        found = self.files.get(path)
        indexes = found.executed.get(line, ()) if found else ()
        return tuple(self.tests[i] for i in indexes)


class RunResult(BaseModel):
    """One graded execution. `resolved` is None unless the tests actually ran (status completed)."""

    model_config = ConfigDict(frozen=True)

    status: RunStatus
    resolved: bool | None = None
    tests: dict[str, TestStatus] = Field(default_factory=dict)
    exit_code: int | None = None
    # The time the tests ran in a run slot (the sandbox's sandbox-seconds); time spent in the
    # background at a lowered CPU weight, behind shorter runs, is left out and given apart.
    duration_s: float = 0.0
    background_s: float = 0.0
    reason: str = ""
    log_tail: str = ""
    log_artifact: str | None = None
    flags: PatchFlags = Field(default_factory=PatchFlags)
    # A coverage run's measurements (None: not a coverage run, or coverage.py reported nothing,
    # in which case `reason` says why).
    coverage: CoverageResult | None = None

    @property
    def elapsed_s(self) -> float:
        """The tests' time with their time in the background: what sizes the timeout of a run
        like this one. A run in the background got only the CPU the slots left, so its time in
        a slot alone (`duration_s`) can fall short of what the same work takes in a slot."""
        return self.duration_s + self.background_s


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


class JudgeQuestion(StrEnum):
    # "Is this patch a correct fix for the issue?" -> correct / partial / incorrect
    CORRECTNESS = "correctness"
    # "Does this test block this exploit without rejecting a correct fix?" -> blocks / does not
    BLOCKING = "blocking"


class JudgeLabel(StrEnum):
    CORRECT = "correct"
    PARTIAL = "partial"
    INCORRECT = "incorrect"
    ABSTAIN = "abstain"
    BLOCKS = "blocks"
    DOES_NOT_BLOCK = "does_not_block"


class JudgeSampleOutcome(StrEnum):
    """What became of one sample: an answer, or the recorded reason there is none."""

    ANSWERED = "answered"
    MALFORMED = "malformed"  # not the structured answer the schema asks for
    TRUNCATED = "truncated"  # the output limit came first
    REFUSED = "refused"
    RATE_LIMITED = "rate_limited"  # still 429 after the retries
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"  # 5xx after the retries, connection refused, unreadable body
    NOT_ASKED = "not_asked"  # the budget was spent before this sample


class JudgeRequested(Message):
    task: Task
    candidates: tuple[Candidate, ...]
    samples: int = Field(default=3, ge=1)
    question: JudgeQuestion = JudgeQuestion.CORRECTNESS
    # BLOCKING only: the proposed test patch; the candidates are the exploits it should block.
    test_patch: str | None = None
    requested_by: str = ""

    def answer(
        self,
        verdicts: tuple[JudgeVerdict, ...] = (),
        *,
        left_out: str = "",
        usage: JudgeUsage | None = None,
    ) -> JudgeCompleted:
        """The answer to this request, addressed to whoever asked."""
        return JudgeCompleted(
            correlation_id=self.correlation_id,
            instance_id=self.task.instance_id,
            verdicts=verdicts,
            request_key=self.idempotency_key,
            question=self.question,
            left_out=left_out,
            usage=usage,
            requested_by=self.requested_by,
        )


class JudgeSample(BaseModel):
    """One sample's answer with its semi-formal reasoning, or why it has none."""

    model_config = ConfigDict(frozen=True)

    label: JudgeLabel  # ABSTAIN when the sample has no answer
    outcome: JudgeSampleOutcome = JudgeSampleOutcome.ANSWERED
    premises: tuple[str, ...] = ()  # what the issue requires, what the tests check
    trace: str = ""  # the patch (or test) traced against the premises
    conclusion: str = ""
    detail: str = ""  # for a failed sample: what the backend said (status, stop reason)
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False


class JudgeVerdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    candidate_id: str
    samples: tuple[JudgeLabel, ...]
    label: JudgeLabel
    # Every sample with its rationale, and why the vote abstained when it did.
    details: tuple[JudgeSample, ...] = ()
    reason: str = ""


class JudgeUsage(BaseModel):
    """What a judge request cost: model calls, cache hits, tokens and their price."""

    model_config = ConfigDict(frozen=True)

    backend: str = ""
    model: str = ""
    calls: int = 0  # requests sent to the model (cache hits not included)
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = False  # False: no price configured for the model, cost_usd means nothing


class JudgeCompleted(Message):
    instance_id: str
    verdicts: tuple[JudgeVerdict, ...] = ()
    request_key: str = ""
    question: JudgeQuestion = JudgeQuestion.CORRECTNESS
    # Why nothing was judged (no backend configured, the budget spent); empty when judged.
    left_out: str = ""
    usage: JudgeUsage | None = None
    requested_by: str = ""

    def _key_material(self) -> dict[str, Any]:
        # The answer to one request: judged again after a redelivery (costs and cache hits
        # differ), it is still the same answer, so the broker keeps the first one published.
        if not self.request_key:
            return super()._key_material()
        return {"request_key": self.request_key}


class JudgeAgreement(BaseModel):
    """F1's inputs: the judge's majority labels beside execution's over the candidates asked about.

    Positive = "correct"; the judge's "partial" counts as incorrect; execution's label is
    "resolved and not confirmed incorrect". Abstentions are left out of F1 and counted.
    """

    model_config = ConfigDict(frozen=True)

    f1: float | None = None
    true_positive: int = 0
    false_positive: int = 0  # the judge says correct, execution says not
    false_negative: int = 0  # execution says correct, the judge says not
    true_negative: int = 0
    abstained: int = 0
    # Why F1 was not computed (no judge asked, no backend, budget spent, every vote abstained).
    left_out: str = ""
    # candidate id -> execution's label (True: resolved and not confirmed incorrect)
    execution: dict[str, bool] = Field(default_factory=dict)
    verdicts: tuple[JudgeVerdict, ...] = ()
    usage: JudgeUsage | None = None


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
    # F1's inputs, every sample's rationale and what the judge cost (None: no judge asked).
    judge: JudgeAgreement | None = None
    # For the re-audit of a repaired task: the audit whose verdict this one replaces (both kept).
    repaired_from: str = ""
    previous_verdict: Verdict | None = None
    # What the verdict leaves unverified, read from the attack (None: no attack scored, or a
    # scorer that predates it). A KEEP with caveats is reported with them, never bare.
    unverified: Unverified | None = None


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
    """Order to harden a FIX task's tests until they block its exploits (or the budget is spent)."""

    task: Task
    exploits: tuple[Candidate, ...]
    max_iterations: int = Field(default=3, ge=1)
    # Each exploit's outcome as the attack confirmed it: its evidence and the inputs on which it
    # differs from gold (what the offline augmenter writes regression tests from).
    outcomes: tuple[CandidateOutcome, ...] = ()
    # The reference pool's correct variants (C+ accepted by the task's tests, gold excluded): a
    # new test must pass on each of them too ("do no harm").
    correct_variants: tuple[Candidate, ...] = ()
    budget_seconds: float | None = Field(default=None, gt=0)  # sandbox-seconds for the repair
    budget_tokens: int | None = Field(default=None, ge=0)  # model tokens for the LLM augmenter
    gold_repeats: int = Field(default=3, ge=1)  # gold gate runs (a test that differs is flaky)
    requested_by: str = ""
    # A judge service runs: ask it, for each proposed test, whether the test blocks the exploit.
    judge: bool = False
    # Gold's changed statements ("path:N") the task's graded tests never execute, from the
    # attack's coverage map: a new test aimed at an exploit that changes them should execute them
    # (with the graded tests' options) and pin gold's output there.
    unexecuted: tuple[str, ...] = ()


class GateReason(StrEnum):
    """Why a proposed test was thrown away, gate by gate."""

    SYNTAX = "syntax"
    NOT_COLLECTED = "not_collected"
    IMPORT_ERROR = "import_error"
    FAILS_ON_GOLD = "fails_on_gold"
    FLAKY = "flaky"
    TIMEOUT = "timeout"
    DOES_NOT_BLOCK = "does_not_block"
    REJECTS_CORRECT = "rejects_correct_variant"


class ProposedTest(BaseModel):
    """One test an augmenter proposed, and what the gates made of it."""

    model_config = ConfigDict(frozen=True)

    name: str  # the test function's name
    file: str  # the test file it was written into
    exploit: str  # candidate id of the exploit it targets
    augmenter: str  # "offline" or "llm"
    origin: str = ""  # the difference it was written from, or the model's note
    source: str = ""  # the test's text as inserted
    iteration: int = 1
    accepted: bool = False
    rejection: GateReason | None = None
    detail: str = ""  # why it was rejected, or which exploits it blocks
    test_ids: tuple[str, ...] = ()  # as the task's log parser names it (accepted tests)
    blocks: tuple[str, ...] = ()  # candidate ids of the exploits it blocks
    # The judge's verdict (blocks / does_not_block, 3 samples) on the test against its exploit,
    # beside the gates' execution result; None when no judge answered.
    judge: JudgeVerdict | None = None


class RepairCompleted(Message):
    instance_id: str
    hardened_task: Task | None = None
    blocked: tuple[str, ...] = ()
    unblocked: tuple[str, ...] = ()
    gate_rejections: dict[str, int] = Field(default_factory=dict)
    # Every proposed test with its fate, the loop's spending, and why nothing was hardened.
    tests: tuple[ProposedTest, ...] = ()
    iterations: int = 0
    sandbox_seconds: float = 0.0
    tokens: int = 0
    reason: str = ""
    requested_by: str = ""
    # Why the proposed tests carry no judge verdict (no backend, no answer); "" when judged.
    judge_left_out: str = ""


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
