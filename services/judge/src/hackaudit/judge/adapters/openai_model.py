"""The judge on any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, llama.cpp's
server, Ollama, gateways), through the official `openai` SDK with a configurable base URL.

The answer is asked for as JSON: `response_format` with the answer's JSON schema (strict), or,
for servers without schema support, plain JSON mode with the schema spelled out in the prompt.
pydantic validates the reply. Rate limits and 5xx are retried by the SDK honouring
`retry-after`; every other ending is a recorded sample (REFUSED for a `refusal` or a content
filter, TRUNCATED for `finish_reason` length, MALFORMED for text that is not the schema).
"""

from __future__ import annotations

import json
from typing import Any, Literal, Unpack

import openai
from openai.types.chat import ChatCompletion
from pydantic import SecretStr

from hackaudit.judge.domain.answers import TOOL_NAME, answer_schema, failed, read_answer
from hackaudit.judge.domain.prompts import JudgePrompt
from hackaudit.shared.contracts import JudgeSample, JudgeSampleOutcome
from hackaudit.shared.llm_client import (
    Connection,
    OpenAIEndpoint,
    OutputLimitParam,
    call_fault,
    chat_usage,
)

JsonMode = Literal["json_schema", "json_object"]


class OpenAIJudgeModel(OpenAIEndpoint):
    """`OpenAIJudgeModel(api_key, base_url=..., max_retries=4, timeout_s=120.0,
    json_mode="json_schema", output_limit_param="max_tokens")`; the client is the shared one
    (`hackaudit.shared.llm_client`)."""

    default_timeout_s = 120.0

    def __init__(
        self,
        api_key: SecretStr,
        *,
        json_mode: JsonMode = "json_schema",
        output_limit_param: OutputLimitParam = "max_tokens",
        **connection: Unpack[Connection],
    ) -> None:
        super().__init__(api_key, output_limit_param=output_limit_param, **connection)
        self._json_mode = json_mode

    def _request(self, prompt: JudgePrompt) -> dict[str, Any]:
        schema = answer_schema(prompt.question)
        system = prompt.system
        if self._json_mode == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": TOOL_NAME, "schema": schema, "strict": True},
            }
        else:
            response_format = {"type": "json_object"}
            system += "\nAnswer with one JSON object matching this schema:\n" + json.dumps(schema)
        return {
            "model": prompt.params.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt.user},
            ],
            "temperature": prompt.params.temperature,
            "response_format": response_format,
            "extra_body": {self.output_limit_param: prompt.params.max_tokens},
        }

    async def ask(self, prompt: JudgePrompt) -> JudgeSample:
        try:
            reply = await self.client.chat.completions.create(**self._request(prompt))
        except (openai.APIError, ValueError) as exc:  # ValueError: a body that is not JSON
            kind, detail = call_fault(exc, "Chat Completions API")
            return failed(JudgeSampleOutcome(kind), detail)
        if not isinstance(reply, ChatCompletion):
            return failed(
                JudgeSampleOutcome.UNAVAILABLE, f"unreadable response: {type(reply).__name__}"
            )
        tokens = chat_usage(reply)
        if not reply.choices:
            return failed(JudgeSampleOutcome.MALFORMED, "reply without choices", **tokens)
        choice = reply.choices[0]
        if choice.message.refusal:
            return failed(JudgeSampleOutcome.REFUSED, "message.refusal set", **tokens)
        if choice.finish_reason == "content_filter":
            return failed(JudgeSampleOutcome.REFUSED, "finish_reason content_filter", **tokens)
        if choice.finish_reason == "length":
            return failed(JudgeSampleOutcome.TRUNCATED, "finish_reason length", **tokens)
        text = choice.message.content or ""
        if not text.strip():
            return failed(JudgeSampleOutcome.MALFORMED, "empty answer", **tokens)
        return read_answer(prompt.question, text, **tokens)
