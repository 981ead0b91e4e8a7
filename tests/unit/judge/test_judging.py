"""One judge request through the use case with a scripted model: the vote per candidate, the
cache, the concurrency bound, the budget cap, and no backend at all."""

from __future__ import annotations

import pytest

from hackaudit.judge.adapters.scripted_model import ScriptedJudgeModel
from hackaudit.judge.domain.answers import failed
from hackaudit.judge.domain.budget import Budget, Prices
from hackaudit.judge.domain.prompts import JudgeParams, JudgePrompt
from hackaudit.judge.service_layer.judging import Judge
from hackaudit.shared.content_cache import InMemoryCache
from hackaudit.shared.contracts import (
    Candidate,
    JudgeLabel,
    JudgeQuestion,
    JudgeRequested,
    JudgeSample,
    JudgeSampleOutcome,
    Task,
)

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="+gold", test_patch="+t",
    FAIL_TO_PASS=["t::a"], problem_statement="fix it",
)  # fmt: skip
WRONG = Candidate(instance_id=TASK.instance_id, diff="+wrong")
PARAMS = JudgeParams(backend="fake", model="m", max_tokens=1000)


def request(*candidates: Candidate, **extra: object) -> JudgeRequested:
    return JudgeRequested(correlation_id="c1", task=TASK, candidates=candidates, **extra)  # type: ignore[arg-type]


def by_patch(prompt: JudgePrompt) -> str:
    return "correct" if "+gold\n</patch_under_judgement>" in prompt.user else "incorrect"


def judge(model: ScriptedJudgeModel | None, budget: Budget | None = None, **kw: object) -> Judge:
    return Judge(model, InMemoryCache[JudgeSample](), budget or Budget(), PARAMS, **kw)  # type: ignore[arg-type]


async def test_each_candidate_is_asked_three_times_and_voted() -> None:
    model = ScriptedJudgeModel(respond=by_patch)
    done = await judge(model).handle(request(Candidate.gold(TASK), WRONG, Candidate.gold(TASK)))
    assert [v.label for v in done.verdicts] == [JudgeLabel.CORRECT, JudgeLabel.INCORRECT]
    assert len(model.prompts) == 6  # duplicates are asked once
    assert done.usage is not None and done.usage.calls == 6
    assert (
        done.request_key
        == request(Candidate.gold(TASK), WRONG, Candidate.gold(TASK)).idempotency_key
    )


async def test_no_backend_leaves_the_request_out_and_invents_nothing() -> None:
    done = await judge(None).handle(request(WRONG))
    assert done.verdicts == () and "no judge backend" in done.left_out


async def test_concurrency_is_bounded() -> None:
    model = ScriptedJudgeModel(respond=by_patch, delay_s=0.02)
    cands = [Candidate(instance_id=TASK.instance_id, diff=f"+{n}") for n in range(6)]
    await judge(model, concurrency=2).handle(request(*cands))
    assert model.most_in_flight == 2 and len(model.prompts) == 18


async def test_the_budget_stops_asking_and_says_so() -> None:
    # each call uses 1800 tokens; its worst case (prompt estimate + output limit) is ~1700
    model = ScriptedJudgeModel(respond=by_patch, input_tokens=800, output_tokens=1000)
    budget = Budget(prices=Prices(1.0, 1.0), max_tokens=5600)
    slow = judge(model, budget, concurrency=1)
    done = await slow.handle(request(Candidate.gold(TASK), WRONG))
    outcomes = [s.outcome for v in done.verdicts for s in v.details]
    assert outcomes.count(JudgeSampleOutcome.NOT_ASKED) == 3  # 3 × 1800 spent, no room for 1700
    assert len(model.prompts) == 3 and budget.spent_tokens == 5400 <= budget.max_tokens
    assert any("budget spent" in s.detail for v in done.verdicts for s in v.details)
    # everything spent: the next request asks nothing and says why
    budget.max_tokens = budget.spent_tokens
    later = await slow.handle(request(Candidate(instance_id=TASK.instance_id, diff="+new")))
    assert later.left_out.startswith("judge budget spent")
    assert later.verdicts[0].label is JudgeLabel.ABSTAIN


async def test_answers_are_cached_failures_are_not() -> None:
    replies = ["correct", failed(JudgeSampleOutcome.TIMEOUT, "slow"), "correct"]
    model = ScriptedJudgeModel(replies, input_tokens=10, output_tokens=10)
    j = judge(model, concurrency=1)
    first = await j.handle(request(Candidate.gold(TASK)))
    assert first.verdicts[0].label is JudgeLabel.CORRECT
    model2 = ScriptedJudgeModel(["incorrect"])
    j.model = model2
    again = await j.handle(request(Candidate.gold(TASK)))
    assert len(model2.prompts) == 1  # only the sample that timed out is asked again
    assert again.usage is not None and again.usage.cache_hits == 2
    assert sorted(again.verdicts[0].samples) == sorted(
        [JudgeLabel.CORRECT] * 2 + [JudgeLabel.INCORRECT]
    )


async def test_a_hung_backend_is_cut_off_by_the_wall_clock_guard() -> None:
    model = ScriptedJudgeModel(respond=by_patch, delay_s=5.0)
    done = await judge(model, call_limit_s=0.05).handle(request(WRONG))
    assert {s.outcome for s in done.verdicts[0].details} == {JudgeSampleOutcome.TIMEOUT}
    assert done.verdicts[0].label is JudgeLabel.ABSTAIN


async def test_blocking_question_needs_a_test_patch_and_uses_its_labels() -> None:
    model = ScriptedJudgeModel(respond=lambda p: "blocks")
    missing = await judge(model).handle(request(WRONG, question=JudgeQuestion.BLOCKING))
    assert "needs the proposed test patch" in missing.left_out
    done = await judge(model).handle(
        request(WRONG, question=JudgeQuestion.BLOCKING, test_patch="+assert f(3) == 9")
    )
    assert done.verdicts[0].label is JudgeLabel.BLOCKS
    assert "<proposed_test_patch>\n+assert f(3) == 9" in model.prompts[-1].user
    assert done.question is JudgeQuestion.BLOCKING


@pytest.mark.parametrize("samples", [1, 5])
async def test_the_requested_number_of_samples_is_asked(samples: int) -> None:
    model = ScriptedJudgeModel(respond=by_patch)
    done = await judge(model).handle(request(WRONG, samples=samples))
    assert len(done.verdicts[0].details) == samples
