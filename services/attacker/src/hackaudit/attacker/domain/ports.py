"""The attacker's ports: the few things it needs from the world, each one small interface.

    SandboxPort        grade a patch: RunRequested in, RunCompleted out (`hackaudit.shared.ports`)
    LLMPort            one model completion for one prompt
    CompletionCache    completions by the content hash of their prompt
    RoundStateStore    an attack's round state, so a restarted attacker resumes it

Adapters implement them (`hackaudit.attacker.adapters`), each with an in-memory fake beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from hackaudit.shared.errors import LLMUnavailableError as LLMUnavailableError
from hackaudit.shared.ports import ModelPrompt, ModelReply
from hackaudit.shared.ports import SandboxPort as SandboxPort

if TYPE_CHECKING:
    from hackaudit.attacker.domain.orchestration import RoundState


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


class RoundStateStore(Protocol):
    def load(self, key: str) -> RoundState | None: ...

    def save(self, state: RoundState) -> None: ...
