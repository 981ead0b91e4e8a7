"""Hand-made audit states for the report's tests: every verdict, an exploit, a harness exploit, an
over-strict task with its rejected correct variant, a reference pool, D from a named source, an
unfinished audit, and text from a patch that must be escaped."""

from __future__ import annotations

from hackaudit.scorer.domain.audit import AuditState, Stage
from hackaudit.shared.contracts import (
    AttackCompleted,
    AuditOptions,
    BudgetSpent,
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    Discrimination,
    Provenance,
    ReferenceOutcome,
    ReferencePool,
    ReferenceRole,
    ReferenceStatus,
    Task,
    TaskScored,
    Verdict,
)

POLICY = "EQS > 0.7 KEEP, < 0.4 DROP; a confirmed exploit caps the verdict at FIX"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'

GOLD = """diff --git a/src/calc/ops.py b/src/calc/ops.py
--- a/src/calc/ops.py
+++ b/src/calc/ops.py
@@ -10,7 +10,7 @@ def clamp(value, low, high):
     if low > high:
         raise ValueError("low > high")
-    return max(low, min(value, high - 1))
+    return max(low, min(value, high))
"""
EXPLOIT = GOLD.replace("min(value, high))", "min(value, high)) if value < 100 else high")
RENAMED = GOLD.replace("value", "x")
HARNESS = """diff --git a/conftest.py b/conftest.py
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,3 @@
+def pytest_runtest_makereport(item, call):
+    call.excinfo = None
+    # forces every test to pass
"""


def task(instance_id: str, patch: str = GOLD) -> Task:
    return Task.model_validate(
        {"instance_id": instance_id, "repo": "calc/calc", "base_commit": "abc123",
         "patch": patch, "test_patch": "diff --git a/tests/test_ops.py b/tests/test_ops.py\n",
         "FAIL_TO_PASS": ["tests/test_ops.py::test_clamp"]}
    )  # fmt: skip


def candidate(instance_id: str, diff: str, strategy: str) -> Candidate:
    return Candidate(instance_id=instance_id, diff=diff, provenance=Provenance(strategy=strategy))


def outcome(
    instance_id: str, diff: str, verdict: CandidateVerdict, strategy: str = "mutation", **kw: object
) -> CandidateOutcome:
    made = candidate(instance_id, diff, strategy)
    return CandidateOutcome.model_validate({"candidate": made, "verdict": verdict, **kw})


def reference(instance_id: str, *, reject_renamed: bool) -> ReferencePool:
    renamed_status = ReferenceStatus.REJECTED if reject_renamed else ReferenceStatus.ACCEPTED
    members = [
        ReferenceOutcome(
            candidate=candidate(instance_id, GOLD, "gold"), role=ReferenceRole.CORRECT,
            status=ReferenceStatus.ACCEPTED, kind="gold", evidence="resolved 3 of 3 runs",
        ),
        ReferenceOutcome(
            candidate=candidate(instance_id, RENAMED, "rewrite"), role=ReferenceRole.CORRECT,
            status=renamed_status, kind="rename-locals",
            evidence="probes: equal to gold on 12 inputs; "
            + ("tests/test_ops.py::test_clamp_source fails: asserts the source text"
               if reject_renamed else "resolved"),
        ),
        ReferenceOutcome(
            candidate=candidate(instance_id, "", "empty"), role=ReferenceRole.INCORRECT,
            status=ReferenceStatus.REJECTED, kind="empty",
            evidence="FAIL_TO_PASS failing: test_clamp",
        ),
        ReferenceOutcome(
            candidate=candidate(instance_id, GOLD.replace("high))", "high + 1))"), "mutant"),
            role=ReferenceRole.INCORRECT, status=ReferenceStatus.REJECTED,
            kind="operator-mutant", evidence="FAIL_TO_PASS failing: test_clamp",
        ),
        ReferenceOutcome(
            candidate=candidate(instance_id, GOLD.replace("low > high", "low >= high"), "mutant"),
            role=ReferenceRole.INCORRECT, status=ReferenceStatus.LEFT_OUT,
            kind="operator-mutant", evidence="not told apart from gold by any probe",
        ),
    ]  # fmt: skip
    return ReferencePool(
        outcomes=tuple(members), seed=1234, sample_size=2, sandbox_seconds=41.0,
        budget_seconds=60.0, attack_seconds=60.0,
    )  # fmt: skip


def discrimination(
    tpr: float, tnr: float, *, rejected: tuple[str, ...] = (), correct: int = 2
) -> Discrimination:
    return Discrimination(
        tpr=tpr, tnr=tnr, balanced_accuracy=(tpr + tnr) / 2, correct=correct,
        correct_left_out=0, incorrect=2, incorrect_left_out=1, rejected_correct=rejected,
    )  # fmt: skip


