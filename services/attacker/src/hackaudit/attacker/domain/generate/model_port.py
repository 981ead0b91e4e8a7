"""What the LLM strategy needs of a model: one completion for one prompt, and a cache of them.

The ports module re-exports these with the attacker's other ports; they live here because the
strategy that uses them sits below the loop, and the loop's state is what the other ports carry.
"""

from __future__ import annotations

from typing import Protocol

from hackaudit.shared.ports import ModelPrompt, ModelReply


class Prompt(ModelPrompt):
    """One model request (8192 tokens at most, temperature 1.0 unless set); its content hash keys
    the completion cache."""

    @property
    def cache_key(self) -> str:
        return self.content_key


class Completion(ModelReply):
    cached: bool = False  # served from the cache: no tokens were spent on this call


class LLMPort(Protocol):
    async def complete(self, prompt: Prompt) -> Completion: ...


class CompletionCache(Protocol):
    def get(self, key: str) -> Completion | None: ...

    def put(self, key: str, completion: Completion) -> None: ...
