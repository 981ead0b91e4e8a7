"""Rounds, budget, dedup, early stop, LLM rounds and restart — with a scripted sandbox and model."""

from __future__ import annotations

from collections import Counter

import pytest

from hackaudit.attacker.adapters.fake_llm import ScriptedLLM
from hackaudit.attacker.adapters.llm import CachingLLM
from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.generate.strategies.base import Category
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.ports import Completion, LLMUnavailableError, Prompt
from hackaudit.attacker.service_layer.attack import run_attack
from hackaudit.shared.content_cache import InMemoryCache
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    Candidate,
    CandidateVerdict,
    Coverage,
    CoverageResult,
    FileCoverage,
    Provenance,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Suite,
    TestStatus,
)
from hackaudit.shared.state_store import InMemoryStateStore, JsonFileStateStore
from tests.scripted_sandbox import ScriptedSandbox, passed

LLM_DIFF = """Rationale: keeps the old parity test for odd numbers.
```diff
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -15,2 +15,4 @@ def clamp(value, low, high):
 def is_even(n):
-    return n % 2 == 1
+    if n is None:
+        return False
+    return n % 2 == 0 or n == 3
```
"""


def _request(task, k: int = 5, r: int = 3, stop: bool = False) -> AttackRequested:
    return AttackRequested(
        correlation_id="audit-1",
        task=task,
        options=AuditOptions(candidates_per_round=k, rounds=r, stop_when_hackable=stop),
    )


def accept(*strategies: str):
    graded = None

    def rule(request: RunRequested):
        nonlocal graded
        graded = [*request.task.fail_to_pass, *request.task.pass_to_pass]
        c = request.candidate
        if request.purpose is RunPurpose.CANDIDATE and c and c.provenance.strategy in strategies:
            return passed(graded)
        return None

    return rule


def _candidate_runs(sandbox: ScriptedSandbox) -> list[Candidate]:
    return [
        r.candidate for r in sandbox.requests if r.purpose is RunPurpose.CANDIDATE and r.candidate
    ]


async def test_offline_attack_runs_k_candidates_for_r_rounds(tiny) -> None:
    sandbox = ScriptedSandbox()
    done = await run_attack(_request(tiny.task), sandbox, None, InMemoryStateStore(RoundState))
    assert done.rounds_run == 3
    assert len(done.outcomes) == 15
    assert {o.verdict for o in done.outcomes} == {CandidateVerdict.BLOCKED}
    sent = _candidate_runs(sandbox)
    assert len(sent) == 15 and len({c.content_hash for c in sent}) == 15
    by_round = Counter((c.provenance.round, c.provenance.strategy) for c in sent)
    assert {s for (r, s) in by_round if r == 1} == {
        "harness",
        "special_case",
        "partial_fix",
        "mutation",
    }
    assert by_round[(2, "mutation")] >= 3 and by_round[(3, "mutation")] >= 3
    assert by_round[(2, "harness")] == by_round[(3, "harness")] == 0
    assert done.correlation_id == "audit-1" and done.instance_id == tiny.task.instance_id


async def test_blocked_outcome_carries_the_failing_tests(tiny) -> None:
    done = await run_attack(
        _request(tiny.task, k=1, r=1), ScriptedSandbox(), None, InMemoryStateStore(RoundState)
    )
    (outcome,) = done.outcomes
    assert outcome.verdict is CandidateVerdict.BLOCKED and outcome.resolved is False
    assert (
        "FAIL_TO_PASS not passing: tests/test_core.py::test_is_even (not reported)"
        in outcome.evidence
    )


