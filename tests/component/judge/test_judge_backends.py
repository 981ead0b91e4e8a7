"""The judge's backends through the real SDKs against a local fake of each API: scripted labels,
malformed, truncated and refused answers, rate limits and timeouts each end in a recorded sample
outcome, and a whole request always ends in an answer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fake_judge_api import (
    Answer,
    Delay,
    Failure,
    FakeJudgeApi,
    Malformed,
    Raw,
    Refusal,
    Truncated,
)
from pydantic import SecretStr

from hackaudit.judge.adapters.anthropic_model import AnthropicJudgeModel
from hackaudit.judge.adapters.openai_model import OpenAIJudgeModel
from hackaudit.judge.bootstrap import bootstrap
from hackaudit.judge.domain.ports import JudgeModel
from hackaudit.judge.domain.prompts import JudgeParams, correctness_prompt
from hackaudit.judge.settings import JudgeSettings
from hackaudit.shared.content_cache import JsonDirCache
from hackaudit.shared.contracts import (
    Candidate,
    JudgeLabel,
    JudgeRequested,
    JudgeSampleOutcome,
    Task,
)

TASK = Task(
    instance_id="lib__lib-1",
    repo="x/lib",
    base_commit="abc123",
    patch="--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n",
    test_patch="--- a/t.py\n+++ b/t.py\n@@ -0,0 +1 @@\n+assert x == 2\n",
    FAIL_TO_PASS=["t.py::test_x"],
    problem_statement="x must be 2",
)
CANDIDATE = Candidate(instance_id=TASK.instance_id, diff="--- a/m.py\n+++ b/m.py\n-x=1\n+x=3\n")
BACKENDS = ["anthropic", "openai"]


def model(backend: str, url: str, *, retries: int = 0, timeout_s: float = 5.0) -> JudgeModel:
    key = SecretStr("test-key")
    if backend == "anthropic":
        return AnthropicJudgeModel(key, base_url=url, max_retries=retries, timeout_s=timeout_s)
    return OpenAIJudgeModel(key, base_url=f"{url}/v1", max_retries=retries, timeout_s=timeout_s)


def prompt(backend: str):  # type: ignore[no-untyped-def]
    return correctness_prompt(TASK, CANDIDATE, JudgeParams(backend=backend, model="judge-test"))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_structured_answer_is_read_with_its_rationale(
    backend: str, judge_api: tuple[str, FakeJudgeApi]
) -> None:
    url, api = judge_api
    api.script = [Answer("partial", input_tokens=1234, output_tokens=321)]
    judge = model(backend, url)
    sample = await judge.ask(prompt(backend))
    await judge.close()
    assert sample.outcome is JudgeSampleOutcome.ANSWERED
    assert sample.label is JudgeLabel.PARTIAL
    assert sample.premises[0].startswith("1. The issue")
    assert "Premise 1" in sample.trace
    assert (sample.input_tokens, sample.output_tokens) == (1234, 321)
    sent = api.requests[0].body
    assert sent["temperature"] == 0.7
    if backend == "anthropic":
        assert sent["tool_choice"] == {"type": "tool", "name": "record_judgement"}
        schema = sent["tools"][0]["input_schema"]
    else:
        assert sent["response_format"]["type"] == "json_schema"
        schema = sent["response_format"]["json_schema"]["schema"]
        assert sent["max_tokens"] == 4096
    assert schema["properties"]["label"]["enum"] == ["correct", "partial", "incorrect"]
    assert list(schema["properties"]) == ["premises", "trace", "conclusion", "label"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("step", "outcome", "detail"),
    [
        (Malformed({"label": "maybe"}), JudgeSampleOutcome.MALFORMED, "schema"),
        (Malformed({"premises": ["p"], "trace": "t", "conclusion": "c", "label": "sure"}),
         JudgeSampleOutcome.MALFORMED, "label"),
        (Truncated(), JudgeSampleOutcome.TRUNCATED, ""),
        (Refusal(), JudgeSampleOutcome.REFUSED, ""),
        (Failure(429, {"retry-after": "0"}), JudgeSampleOutcome.RATE_LIMITED, "429"),
        (Failure(503), JudgeSampleOutcome.UNAVAILABLE, "503"),
        (Raw(200, "this is not json"), JudgeSampleOutcome.UNAVAILABLE, ""),
    ],
)  # fmt: skip
async def test_every_bad_answer_is_a_recorded_outcome(
    backend: str,
    step: object,
    outcome: JudgeSampleOutcome,
    detail: str,
    judge_api: tuple[str, FakeJudgeApi],
) -> None:
    url, api = judge_api
    api.script = [step]  # type: ignore[list-item]
    judge = model(backend, url)
    sample = await judge.ask(prompt(backend))
    await judge.close()
    assert sample.outcome is outcome, sample
    assert sample.label is JudgeLabel.ABSTAIN
    assert detail in sample.detail


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_chat_answer_in_plain_text_is_malformed(
    backend: str, judge_api: tuple[str, FakeJudgeApi]
) -> None:
    url, api = judge_api
    api.script = [Malformed("I think it is correct.")]
    judge = model(backend, url)
    sample = await judge.ask(prompt(backend))
    await judge.close()
    assert sample.outcome is JudgeSampleOutcome.MALFORMED


@pytest.mark.parametrize("backend", BACKENDS)
async def test_rate_limits_are_retried_honouring_retry_after(
    backend: str, judge_api: tuple[str, FakeJudgeApi]
) -> None:
    url, api = judge_api
    api.script = [Failure(429, {"retry-after": "1"}), Failure(500), Answer("correct")]
    judge = model(backend, url, retries=2)
    started = time.monotonic()
    sample = await judge.ask(prompt(backend))
    waited = time.monotonic() - started
    await judge.close()
    assert sample.label is JudgeLabel.CORRECT
    assert len(api.requests) == 3
    assert waited >= 0.9  # the server asked for a 1 s pause before the second attempt


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_backend_that_does_not_answer_in_time_is_a_timeout(
    backend: str, judge_api: tuple[str, FakeJudgeApi]
) -> None:
    url, api = judge_api
    api.script = [Delay(3.0, Answer("correct"))]
    judge = model(backend, url, timeout_s=0.5)
    started = time.monotonic()
    sample = await judge.ask(prompt(backend))
    await judge.close()
    assert sample.outcome is JudgeSampleOutcome.TIMEOUT
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_whole_request_votes_and_a_rerun_costs_nothing(
    backend: str, judge_api: tuple[str, FakeJudgeApi], tmp_path: Path
) -> None:
    url, api = judge_api
    gold = Candidate.gold(TASK)
    answers = {TASK.patch: ["correct", "correct", "partial"]}

    def respond(body: dict[str, object]) -> Answer:
        text = str(body["messages"])
        mine = [v for k, v in answers.items() if k.strip().splitlines()[-1] in text.split(
            "<patch_under_judgement>")[-1]]  # fmt: skip
        return Answer(mine[0].pop(0) if mine and mine[0] else "incorrect")

    api.respond = respond
    settings = JudgeSettings(
        provider=backend,  # type: ignore[arg-type]
        base_url=url if backend == "anthropic" else f"{url}/v1",
        anthropic_api_key=SecretStr("k"),
        openai_api_key=SecretStr("k"),
        max_retries=0,
        cache_dir=tmp_path / "cache",
        price_input_per_mtok=3.0,
        price_output_per_mtok=15.0,
    )
    judge = bootstrap(settings, tmp_path)
    request = JudgeRequested(correlation_id="c1", task=TASK, candidates=(gold, CANDIDATE))
    done = await judge.handle(request)
    by_id = {v.candidate_id: v for v in done.verdicts}
    assert by_id[gold.candidate_id].label is JudgeLabel.CORRECT
    assert by_id[gold.candidate_id].samples.count(JudgeLabel.CORRECT) == 2
    assert by_id[CANDIDATE.candidate_id].label is JudgeLabel.INCORRECT
    assert all(len(v.details) == 3 and v.details[0].trace for v in done.verdicts)
    assert done.usage is not None and done.usage.calls == 6 and done.usage.cache_hits == 0
    assert done.usage.cost_usd == pytest.approx(6 * (1500 * 3.0 + 300 * 15.0) / 1e6)
    assert isinstance(judge.cache, JsonDirCache)

    again = await bootstrap(settings, tmp_path).handle(request)
    assert len(api.requests) == 6  # every sample came from the cache
    assert again.usage is not None and again.usage.calls == 0 and again.usage.cache_hits == 6
    assert [v.label for v in again.verdicts] == [v.label for v in done.verdicts]
    assert again.idempotency_key == done.idempotency_key  # the same answer to the same request
    if judge.model is not None:
        await judge.model.close()
