"""The model behind `LLMPort` on any OpenAI-compatible endpoint: Chat Completions via the SDK.

OpenAI itself, and the many servers that speak its Chat Completions API (vLLM, llama.cpp's
server, Ollama, LiteLLM and other gateways), are reached through the official `openai` SDK with
a configurable base URL. It behaves like the Anthropic adapter: rate limits (429) and server
errors (5xx) are retried by the SDK with exponential backoff, honouring `retry-after`, at most
`max_retries` times, and what still fails is an `LLMUnavailableError`. A reply that carries no
text (no choices, a null content) is an empty completion, which the strategy turns into an
INVALID candidate; a body that is not JSON at all is a fault. Servers that report no usage are
counted as zero tokens. The API key is held as a `SecretStr` and handed to the SDK only.
"""

from __future__ import annotations

from typing import Literal

import openai
from openai.types.chat import ChatCompletion
from pydantic import SecretStr

from hackaudit.attacker.domain.ports import Completion, LLMUnavailableError, Prompt
from hackaudit.shared.logs import get_logger

log = get_logger("hackaudit.attacker.llm")

# OpenAI's newer models take `max_completion_tokens`; most compatible servers take `max_tokens`.
OutputLimitParam = Literal["max_tokens", "max_completion_tokens"]


class OpenAIChatLLM:
    def __init__(
        self,
        api_key: SecretStr,
        *,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 300.0,
        output_limit_param: OutputLimitParam = "max_tokens",
    ) -> None:
        self._client = openai.AsyncOpenAI(
            api_key=api_key.get_secret_value(),
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout_s,
        )
        self._output_limit_param = output_limit_param

    async def complete(self, prompt: Prompt) -> Completion:
        extra: dict[str, object] = {self._output_limit_param: prompt.max_tokens}
        if prompt.temperature != 1.0:  # sent only when it differs from the API's default
            extra["temperature"] = prompt.temperature
        try:
            reply = await self._client.chat.completions.create(
                model=prompt.model,
                messages=[
                    {"role": "system", "content": prompt.system},
                    {"role": "user", "content": prompt.user},
                ],
                extra_body=extra,
            )
        except openai.APIStatusError as exc:
            raise LLMUnavailableError(f"Chat Completions API answered {exc.status_code}") from exc
        except openai.APIError as exc:
            raise LLMUnavailableError(f"Chat Completions API failed: {type(exc).__name__}") from exc
        except ValueError as exc:  # a response body that is not JSON
            raise LLMUnavailableError(f"unreadable Chat Completions response: {exc}") from exc
        if not isinstance(reply, ChatCompletion):  # the SDK hands back a body it cannot model
            raise LLMUnavailableError(
                f"unreadable Chat Completions response: {type(reply).__name__}"
            )
        completion = _completion(reply, prompt.model)
        log.info(
            "model answered",
            model=completion.model,
            stop_reason=completion.stop_reason,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            chars=len(completion.text),
            usage_reported=reply.usage is not None,
        )
        return completion

    async def close(self) -> None:
        await self._client.close()


def _completion(reply: ChatCompletion, requested_model: str) -> Completion:
    choice = reply.choices[0] if reply.choices else None
    text = (choice.message.content or "") if choice is not None else ""
    usage = reply.usage
    return Completion(
        text=text,
        model=reply.model or requested_model,
        stop_reason=(choice.finish_reason if choice is not None else None) or "no_choice",
        input_tokens=usage.prompt_tokens if usage else 0,
        output_tokens=usage.completion_tokens if usage else 0,
    )