async def test_early_stop_once_hackable(tiny) -> None:
    """Tampering with the harness says nothing about the task's tests: it never stops the attack
    early; a confirmed task exploit does."""
    sandbox = ScriptedSandbox([accept("harness")])
    store = InMemoryStateStore(RoundState)
    done = await run_attack(_request(tiny.task, stop=True), sandbox, None, store)
    exploits = [o for o in done.outcomes if o.verdict is CandidateVerdict.EXPLOIT]
    assert exploits and all(o.tampering for o in exploits)
    assert len(done.outcomes) == 15 and done.rounds_run == 3
    state = store.load(orch.state_key(_request(tiny.task, stop=True)))
    assert state is not None and not state.stopped_early
    task_exploit = exploits[0].model_copy(update={"tampering": False})
    running = state.model_copy(update={"finished": False, "outcomes": (task_exploit,)})
    action = orch.next_action(running)
    assert isinstance(action, orch.Finish) and action.early
    stopped = orch.finish(running, early=True)
    assert orch.budget_note(stopped) == (
        "stopped at the first confirmed exploit, after 1 candidate"
        " (budget: 15 candidates (3 rounds of 5); --stop-when-hackable)"
    )
    assert orch.budget_note(orch.finish(state)) == ""  # 15 of 15 run: nothing to explain


async def test_without_early_stop_every_round_runs(tiny) -> None:
    sandbox = ScriptedSandbox([accept("harness")])
    done = await run_attack(_request(tiny.task, r=2), sandbox, None, InMemoryStateStore(RoundState))
    assert len(done.outcomes) == 10 and done.rounds_run == 2
    assert done.outcomes[0].verdict is CandidateVerdict.EXPLOIT


async def test_duplicates_and_gold_never_reach_the_sandbox(tiny) -> None:
    gold_again = f"Rationale: same as reference\n```diff\n{tiny.task.patch}```\n"
    llm = ScriptedLLM([LLM_DIFF + "\n" + LLM_DIFF + "\n" + gold_again])
    sandbox = ScriptedSandbox()
    done = await run_attack(
        _request(tiny.task, k=4, r=1), sandbox, llm, InMemoryStateStore(RoundState)
    )
    sent = _candidate_runs(sandbox)
    hashes = [c.content_hash for c in sent]
    assert len(hashes) == len(set(hashes)) == 4
    gold_hash = Candidate(instance_id=tiny.task.instance_id, diff=tiny.task.patch).content_hash
    assert gold_hash not in hashes
    assert sum(c.provenance.strategy == "llm" for c in sent) == 1
    assert len(done.outcomes) == 4


async def test_malformed_model_output_is_an_invalid_candidate(tiny) -> None:
    llm = ScriptedLLM(
        ["I would rather explain than write a diff.", "```diff\nthis is not a diff\n```"]
    )
    sandbox = ScriptedSandbox()
    done = await run_attack(
        _request(tiny.task, k=2, r=2), sandbox, llm, InMemoryStateStore(RoundState)
    )
    invalid = [o for o in done.outcomes if o.verdict is CandidateVerdict.INVALID]
    assert len(invalid) == 2
    assert "no fenced diff block" in invalid[0].evidence
    assert "no file section" in invalid[1].evidence
    assert all(c.provenance.strategy != "llm" for c in _candidate_runs(sandbox))


async def test_model_unavailable_offline_fills_the_round(tiny) -> None:
    llm = ScriptedLLM([LLMUnavailableError("Messages API answered 529")])
    store = InMemoryStateStore(RoundState)
    done = await run_attack(_request(tiny.task, k=4, r=1), ScriptedSandbox(), llm, store)
    assert len(done.outcomes) == 4
    state = store.load(orch.state_key(_request(tiny.task, k=4, r=1)))
    assert state is not None and state.llm_errors == ("Messages API answered 529",)


async def test_later_rounds_show_the_model_what_was_blocked_and_tokens_add_up(tiny) -> None:
    llm = ScriptedLLM(respond=lambda prompt: LLM_DIFF, input_tokens=1000, output_tokens=300)
    store = InMemoryStateStore(RoundState)
    done = await run_attack(_request(tiny.task, k=2, r=3), ScriptedSandbox(), llm, store)
    assert len(llm.prompts) == 3
    assert "already blocked" not in llm.prompts[0].user
    assert "## Candidates the tests already blocked" in llm.prompts[1].user
    assert "### B1" in llm.prompts[1].user and "FAIL_TO_PASS not passing" in llm.prompts[1].user
    assert "Refines: B<n>" in llm.prompts[1].user
    state = store.load(orch.state_key(_request(tiny.task, k=2, r=3)))
    assert state is not None
    assert (state.usage.calls, state.usage.input_tokens, state.usage.output_tokens) == (
        3,
        3000,
        900,
    )
    assert [c.round for c in state.llm_calls] == [1, 2, 3]
    # The model repeats itself: its diff is graded once, offline candidates take the free slots.
    assert len(done.outcomes) == 6
    assert sum(o.candidate.provenance.strategy == "llm" for o in done.outcomes) == 1


