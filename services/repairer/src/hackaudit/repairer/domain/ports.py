"""The repairer's ports: the few things it needs from the world, each one small interface.

    SandboxPort        grade a patch: RunRequested in, RunCompleted out (`hackaudit.shared.ports`)
    LLMPort            one model completion for one prompt (the LLM augmenter)
    JudgePort          the judge's answer to one question (None: no answer in time)
    RepairStateStore   a repair's journal, so a restarted repairer resumes it

Adapters implement them, each with an in-memory fake beside it: the model and judge clients in
`hackaudit.repairer.adapters`; the store is the shared JSON-file one
(`hackaudit.shared.state_store`).
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.shared.contracts import (
    JudgeCompleted,
    JudgeRequested,
    RepairCompleted,
    RunCompleted,
)
from hackaudit.shared.errors import LLMUnavailableError as LLMUnavailableError
from hackaudit.shared.ports import ModelPrompt, ModelReply
from hackaudit.shared.ports import SandboxPort as SandboxPort


class Prompt(ModelPrompt):
    """One model request; its content hash keys the journal of completions."""

    max_tokens: int = Field(default=4096, ge=1)
    temperature: float = Field(default=0.7, ge=0.0, le=1.0)

    @property
    def key(self) -> str:
        return self.content_key


class Completion(ModelReply):
    """A model's answer, journalled under its prompt's key."""


class LLMPort(Protocol):
    async def complete(self, prompt: Prompt) -> Completion: ...


class JudgePort(Protocol):
    async def judge(self, request: JudgeRequested) -> JudgeCompleted | None: ...


class RepairState(BaseModel):
    """What a repair has done so far: every finished run and model answer, by request.

    The loop is deterministic given these, so a redelivered request replays it from the
    journal and repeats no finished run and no model call."""

    model_config = ConfigDict(frozen=True)

    key: str
    runs: dict[str, RunCompleted] = Field(default_factory=dict)
    completions: dict[str, Completion] = Field(default_factory=dict)
    judgements: dict[str, JudgeCompleted] = Field(default_factory=dict)
    done: RepairCompleted | None = None


class RepairStateStore(Protocol):
    def load(self, key: str) -> RepairState | None: ...

    def save(self, state: RepairState) -> None: ...
