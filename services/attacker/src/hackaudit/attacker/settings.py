"""The attacker's settings, read once at start-up from the environment (HACKAUDIT_* variables).

The API key is accepted as HACKAUDIT_ANTHROPIC_API_KEY or, as the SDK's own convention,
ANTHROPIC_API_KEY. Without a key the attacker runs the offline strategies only.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from hackaudit.attacker.domain.confirmation import ConfirmationConfig, SuiteScope
from hackaudit.attacker.domain.strategies.llm import LLMParams
from hackaudit.attacker.service_layer.attack import AttackConfig


class AttackerSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="HACKAUDIT_", extra="ignore", populate_by_name=True
    )

    anthropic_api_key: SecretStr | None = Field(
        default=None,
        # Ours first; the SDK's own variable as a fallback.
        validation_alias=AliasChoices("HACKAUDIT_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
    )
    anthropic_base_url: str | None = None
    llm_model: str = "claude-sonnet-4-5"
    llm_max_tokens: int = Field(default=8192, ge=256)
    llm_temperature: float = Field(default=1.0, ge=0.0, le=1.0)
    llm_max_retries: int = Field(default=4, ge=0, le=10)
    llm_timeout_s: float = Field(default=300.0, gt=0)
    llm_share: float = Field(default=0.5, ge=0.0, le=1.0)
    llm_cache_dir: Path | None = None  # default: <state_dir>/attacker/llm-cache
    state_dir: Path = Path(".hackaudit")
    attack_log_chars: int = Field(default=2000, ge=0)
    confirm_held_back: bool = True
    confirm_probes: bool = True
    confirm_suite: SuiteScope = SuiteScope.NEAR
    suite_timeout_s: float | None = Field(default=None, gt=0)
    # Attacks one worker runs at once (each mostly waits for its sandbox runs).
    concurrent_attacks: int = Field(default=4, ge=1)
    # How long to wait for one sandbox result (queueing included) before asking again.
    sandbox_wait_s: float = Field(default=1800.0, gt=0)

    @property
    def llm_enabled(self) -> bool:
        return self.anthropic_api_key is not None and bool(
            self.anthropic_api_key.get_secret_value()
        )

    @property
    def round_state_dir(self) -> Path:
        return self.state_dir / "attacker" / "rounds"

    @property
    def completion_cache_dir(self) -> Path:
        return self.llm_cache_dir or self.state_dir / "attacker" / "llm-cache"

    def attack_config(self) -> AttackConfig:
        return AttackConfig(
            llm=LLMParams(
                model=self.llm_model,
                max_tokens=self.llm_max_tokens,
                temperature=self.llm_temperature,
                max_log_chars=self.attack_log_chars,
            ),
            llm_share=self.llm_share,
            max_log_chars=self.attack_log_chars,
            confirmation=ConfirmationConfig(
                held_back=self.confirm_held_back,
                probes=self.confirm_probes,
                suite_scope=self.confirm_suite,
                suite_timeout_s=self.suite_timeout_s,
            ),
        )