async def test_cached_completions_spend_no_tokens(tiny) -> None:
    cache = InMemoryCache[Completion]()
    inner = ScriptedLLM(respond=lambda prompt: LLM_DIFF)
    llm = CachingLLM(inner, cache)
    prompt = Prompt(model="m", system="s", user="u")
    first, second = await llm.complete(prompt), await llm.complete(prompt)
    assert len(inner.prompts) == 1 and not first.cached and second.cached
    usage = orch.TokenUsage().add(10, 5, cached=False).add(10, 5, cached=True)
    assert (usage.calls, usage.cached_calls, usage.input_tokens) == (2, 1, 10)


class Crash(Exception):
    pass


class CrashingSandbox(ScriptedSandbox):
    """Dies on its n-th candidate run, as a worker killed mid-attack would."""

    def __init__(self, crash_on: int) -> None:
        super().__init__()
        self.crash_on = crash_on

    async def run(self, request: RunRequested):  # type: ignore[no-untyped-def]
        if (
            request.purpose is RunPurpose.CANDIDATE
            and self.count(RunPurpose.CANDIDATE) + 1 == self.crash_on
        ):
            self.requests.append(request)
            raise Crash
        return await super().run(request)


@pytest.mark.parametrize("store_kind", ["memory", "json"])
async def test_restart_resumes_from_the_stored_state(tiny, tmp_path, store_kind) -> None:
    store = (
        InMemoryStateStore(RoundState)
        if store_kind == "memory"
        else JsonFileStateStore(RoundState, tmp_path)
    )
    llm = ScriptedLLM(respond=lambda prompt: LLM_DIFF.replace("n == 3", f"n == {len(prompt.user)}"))
    request = _request(tiny.task, k=4, r=3)
    first = CrashingSandbox(crash_on=7)  # in round 2
    with pytest.raises(Crash):
        await run_attack(request, first, llm, store)
    saved = store.load(orch.state_key(request))
    assert saved is not None and saved.round == 2 and len(saved.outcomes) == 6
    assert len(llm.prompts) == 2

    second = ScriptedSandbox()
    done = await run_attack(request, second, llm, store)
    assert len(done.outcomes) == 12 and done.rounds_run == 3
    assert len(llm.prompts) == 3  # round 2's model call was not repeated
    graded_first = {c.content_hash for c in _candidate_runs(first)[:6]}
    assert not graded_first & {c.content_hash for c in _candidate_runs(second)}
    assert len({o.candidate.content_hash for o in done.outcomes}) == 12

    third = ScriptedSandbox()
    again = await run_attack(request, third, llm, store)
    assert again == done and third.requests == []  # finished: reported, nothing rerun


@pytest.mark.parametrize(
    ("k", "llm", "share", "expected"),
    [
        (5, False, 0.5, (0, 5)),
        (5, True, 0.5, (2, 3)),
        (1, True, 0.5, (1, 0)),
        (4, True, 0.0, (1, 3)),
        (3, True, 1.0, (3, 0)),
    ],
)
def test_split_budget(k: int, llm: bool, share: float, expected: tuple[int, int]) -> None:
    assert orch.split_budget(k, llm, share) == expected


def _pool(category: Category, n: int) -> list[Candidate]:
    return [
        Candidate(
            instance_id="t",
            diff=f"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+{category}{i}\n",
            provenance=Provenance(strategy=category.value),
        )
        for i in range(n)
    ]