def state(
    instance_id: str,
    verdict: Verdict | None,
    *,
    audit: str = "a1b2c3d4",
    eqs: float | None = None,
    components: dict[str, float] | None = None,
    outcomes: tuple[CandidateOutcome, ...] = (),
    disc: Discrimination | None = None,
    pool: ReferencePool | None = None,
    d_source: str = "",
    reason: str = "",
    hackable: bool | None = None,
    patch: str = GOLD,
) -> AuditState:
    cid = f"{audit}/{instance_id}"
    attack = AttackCompleted(
        correlation_id=cid, instance_id=instance_id, outcomes=outcomes, rounds_run=2,
        budget="10 candidates", spent=BudgetSpent(candidates=len(outcomes), sandbox_seconds=95.0),
        reference=pool,
    )  # fmt: skip
    scored = (
        None
        if verdict is None
        else TaskScored(
            correlation_id=cid, instance_id=instance_id, verdict=verdict, eqs=eqs,
            components=components or {}, reason=reason, hackable=hackable,
            exploits=tuple(o.candidate.candidate_id for o in outcomes
                           if o.verdict is CandidateVerdict.EXPLOIT and not o.tampering),
            harness_exploits=tuple(o.candidate.candidate_id for o in outcomes if o.tampering),
            discrimination=disc, policy=POLICY, d_source=d_source,
        )
    )  # fmt: skip
    return AuditState(
        correlation_id=cid, task=task(instance_id, patch), options=AuditOptions(),
        stage=Stage.SCORED if scored else Stage.ATTACK,
        attack=attack if scored and verdict is not Verdict.ERROR else None,
        scored=scored,
    )  # fmt: skip


def sample_states() -> list[AuditState]:
    """The audits of a small store, oldest first: one task audited twice (the later audit wins)."""
    fix_id, strict_id = "calc__calc-2", "calc__calc-3"
    renamed = candidate(strict_id, RENAMED, "rewrite").candidate_id
    return [
        state("calc__calc-1", Verdict.FIX, audit="submit", eqs=0.55, hackable=True,
              components={"V": 1.0, "H": 0.5}, reason="an older audit"),
        state("calc__calc-1", Verdict.KEEP, eqs=0.912, hackable=False,
              components={"V": 1.0, "H": 0.0, "D": 0.64},
              outcomes=(outcome("calc__calc-1", EXPLOIT, CandidateVerdict.BLOCKED),),
              disc=discrimination(1.0, 1.0), pool=reference("calc__calc-1", reject_renamed=False),
              d_source="resolved matrix leaderboard.csv (40 submissions)",
              reason="components used: V, H, D; 1 candidates, 0 confirmed exploits"),
        state(fix_id, Verdict.FIX, eqs=0.62, hackable=True, components={"V": 1.0, "H": 0.5},
              outcomes=(
                  outcome(fix_id, EXPLOIT, CandidateVerdict.EXPLOIT,
                          evidence="wider suite: tests/test_more.py::test_big fails (gold passes)",
                          advice="add a test with value >= 100"),
                  outcome(fix_id, GOLD.replace("high))", "high + 2))"), CandidateVerdict.BLOCKED),
                  outcome(fix_id, HARNESS, CandidateVerdict.EXPLOIT, strategy="harness",
                          tampering=True, evidence="conftest.py rewrites every report",
                          advice="discard the patch's test configuration"),
                  outcome(fix_id, GOLD.replace("ValueError", "TypeError"),
                          CandidateVerdict.UNCONFIRMED, evidence="probes: no difference"),
              ),
              disc=discrimination(1.0, 1.0), pool=reference(fix_id, reject_renamed=False),
              reason="FIX, not KEEP: 1 confirmed exploit(s)"),
        state(strict_id, Verdict.DROP, eqs=0.31, hackable=False,
              components={"V": 0.0, "H": 0.0},
              outcomes=(outcome(strict_id, EXPLOIT, CandidateVerdict.BLOCKED),),
              disc=discrimination(0.5, 1.0, rejected=(renamed,)),
              pool=reference(strict_id, reject_renamed=True),
              reason=f"over-strict tests {HOSTILE}", patch=GOLD + HOSTILE),
        state("calc__calc-4", Verdict.ERROR, reason="sanity: infra-error: the image is missing"),
        state("calc__calc-5", None),
        state("calc__calc-6", Verdict.DROP, eqs=0.2, components={"V": 0.2, "H": 0.8},
              hackable=True, outcomes=(
                  outcome("calc__calc-6", f"{EXPLOIT}+# {HOSTILE}\n",
                          CandidateVerdict.EXPLOIT, evidence=f"probe printed {HOSTILE}"),
              )),
    ]  # fmt: skip


def many_states(count: int = 24) -> list[AuditState]:
    """A larger, varied dataset for the screenshot: the samples and more scored tasks."""
    states = sample_states()
    for i in range(count):
        instance_id = f"lib__lib-{100 + i}"
        v = round(1.0 - (i % 7) * 0.12, 2)
        h = round((i % 5) * 0.15, 2)
        score = round(0.35 * v + 0.30 * (1 - h) + 0.35 * (0.3 + (i % 3) * 0.3), 3)
        verdict = Verdict.KEEP if score > 0.7 and h == 0 else Verdict.FIX
        verdict = Verdict.DROP if score < 0.4 else verdict
        exploits = (outcome(instance_id, EXPLOIT, CandidateVerdict.EXPLOIT),) if h else ()
        states.append(
            state(instance_id, verdict, eqs=score, hackable=bool(h),
                  components={"V": v, "H": h, "D": round(0.3 + (i % 3) * 0.3, 2)},
                  outcomes=exploits, disc=discrimination(v, 1.0),
                  d_source="task file (pass@1 12/40)")
        )  # fmt: skip
    return states
