"""The repairer's ports: the few things it needs from the world, each one small interface.

    SandboxPort        grade a patch: RunRequested in, RunCompleted out
    LLMPort            one model completion for one prompt (the LLM augmenter)
    RepairStateStore   a repair's journal, so a restarted repairer resumes it

Adapters implement them (`hackaudit.repairer.adapters`), each with an in-memory fake beside it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.shared.contracts import RepairCompleted, RunCompleted, RunRequested
from hackaudit.shared.errors import TransientError


class Prompt(BaseModel):
    """One model request; its content hash keys the journal of completions."""

    model_config = ConfigDict(frozen=True)

    model: str
    system: str
    user: str
    max_tokens: int = Field(default=4096, ge=1)
    temperature: float = Field(default=0.7, ge=0.0, le=1.0)

    @property
    def key(self) -> str:
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


class Completion(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    model: str = ""
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


class LLMUnavailableError(TransientError):
    """The model could not be reached or answered with an error after the allowed retries."""


class LLMPort(Protocol):
    async def complete(self, prompt: Prompt) -> Completion: ...


class SandboxPort(Protocol):
    async def run(self, request: RunRequested) -> RunCompleted: ...


class RepairState(BaseModel):
    """What a repair has done so far: every finished run and model answer, by request.

    The loop is deterministic given these, so a redelivered request replays it from the
    journal and repeats no finished run and no model call."""

    model_config = ConfigDict(frozen=True)

    key: str
    runs: dict[str, RunCompleted] = Field(default_factory=dict)
    completions: dict[str, Completion] = Field(default_factory=dict)
    done: RepairCompleted | None = None


class RepairStateStore(Protocol):
    def load(self, key: str) -> RepairState | None: ...

    def save(self, state: RepairState) -> None: ...
