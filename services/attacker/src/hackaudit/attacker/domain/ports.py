"""The attacker's ports: the few things it needs from the world, each one small interface.

    SandboxPort        grade a patch: RunRequested in, RunCompleted out (`hackaudit.shared.ports`)
    LLMPort            one model completion for one prompt (`generate.model_port`)
    CompletionCache    completions by the content hash of their prompt (`generate.model_port`)
    RoundStateStore    an attack's round state, so a restarted attacker resumes it

Adapters implement them, each with an in-memory fake beside it: the model clients in
`hackaudit.attacker.adapters`; the store and the cache are the shared JSON-file ones
(`hackaudit.shared.state_store`, `hackaudit.shared.content_cache`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from hackaudit.attacker.domain.generate.model_port import Completion as Completion
from hackaudit.attacker.domain.generate.model_port import CompletionCache as CompletionCache
from hackaudit.attacker.domain.generate.model_port import LLMPort as LLMPort
from hackaudit.attacker.domain.generate.model_port import Prompt as Prompt
from hackaudit.shared.errors import LLMUnavailableError as LLMUnavailableError
from hackaudit.shared.ports import SandboxPort as SandboxPort

if TYPE_CHECKING:
    from hackaudit.attacker.domain.orchestration import RoundState


class RoundStateStore(Protocol):
    def load(self, key: str) -> RoundState | None: ...

    def save(self, state: RoundState) -> None: ...
