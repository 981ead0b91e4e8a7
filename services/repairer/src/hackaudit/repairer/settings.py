"""The repairer's settings, read once at start-up (HACKAUDIT_REPAIRER_* and the shared key)."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from hackaudit.repairer.service_layer.augmenters import LLMParams
from hackaudit.repairer.service_layer.repair import RepairConfig
from hackaudit.shared.settings import FileSettings


class RepairerSettings(FileSettings):
    config_section = "repairer"
    model_config = SettingsConfigDict(
        env_prefix="HACKAUDIT_REPAIRER_", extra="ignore", populate_by_name=True
    )

    anthropic_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "HACKAUDIT_REPAIRER_ANTHROPIC_API_KEY",
            "HACKAUDIT_ANTHROPIC_API_KEY",
            "ANTHROPIC_API_KEY",
        ),
    )
    anthropic_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "HACKAUDIT_REPAIRER_ANTHROPIC_BASE_URL", "HACKAUDIT_ANTHROPIC_BASE_URL"
        ),
    )
    llm: bool = True  # HACKAUDIT_REPAIRER_LLM=false: offline augmenter only, even with a key
    llm_model: str = "claude-sonnet-4-5"
    llm_max_tokens: int = Field(default=4096, ge=256)
    llm_temperature: float = Field(default=0.4, ge=0.0, le=1.0)
    llm_temperature_step: float = Field(default=0.2, ge=0.0, le=1.0)
    llm_attempts_per_exploit: int = Field(default=3, ge=1)
    llm_max_retries: int = Field(default=4, ge=0, le=10)
    llm_timeout_s: float = Field(default=300.0, gt=0)
    offline: bool = True
    neighbours: bool = True  # offline tests also pin gold beside the exact input
    run_timeout_s: float | None = Field(default=None, gt=0)
    capture_repeats: int = Field(default=3, ge=1)
    state_dir: Path = Path(".hackaudit")
    concurrent_repairs: int = Field(default=2, ge=1)
    sandbox_wait_s: float = Field(default=1800.0, gt=0)
    judge_wait_s: float = Field(default=900.0, gt=0)  # then the test has no judge verdict

    @property
    def llm_enabled(self) -> bool:
        return self.llm and self.anthropic_api_key is not None

    @property
    def journal_dir(self) -> Path:
        return self.state_dir / "repairer" / "journals"

    def repair_config(self) -> RepairConfig:
        return RepairConfig(
            run_timeout_s=self.run_timeout_s,
            capture_repeats=self.capture_repeats,
            offline=self.offline,
            neighbours=self.neighbours,
            llm=LLMParams(
                model=self.llm_model,
                max_tokens=self.llm_max_tokens,
                temperature=self.llm_temperature,
                temperature_step=self.llm_temperature_step,
                attempts_per_exploit=self.llm_attempts_per_exploit,
            ),
        )
