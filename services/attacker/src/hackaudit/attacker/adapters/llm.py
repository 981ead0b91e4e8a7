"""The model behind `LLMPort`: Anthropic's Messages API through the shared SDK adapter, plus a
cache.

`hackaudit.shared.llm_client` builds the client and retries 429 / 5xx honouring `retry-after`;
what still fails is an `LLMUnavailableError`. Here the answer becomes the attacker's `Completion`.
"""

from __future__ import annotations

from hackaudit.attacker.domain.ports import Completion, CompletionCache, LLMPort, Prompt
from hackaudit.shared.llm_client import AnthropicText


class AnthropicLLM(AnthropicText[Completion]):
    """`AnthropicLLM(api_key, base_url=..., max_retries=4, timeout_s=300.0)`."""

    reply_type = Completion
    logger_name = "hackaudit.attacker.llm"


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
