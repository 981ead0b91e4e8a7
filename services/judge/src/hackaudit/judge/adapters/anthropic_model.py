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
from pydantic import SecretStr

from hackaudit.judge.domain.answers import TOOL_NAME, answer_schema, failed, read_answer
from hackaudit.judge.domain.prompts import JudgePrompt
from hackaudit.shared.contracts import JudgeSample, JudgeSampleOutcome


class AnthropicJudgeModel:
    def __init__(
        self,
        api_key: SecretStr,
        *,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 120.0,
    ) -> None:
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key.get_secret_value(),
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout_s,
        )

    async def ask(self, prompt: JudgePrompt) -> JudgeSample:
        tool: ToolParam = {
            "name": TOOL_NAME,
            "description": "Record the judgement: premises, trace, conclusion, then the label.",
            "input_schema": cast(InputSchema, answer_schema(prompt.question)),
        }
        try:
            message = await self._client.messages.create(
                model=prompt.params.model,
                max_tokens=prompt.params.max_tokens,
                system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}],
                tools=[tool],
                tool_choice={"type": "tool", "name": TOOL_NAME},
                # Not a typed parameter of this SDK version; the API still takes it.
                extra_body={"temperature": prompt.params.temperature},
            )
        except anthropic.RateLimitError as exc:
            return failed(JudgeSampleOutcome.RATE_LIMITED, _status(exc))
        except anthropic.APITimeoutError:
            return failed(JudgeSampleOutcome.TIMEOUT, "Messages API timed out")
        except anthropic.APIStatusError as exc:
            return failed(JudgeSampleOutcome.UNAVAILABLE, _status(exc))
        except anthropic.APIError as exc:
            return failed(JudgeSampleOutcome.UNAVAILABLE, f"Messages API: {type(exc).__name__}")
        except ValueError as exc:  # a body that is not the documented JSON
            return failed(JudgeSampleOutcome.UNAVAILABLE, f"unreadable response: {exc}"[:300])
        tokens = {
            "input_tokens": message.usage.input_tokens,
            "output_tokens": message.usage.output_tokens,
        }
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

    async def close(self) -> None:
        await self._client.close()


def _status(exc: anthropic.APIStatusError) -> str:
    return f"Messages API answered {exc.status_code} after the retries"
