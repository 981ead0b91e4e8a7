"""The shared model-client layer: the SDK clients it builds, how it names a failed call, the tokens
it reads, and the content keys the services' caches and journals are filed under."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest
from openai.types.chat import ChatCompletion
from pydantic import SecretStr

from hackaudit.attacker.adapters.llm import AnthropicLLM
from hackaudit.attacker.adapters.openai_chat import OpenAIChatLLM
from hackaudit.attacker.domain.ports import Prompt as AttackerPrompt
from hackaudit.judge.adapters.anthropic_model import AnthropicJudgeModel
from hackaudit.judge.adapters.openai_model import OpenAIJudgeModel
from hackaudit.repairer.domain.ports import Prompt as RepairerPrompt
from hackaudit.shared.llm_client import (
    AnthropicEndpoint,
    FaultKind,
    OpenAIEndpoint,
    call_fault,
    chat_usage,
)

KEY = SecretStr("sk-test")
REQUEST = httpx2.Request("POST", "http://model.test/v1/messages")


def _response(status: int) -> httpx2.Response:
    return httpx2.Response(status, request=REQUEST)


async def test_clients_take_the_connection_settings_and_each_adapters_default_timeout() -> None:
    adapters: list[tuple[AnthropicEndpoint | OpenAIEndpoint, float, int]] = [
        (AnthropicLLM(KEY, base_url="http://a.test", max_retries=1, timeout_s=7), 7.0, 1),
        (OpenAIChatLLM(KEY, base_url="http://a.test/v1/", max_retries=0), 300.0, 0),
        (AnthropicJudgeModel(KEY, base_url="http://a.test"), 120.0, 4),
        (OpenAIJudgeModel(KEY, base_url="http://a.test/v1/", json_mode="json_object"), 120.0, 4),
    ]
    for adapter, timeout_s, retries in adapters:
        client = adapter.client
        assert (client.timeout, client.max_retries) == (timeout_s, retries), type(adapter)
        assert str(client.base_url).startswith("http://a.test"), type(adapter)
        assert client.api_key == "sk-test"
        await adapter.close()
    judge = adapters[3][0]
    assert isinstance(judge, OpenAIJudgeModel) and judge.output_limit_param == "max_tokens"


@pytest.mark.parametrize(
    ("exc", "kind", "detail"),
    [
        (anthropic.RateLimitError("slow", response=_response(429), body=None),
         "rate_limited", "API answered 429 after the retries"),
        (openai.RateLimitError("slow", response=_response(429), body=None),
         "rate_limited", "API answered 429 after the retries"),
        (anthropic.APITimeoutError(request=REQUEST), "timeout", "API timed out"),
        (openai.APITimeoutError(request=REQUEST), "timeout", "API timed out"),
        (anthropic.InternalServerError("down", response=_response(503), body=None),
         "unavailable", "API answered 503 after the retries"),
        (openai.AuthenticationError("who", response=_response(401), body=None),
         "unavailable", "API answered 401 after the retries"),
        (anthropic.APIConnectionError(request=REQUEST), "unavailable", "API: APIConnectionError"),
        (ValueError("x" * 1000), "unavailable", "unreadable response: xxx"),
    ],
)  # fmt: skip
def test_a_failed_call_is_named_by_kind_and_detail(
    exc: anthropic.APIError | openai.APIError | ValueError, kind: FaultKind, detail: str
) -> None:
    got_kind, got_detail = call_fault(exc, "Some API")
    assert got_kind == kind
    assert detail in got_detail
    assert len(got_detail) <= 300


def test_a_server_that_reports_no_usage_costs_zero_tokens() -> None:
    reply = ChatCompletion.model_validate(
        {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    )
    assert chat_usage(reply) == {"input_tokens": 0, "output_tokens": 0}
    usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    counted = ChatCompletion.model_validate(reply.model_dump() | {"usage": usage})
    assert chat_usage(counted) == {
        "input_tokens": 3,
        "output_tokens": 5,
    }


def test_prompt_keys_are_the_ones_existing_caches_and_journals_are_filed_under() -> None:
    # sha256 of {"max_tokens","model","system","temperature","user"} as canonical JSON, with each
    # service's defaults (attacker 8192 / 1.0, repairer 4096 / 0.7): a changed key loses the cache.
    attacker = AttackerPrompt(model="m", system="s", user="u")
    repairer = RepairerPrompt(model="m", system="s", user="u")
    assert attacker.cache_key == "7df404644aab89078900921c6b2813af47d9371e52bda03c3da05afc12e0ca06"
    assert repairer.key == "3953f9836208bf55fd9ecaa830b2297bcf727eec2fb89bea6bec2607d4e4beb8"
    assert attacker.model_copy(update={"temperature": 0.5}).cache_key != attacker.cache_key
