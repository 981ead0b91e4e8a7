"""The composition root: real or fake adapters wired from settings, built once at start-up."""

from __future__ import annotations

from dataclasses import dataclass

from hackaudit.attacker.adapters.completion_cache import JsonDirCompletionCache
from hackaudit.attacker.adapters.llm import AnthropicLLM, CachingLLM
from hackaudit.attacker.adapters.round_state_store import JsonFileRoundStateStore
from hackaudit.attacker.domain.ports import LLMPort, RoundStateStore
from hackaudit.attacker.service_layer.attack import AttackConfig
from hackaudit.attacker.settings import AttackerSettings


@dataclass(frozen=True)
class Attacker:
    """What `run_attack` needs besides the sandbox (which the bus wiring supplies)."""

    llm: LLMPort | None
    store: RoundStateStore
    config: AttackConfig


def bootstrap(
    settings: AttackerSettings | None = None,
    *,
    llm: LLMPort | None = None,
    store: RoundStateStore | None = None,
) -> Attacker:
    """Adapters from settings; `llm` / `store` given explicitly (fakes in tests) win."""
    settings = settings or AttackerSettings()
    if llm is None and settings.llm_enabled:
        assert settings.anthropic_api_key is not None
        real = AnthropicLLM(
            settings.anthropic_api_key,
            base_url=settings.anthropic_base_url,
            max_retries=settings.llm_max_retries,
            timeout_s=settings.llm_timeout_s,
        )
        llm = CachingLLM(real, JsonDirCompletionCache(settings.completion_cache_dir))
    return Attacker(
        llm=llm,
        store=store or JsonFileRoundStateStore(settings.round_state_dir),
        config=settings.attack_config(),
    )
