"""Ports that more than one service needs, declared once, with the values they carry.

    SandboxPort    grade a patch: RunRequested in, RunCompleted out (attacker, repairer)
    ModelPrompt    one text request to a model; its content hash keys caches and journals
    ModelReply     the model's text and the tokens it cost

Each service keeps its own model port (`LLMPort`) over its own subclasses of the two values, with
its own defaults; the SDK adapters in `hackaudit.shared.llm_client` serve all of them. This module
imports no SDK, so domain code may import it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.shared.contracts import RunCompleted, RunRequested


class SandboxPort(Protocol):
    async def run(self, request: RunRequested) -> RunCompleted: ...


class ModelPrompt(BaseModel):
    """One model request: a system prompt and one user turn. A service's subclass sets defaults."""

    model_config = ConfigDict(frozen=True)

    model: str
    system: str
    user: str
    max_tokens: int = Field(default=8192, ge=1)
    temperature: float = Field(default=1.0, ge=0.0, le=1.0)

    @property
    def content_key(self) -> str:
        """sha256 of the request's canonical JSON: equal requests, equal keys."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


class ModelReply(BaseModel):
    """What a model answered, as the API reported it (0 tokens where it reported no usage)."""

    model_config = ConfigDict(frozen=True)

    text: str
    model: str = ""
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
