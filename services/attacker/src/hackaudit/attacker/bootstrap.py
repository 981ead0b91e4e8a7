"""The composition root: real or fake adapters wired from settings, built once at start-up."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr

from hackaudit.attacker.adapters.llm import AnthropicLLM, CachingLLM
from hackaudit.attacker.adapters.openai_chat import OpenAIChatLLM
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.ports import Completion, LLMPort, RoundStateStore
from hackaudit.attacker.service_layer.attack import AttackConfig
from hackaudit.attacker.settings import AttackerSettings
from hackaudit.shared.content_cache import JsonDirCache
from hackaudit.shared.state_store import JsonFileStateStore


@dataclass(frozen=True)
class Attacker:
    """What `run_attack` needs besides the sandbox (which the bus wiring supplies)."""

    llm: LLMPort | None
    store: RoundStateStore
    config: AttackConfig


def model_client(settings: AttackerSettings) -> LLMPort:
    """The configured provider's SDK client (uncached); call only when `llm_enabled`."""
    if settings.llm_provider == "openai":
        return OpenAIChatLLM(
            # The SDK insists on a key; self-hosted servers that check none accept any.
            settings.llm_api_key or SecretStr("unused"),
            base_url=settings.llm_endpoint,
            max_retries=settings.llm_max_retries,
            timeout_s=settings.llm_timeout_s,
            output_limit_param=settings.llm_output_limit_param,
        )
    key = settings.llm_api_key
    assert key is not None, "llm_enabled checks the key"
    return AnthropicLLM(
        key,
        base_url=settings.llm_endpoint,
        max_retries=settings.llm_max_retries,
        timeout_s=settings.llm_timeout_s,
    )


def bootstrap(
    settings: AttackerSettings | None = None,
    *,
    llm: LLMPort | None = None,
    store: RoundStateStore | None = None,
) -> Attacker:
    """Adapters from settings; `llm` / `store` given explicitly (fakes in tests) win."""
    settings = settings or AttackerSettings()
    if llm is None and settings.llm_enabled:
        llm = CachingLLM(
            model_client(settings), JsonDirCache(Completion, settings.completion_cache_dir)
        )
    return Attacker(
        llm=llm,
        store=store or JsonFileStateStore(RoundState, settings.round_state_dir, indent=1),
        config=settings.attack_config(),
    )
