"""The model behind `LLMPort`: Anthropic's Messages API through the official SDK, plus a cache.

Rate limits (429) and server errors (5xx) are retried by the SDK itself with exponential
backoff, honouring `retry-after`, at most `max_retries` times; what still fails becomes an
`LLMUnavailableError`. The base URL is configurable so tests (and proxies) can stand in for the
real endpoint. The API key is held as a `SecretStr` and handed to the SDK only.
"""

from __future__ import annotations

import anthropic
from pydantic import SecretStr

from hackaudit.attacker.domain.ports import (
    Completion,
    CompletionCache,
    LLMPort,
    LLMUnavailableError,
    Prompt,
)
from hackaudit.shared.logs import get_logger

log = get_logger("hackaudit.attacker.llm")


class AnthropicLLM:
    def __init__(
        self,
        api_key: SecretStr,
        *,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 300.0,
    ) -> None:
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key.get_secret_value(),
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout_s,
        )

    async def complete(self, prompt: Prompt) -> Completion:
        try:
            message = await self._client.messages.create(
                model=prompt.model,
                max_tokens=prompt.max_tokens,
                system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}],
                # Sent only when it differs from the API's default of 1.0.
                extra_body={"temperature": prompt.temperature}
                if prompt.temperature != 1.0
                else None,
            )
        except anthropic.APIStatusError as exc:
            raise LLMUnavailableError(f"Messages API answered {exc.status_code}") from exc
        except anthropic.APIError as exc:
            raise LLMUnavailableError(f"Messages API failed: {type(exc).__name__}") from exc
        except ValueError as exc:  # a response body that is not the documented JSON
            raise LLMUnavailableError(f"unreadable Messages API response: {exc}") from exc
        text = "".join(
            getattr(block, "text", "") for block in message.content if block.type == "text"
        )
        completion = Completion(
            text=text,
            model=message.model,
            stop_reason=message.stop_reason,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
        )
        log.info(
            "model answered",
            model=completion.model,
            stop_reason=completion.stop_reason,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            chars=len(text),
        )
        return completion

    async def close(self) -> None:
        await self._client.close()


class CachingLLM:
    """An `LLMPort` that answers a prompt seen before from the cache, marked `cached`."""

    def __init__(self, inner: LLMPort, cache: CompletionCache) -> None:
        self._inner = inner
        self._cache = cache

    async def complete(self, prompt: Prompt) -> Completion:
        key = prompt.cache_key
        hit = self._cache.get(key)
        if hit is not None:
            return hit.model_copy(update={"cached": True})
        completion = await self._inner.complete(prompt)
        self._cache.put(key, completion)
        return completion
