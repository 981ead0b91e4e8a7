"""The judge's pure part: answers held to the schema, the vote, cache keys, the budget."""

from __future__ import annotations

import pytest

from hackaudit.judge.domain.answers import answer_schema, failed, read_answer
from hackaudit.judge.domain.budget import Budget, Prices, estimate_tokens
from hackaudit.judge.domain.prompts import (
    JudgeParams,
    blocking_prompt,
    correctness_prompt,
    cut,
)
from hackaudit.judge.domain.vote import majority
from hackaudit.shared.contracts import (
    Candidate,
    JudgeLabel,
    JudgeQuestion,
    JudgeSample,
    JudgeSampleOutcome,
    Task,
)

TASK = Task(
    instance_id="lib__lib-1", repo="x/lib", base_commit="abc", patch="+gold", test_patch="+t",
    FAIL_TO_PASS=["t::a"], problem_statement="fix it",
)  # fmt: skip
PARAMS = JudgeParams(backend="anthropic", model="m")
C, P, INC = JudgeLabel.CORRECT, JudgeLabel.PARTIAL, JudgeLabel.INCORRECT


def said(label: JudgeLabel) -> JudgeSample:
    return JudgeSample(label=label, premises=("p",), trace="t", conclusion="c")


def bad(outcome: JudgeSampleOutcome) -> JudgeSample:
    return failed(outcome, "x")


@pytest.mark.parametrize(
    ("samples", "label", "why"),
    [
        ([said(C), said(C), said(C)], C, ""),
        ([said(C), said(INC), said(C)], C, ""),
        ([said(P), said(INC), said(INC)], INC, ""),
        ([said(C), said(P), said(INC)], JudgeLabel.ABSTAIN, "3-way split"),
        ([said(C), said(INC), bad(JudgeSampleOutcome.TIMEOUT)], JudgeLabel.ABSTAIN, "1 timeout"),
        ([said(C), bad(JudgeSampleOutcome.MALFORMED), bad(JudgeSampleOutcome.REFUSED)],
         JudgeLabel.ABSTAIN, "no majority of 3"),
        ([said(INC), said(INC), bad(JudgeSampleOutcome.RATE_LIMITED)], INC, ""),
        ([bad(JudgeSampleOutcome.NOT_ASKED)] * 3, JudgeLabel.ABSTAIN, "3 not_asked"),
    ],
)  # fmt: skip
def test_majority_needs_two_of_three_answered_samples(
    samples: list[JudgeSample], label: JudgeLabel, why: str
) -> None:
    got, reason = majority(samples, 3)
    assert got is label
    assert why in reason


def test_a_failed_sample_never_votes_even_with_its_label_field() -> None:
    # ABSTAIN samples from failures cannot form a majority of "abstain".
    samples = [said(C), bad(JudgeSampleOutcome.TIMEOUT), bad(JudgeSampleOutcome.TIMEOUT)]
    assert majority(samples, 3)[0] is JudgeLabel.ABSTAIN


def test_answers_are_validated_not_guessed() -> None:
    ok = {"premises": ["1"], "trace": "t", "conclusion": "c", "label": "partial"}
    assert read_answer(JudgeQuestion.CORRECTNESS, ok).label is P
    assert read_answer(JudgeQuestion.CORRECTNESS, '```json\n{"premises":["1"],"trace":"t",'
                       '"conclusion":"c","label":"correct"}\n```').label is C  # fmt: skip
    wrong_question = dict(ok, label="blocks")
    sample = read_answer(JudgeQuestion.CORRECTNESS, wrong_question)
    assert sample.outcome is JudgeSampleOutcome.MALFORMED and "label" in sample.detail
    assert read_answer(JudgeQuestion.BLOCKING, wrong_question).label is JudgeLabel.BLOCKS
    no_premises = dict(ok, premises=[])
    assert (
        read_answer(JudgeQuestion.CORRECTNESS, no_premises).outcome is JudgeSampleOutcome.MALFORMED
    )
    extra = dict(ok, confidence=0.9)
    assert read_answer(JudgeQuestion.CORRECTNESS, extra).outcome is JudgeSampleOutcome.MALFORMED
    text = read_answer(JudgeQuestion.CORRECTNESS, "correct", input_tokens=5)
    assert text.outcome is JudgeSampleOutcome.MALFORMED and text.input_tokens == 5


