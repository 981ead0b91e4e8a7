"""The judge on Anthropic's Messages API: the answer as a forced tool call, through the SDK.

The tool's input schema is the answer schema (`domain.answers`), and `tool_choice` names the
tool, so the reply is a structured object, validated with pydantic. Rate limits (429) and
server errors (5xx) are retried by the SDK with exponential backoff, honouring `retry-after`,
at most `max_retries` times. Every way a call can end is a recorded sample: the answer, or
RATE_LIMITED / TIMEOUT / UNAVAILABLE / REFUSED / TRUNCATED / MALFORMED with what was seen.
The API key is held as a `SecretStr` and handed to the SDK only.
"""

from __future__ import annotations

from typing import cast

import anthropic
from anthropic.types.tool_param import InputSchema, ToolParam

from hackaudit.judge.domain.answers import TOOL_NAME, answer_schema, failed, read_answer
from hackaudit.judge.domain.prompts import JudgePrompt
from hackaudit.shared.contracts import JudgeSample, JudgeSampleOutcome
from hackaudit.shared.llm_client import AnthropicEndpoint, call_fault, message_usage


class AnthropicJudgeModel(AnthropicEndpoint):
    """`AnthropicJudgeModel(api_key, base_url=..., max_retries=4, timeout_s=120.0)`; the client
    is the shared one (`hackaudit.shared.llm_client`)."""

    default_timeout_s = 120.0

    async def ask(self, prompt: JudgePrompt) -> JudgeSample:
        tool: ToolParam = {
            "name": TOOL_NAME,
            "description": "Record the judgement: premises, trace, conclusion, then the label.",
            "input_schema": cast(InputSchema, answer_schema(prompt.question)),
        }
        try:
            message = await self.client.messages.create(
                model=prompt.params.model,
                max_tokens=prompt.params.max_tokens,
                system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}],
                tools=[tool],
                tool_choice={"type": "tool", "name": TOOL_NAME},
                # Not a typed parameter of this SDK version; the API still takes it.
                extra_body={"temperature": prompt.params.temperature},
            )
        except (anthropic.APIError, ValueError) as exc:  # ValueError: a body that is not JSON
            kind, detail = call_fault(exc, "Messages API")
            return failed(JudgeSampleOutcome(kind), detail)
        tokens = message_usage(message)
        stop = message.stop_reason
        if stop == "refusal":
            return failed(JudgeSampleOutcome.REFUSED, "stop_reason refusal", **tokens)
        if stop == "max_tokens":
            return failed(JudgeSampleOutcome.TRUNCATED, "stop_reason max_tokens", **tokens)
        calls = [b for b in message.content if b.type == "tool_use" and b.name == TOOL_NAME]
        if not calls:
            text = "".join(getattr(b, "text", "") for b in message.content)
            return failed(
                JudgeSampleOutcome.REFUSED,
                f"no {TOOL_NAME} call (stop_reason {stop}, {len(text)} chars of text)",
                **tokens,
            )
        return read_answer(prompt.question, calls[0].input, **tokens)
