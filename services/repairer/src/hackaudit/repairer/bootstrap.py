"""The composition root: real or fake adapters wired from settings, built once at start-up."""

from __future__ import annotations

from dataclasses import dataclass

from hackaudit.repairer.adapters.llm import AnthropicLLM
from hackaudit.repairer.domain.ports import LLMPort, RepairState, RepairStateStore
from hackaudit.repairer.service_layer.repair import RepairConfig
from hackaudit.repairer.settings import RepairerSettings
from hackaudit.shared.state_store import JsonFileStateStore


@dataclass(frozen=True)
class Repairer:
    """What `run_repair` needs besides the sandbox (which the bus wiring supplies)."""

    llm: LLMPort | None
    store: RepairStateStore
    config: RepairConfig


def bootstrap(
    settings: RepairerSettings | None = None,
    *,
    llm: LLMPort | None = None,
    store: RepairStateStore | None = None,
) -> Repairer:
    """Adapters from settings; `llm` / `store` given explicitly (fakes in tests) win."""
    settings = settings or RepairerSettings()
    if llm is None and settings.llm_enabled:
        assert settings.anthropic_api_key is not None, "llm_enabled checks the key"
        llm = AnthropicLLM(
            settings.anthropic_api_key,
            base_url=settings.anthropic_base_url,
            max_retries=settings.llm_max_retries,
            timeout_s=settings.llm_timeout_s,
        )
    return Repairer(
        llm=llm,
        store=store or JsonFileStateStore(RepairState, settings.journal_dir),
        config=settings.repair_config(),
    )