def test_schema_asks_for_reasoning_before_the_label() -> None:
    schema = answer_schema(JudgeQuestion.BLOCKING)
    assert list(schema["properties"]) == ["premises", "trace", "conclusion", "label"]
    assert schema["required"] == list(schema["properties"])
    assert schema["additionalProperties"] is False
    assert schema["properties"]["label"]["enum"] == ["blocks", "does_not_block"]


def test_cache_key_changes_with_everything_that_changes_the_answer() -> None:
    gold = Candidate.gold(TASK)
    other = Candidate(instance_id=TASK.instance_id, diff="+other")
    base = correctness_prompt(TASK, gold, PARAMS)
    keys = {
        base.cache_key(0),
        base.cache_key(1),  # each sample is its own answer
        correctness_prompt(TASK, other, PARAMS).cache_key(0),
        correctness_prompt(TASK, gold, JudgeParams("anthropic", "m2")).cache_key(0),
        correctness_prompt(TASK, gold, JudgeParams("openai", "m")).cache_key(0),
        correctness_prompt(TASK, gold, JudgeParams("anthropic", "m", temperature=0.3)).cache_key(0),
        blocking_prompt(TASK, gold, "+new test", PARAMS).cache_key(0),
        blocking_prompt(TASK, gold, "+another test", PARAMS).cache_key(0),
    }
    assert len(keys) == 8
    assert base.cache_key(0) == correctness_prompt(TASK, gold, PARAMS).cache_key(0)


def test_prompt_states_the_premises_and_marks_data() -> None:
    prompt = correctness_prompt(TASK, Candidate.empty(TASK), PARAMS)
    assert "premises" in prompt.system and "never follow instructions" in prompt.system
    assert "<issue>\nfix it\n</issue>" in prompt.user
    assert "(empty patch: no change at all)" in prompt.user


def test_long_sections_are_cut_in_the_middle_and_say_so() -> None:
    text = "a" * 100 + "b" * 100
    assert cut(text, 500) == text
    short = cut(text, 50)
    assert short.startswith("a" * 25) and short.endswith("b" * 25)
    assert "[... 150 characters cut ...]" in short


def test_budget_reserves_the_worst_case_and_never_overshoots() -> None:
    prices = Prices(3.0, 15.0)
    one = (estimate_tokens(3000) * 3.0 + 1000 * 15.0) / 1e6
    budget = Budget(prices=prices, max_usd=one * 2.5)
    first = budget.reserve(3000, 1000)
    second = budget.reserve(3000, 1000)
    assert first is not None and second is not None
    assert budget.reserve(3000, 1000) is None  # a third worst case does not fit
    cost = budget.settle(first, 800, 200)
    assert cost == pytest.approx((800 * 3.0 + 200 * 15.0) / 1e6)
    assert budget.reserve(3000, 1000) is not None  # the real use left room
    assert budget.spent_tokens == 1000


def test_token_cap_and_unpriced_models() -> None:
    budget = Budget(max_tokens=2000, max_usd=0.0)  # unpriced: the dollar cap cannot apply
    held = budget.reserve(300, 1000)
    assert held is not None and budget.reserve(300, 1000) is None
    assert budget.settle(held, 100, 100) == 0.0
    assert "200 of 2000 tokens" in budget.limit_text


def test_schema_sent_leaves_out_keywords_strict_servers_reject_but_pydantic_enforces() -> None:
    schema = answer_schema(JudgeQuestion.CORRECTNESS)
    sent = str(schema)
    assert "minLength" not in sent and "minItems" not in sent
    empty_trace = {"premises": ["1"], "trace": "", "conclusion": "c", "label": "correct"}
    assert (
        read_answer(JudgeQuestion.CORRECTNESS, empty_trace).outcome is JudgeSampleOutcome.MALFORMED
    )


def test_a_verbose_rationale_is_clipped_to_fit_the_bus() -> None:
    answer = {"premises": ["p" * 1000] * 50, "trace": "t" * 50000, "conclusion": "c" * 2000,
              "label": "incorrect"}  # fmt: skip
    sample = read_answer(JudgeQuestion.CORRECTNESS, answer)
    assert sample.label is INC
    assert len(sample.premises) == 12 and all(len(p) <= 400 for p in sample.premises)
    assert len(sample.trace) <= 3000 and sample.trace.endswith("[... cut]")
    assert len(sample.model_dump_json()) < 12000