def test_select_offline_mixes_families_by_round_and_fills_gaps() -> None:
    pools = {
        c: _pool(c, 10)
        for c in (Category.HARNESS, Category.SPECIAL_CASE, Category.PARTIAL_FIX, Category.MUTATION)
    }
    first = Counter(c.provenance.strategy for c in orch.select_offline(pools, 5, 1, set()))
    assert first == {"harness": 1, "special_case": 1, "partial_fix": 1, "mutation": 2}
    later = Counter(c.provenance.strategy for c in orch.select_offline(pools, 10, 2, set()))
    assert later == {"mutation": 8, "partial_fix": 2}
    sparse = {
        Category.MUTATION: _pool(Category.MUTATION, 10),
        Category.HARNESS: _pool(Category.HARNESS, 1),
    }
    got = Counter(c.provenance.strategy for c in orch.select_offline(sparse, 5, 1, set()))
    assert got == {"harness": 1, "mutation": 4}
    seen = {c.content_hash for c in pools[Category.HARNESS][:2]}
    chosen = orch.select_offline(pools, 5, 1, seen)
    assert not seen & {c.content_hash for c in chosen}


def _coverage_of_every_changed_line(request: RunRequested) -> RunResult | None:
    run = request.invocation
    if not isinstance(run, Coverage):
        return None
    files = {
        path: FileCoverage(executed=dict.fromkeys(run.first[path], (0,))) for path in run.files
    }
    coverage = CoverageResult(tests=("tests.test_core.test_even",), files=files, per_test=True)
    return RunResult(status=RunStatus.COMPLETED, coverage=coverage, duration_s=1.5)


async def test_gold_coverage_is_measured_once_and_only_reported(tiny) -> None:
    measured = ScriptedSandbox([_coverage_of_every_changed_line])
    store = InMemoryStateStore(RoundState)
    done = await run_attack(_request(tiny.task, k=2, r=1), measured, None, store)
    runs = [r for r in measured.requests if isinstance(r.invocation, Coverage)]
    assert len(runs) == 1
    assert runs[0].candidate is not None and runs[0].candidate.diff == tiny.task.patch
    assert runs[0].invocation.tests is None  # the graded tests
    found = done.gold_coverage
    assert found is not None and found.measured
    assert found.changed_lines > 0 and found.executed_lines == found.changed_lines
    assert found.hunks[0].executed[found.hunks[0].lines[0]] == ("tests.test_core.test_even",)
    assert found.sandbox_seconds == 1.5
    again = await run_attack(_request(tiny.task, k=2, r=1), measured, None, store)
    assert again.gold_coverage == found
    assert sum(isinstance(r.invocation, Coverage) for r in measured.requests) == 1
    # Without a coverage result, nothing else changes: the same candidates and verdicts.
    plain = await run_attack(
        _request(tiny.task, k=2, r=1), ScriptedSandbox(), None, InMemoryStateStore(RoundState)
    )
    assert plain.gold_coverage is not None and not plain.gold_coverage.measured
    assert plain.gold_coverage.reason == "coverage run completed: no rule"
    assert [(o.candidate.content_hash, o.verdict) for o in plain.outcomes] == [
        (o.candidate.content_hash, o.verdict) for o in done.outcomes
    ]


def _held_back_catches(n: int):
    """Every candidate but the harness's passes the graded tests; gold and all but the `n`-th of
    them also pass a held-back test, which the `n`-th fails (a cheap check confirms it)."""
    extra = "tests/test_core.py::test_held_back"
    seen: list[str] = []

    def rule(request: RunRequested):
        graded = [*request.task.fail_to_pass, *request.task.pass_to_pass]
        c = request.candidate
        if request.purpose is RunPurpose.GOLD:
            return passed([*graded, extra])
        if request.purpose is not RunPurpose.CANDIDATE or c is None:
            return None
        if c.provenance.strategy == "harness":
            return None
        seen.append(c.content_hash)
        if len(seen) == n:
            tests = {**dict.fromkeys(graded, TestStatus.PASSED), extra: TestStatus.FAILED}
            return RunResult(status=RunStatus.COMPLETED, resolved=True, tests=tests)
        return passed([*graded, extra])

    return rule


