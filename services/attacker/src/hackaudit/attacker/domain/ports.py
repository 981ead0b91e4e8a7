"""The attacker's ports: the few things it needs from the world, each one small interface.

    SandboxPort        grade a patch: RunRequested in, RunCompleted out
    LLMPort            one model completion for one prompt
    CompletionCache    completions by the content hash of their prompt
    RoundStateStore    an attack's round state, so a restarted attacker resumes it

Adapters implement them (`hackaudit.attacker.adapters`), each with an in-memory fake beside it.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.shared.contracts import RunCompleted, RunRequested
from hackaudit.shared.errors import TransientError

if TYPE_CHECKING:
    from hackaudit.attacker.domain.orchestration import RoundState


class Prompt(BaseModel):
    """One model request; its content hash keys the completion cache."""

    model_config = ConfigDict(frozen=True)

    model: str
    system: str
    user: str
    max_tokens: int = Field(default=8192, ge=1)
    temperature: float = Field(default=1.0, ge=0.0, le=1.0)

    @property
    def cache_key(self) -> str:
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


class Completion(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    model: str = ""
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False  # served from the cache: no tokens were spent on this call


class LLMUnavailableError(TransientError):
    """The model could not be reached or answered with an error after the allowed retries."""


class LLMPort(Protocol):
    async def complete(self, prompt: Prompt) -> Completion: ...


class CompletionCache(Protocol):
    def get(self, key: str) -> Completion | None: ...

    def put(self, key: str, completion: Completion) -> None: ...


class SandboxPort(Protocol):
    async def run(self, request: RunRequested) -> RunCompleted: ...


class RoundStateStore(Protocol):
    def load(self, key: str) -> RoundState | None: ...

    def save(self, state: RoundState) -> None: ...