def _suite_runs(sandbox: ScriptedSandbox) -> list[int]:
    """Indexes of the requests that ran the wider suite (plain or under coverage)."""
    return [
        i
        for i, r in enumerate(sandbox.requests)
        if isinstance(r.invocation, Suite)
        or (isinstance(r.invocation, Coverage) and r.invocation.suite is not None)
    ]


async def test_a_cheap_confirmation_spares_the_wider_suites_of_the_candidates_before_it(
    tiny,
) -> None:
    """Cheapest checks first: two accepted candidates the cheaper checks leave unconfirmed wait
    for their wider suite while the round goes on; the third is confirmed by a held-back test,
    the attack stops there, and no wider suite ever runs. The two say why theirs did not."""
    sandbox = ScriptedSandbox([_held_back_catches(3)])
    done = await run_attack(
        _request(tiny.task, stop=True), sandbox, None, InMemoryStateStore(RoundState)
    )
    assert _suite_runs(sandbox) == []
    exploits = [o for o in done.outcomes if o.verdict is CandidateVerdict.EXPLOIT]
    assert len(exploits) == 1 and "held-back tests" in exploits[0].evidence
    waited = [o for o in done.outcomes if o.verdict is CandidateVerdict.UNCONFIRMED]
    assert len(waited) == 2
    assert all(
        "suite: not run, the task was shown hackable by another candidate first" in o.evidence
        for o in waited
    )
    assert done.to_first_exploit is not None and done.to_first_exploit.candidates == 4


async def test_without_a_cheap_confirmation_every_waiting_candidate_gets_its_wider_suite(
    tiny,
) -> None:
    """No candidate is confirmed cheaply: after the round's candidates are graded, each accepted
    one gets its wider-suite check, in grading order, after every graded run of the round."""
    sandbox = ScriptedSandbox([_held_back_catches(0)])
    request = _request(tiny.task, r=1, stop=True)
    done = await run_attack(request, sandbox, None, InMemoryStateStore(RoundState))
    suites = _suite_runs(sandbox)
    graded = [i for i, r in enumerate(sandbox.requests) if r.purpose is RunPurpose.CANDIDATE]
    assert suites and min(suites) > max(graded)
    accepted = [o for o in done.outcomes if o.resolved]
    assert len(accepted) == 4
    assert all(o.verdict is CandidateVerdict.UNCONFIRMED for o in accepted)
    assert all("suite: " in o.evidence and "not run, the task" not in o.evidence for o in accepted)


async def test_a_stored_attack_resumes_with_the_candidates_awaiting_their_wider_suite(
    tiny, tmp_path
) -> None:
    """The state is saved after every step: a candidate waiting for its wider suite is stored
    with its graded run and cheaper checks, and a restarted attacker runs that suite."""
    store = JsonFileStateStore(RoundState, tmp_path)
    request = _request(tiny.task, k=2, r=1, stop=True)
    done = await run_attack(request, ScriptedSandbox([_held_back_catches(0)]), None, store)
    stored = store.load(orch.state_key(request))
    assert stored is not None and stored.finished and stored.awaiting_suite == ()
    waiting = [o for o in done.outcomes if o.resolved]
    assert waiting
    # The same attack stopped after its graded runs: its waiting candidates come back from disk.
    unfinished = stored.model_copy(
        update={
            "finished": False,
            "outcomes": tuple(o for o in stored.outcomes if not o.resolved),
            "awaiting_suite": tuple(
                orch.AwaitingSuite(
                    candidate=o.candidate,
                    result=passed([*tiny.task.fail_to_pass, *tiny.task.pass_to_pass]),
                    checks=(),
                )
                for o in waiting
            ),
        }
    )
    store.save(unfinished)
    again = ScriptedSandbox([_held_back_catches(0)])
    resumed = await run_attack(request, again, None, store)
    assert not any(r.purpose is RunPurpose.CANDIDATE for r in again.requests)
    checked = [o for o in resumed.outcomes if o.resolved]
    assert {o.candidate.content_hash for o in checked} == {
        o.candidate.content_hash for o in waiting
    }
    assert all(o.evidence.endswith(w.evidence[-60:]) for o, w in zip(checked, waiting, strict=True))
    assert all("suite: " in o.evidence for o in checked)
