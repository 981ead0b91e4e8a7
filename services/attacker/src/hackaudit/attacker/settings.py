"""The attacker's settings, read once at start-up from the environment (HACKAUDIT_* variables).

The model is Anthropic's (HACKAUDIT_LLM_PROVIDER=anthropic, the default) or any OpenAI-compatible
Chat Completions endpoint (HACKAUDIT_LLM_PROVIDER=openai, with HACKAUDIT_LLM_BASE_URL for servers
other than OpenAI's). Keys are accepted as HACKAUDIT_ANTHROPIC_API_KEY / HACKAUDIT_OPENAI_API_KEY
or, as the SDKs' own convention, ANTHROPIC_API_KEY / OPENAI_API_KEY. Without a key (or, for
`openai`, without a key and a base URL: local servers often need none) the attacker runs the
offline strategies only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from hackaudit.attacker.domain.confirm.confirmation import ConfirmationConfig, SuiteScope
from hackaudit.attacker.domain.confirm.selection import MAX_NODE_IDS
from hackaudit.attacker.domain.generate.strategies.llm import LLMParams
from hackaudit.attacker.domain.pool.reference import DEFAULT_SAMPLE_SIZE
from hackaudit.attacker.service_layer.attack import AttackConfig
from hackaudit.shared.settings import FileSettings

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1"}


class AttackerSettings(FileSettings):
    config_section = "attacker"
    model_config = SettingsConfigDict(
        env_prefix="HACKAUDIT_", extra="ignore", populate_by_name=True
    )

    anthropic_api_key: SecretStr | None = Field(
        default=None,
        # Ours first; the SDK's own variable as a fallback.
        validation_alias=AliasChoices("HACKAUDIT_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
    )
    anthropic_base_url: str | None = None
    llm_provider: Literal["anthropic", "openai"] = "anthropic"
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("HACKAUDIT_OPENAI_API_KEY", "OPENAI_API_KEY"),
    )
    llm_base_url: str | None = None  # the chosen provider's endpoint; default: its public API
    # OpenAI's newer models take max_completion_tokens; most compatible servers max_tokens.
    llm_output_limit_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    llm_model: str | None = None  # default: claude-sonnet-4-5 (anthropic), gpt-4.1 (openai)
    llm_prompt_budget_tokens: int = Field(default=24000, ge=1000)
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
    # The wider suite near the change runs only the tests that execute a candidate's change on
    # gold (by the repository coverage map); false: whole directories, as before the map.
    confirm_suite_selection: bool = True
    # Past this many selected tests (a change on a line most of the suite runs), only this many,
    # the closest to the change, run for a candidate; the evidence counts the others.
    confirm_suite_max_tests: int = Field(default=MAX_NODE_IDS, ge=1)
    suite_timeout_s: float | None = Field(default=None, gt=0)
    # Sandbox-seconds the wider suite may take per task (gold's runs of it included); 0: no limit.
    suite_task_budget_s: float = Field(default=1200.0, ge=0)
    # Attacks one worker runs at once (each mostly waits for its sandbox runs).
    concurrent_attacks: int = Field(default=4, ge=1)
    # How long to wait for one sandbox result (queueing included) before asking again.
    sandbox_wait_s: float = Field(default=1800.0, gt=0)
    # Attack budget in sandbox-seconds for requests that carry none (default: K × R candidates).
    budget_seconds: float | None = Field(default=None, gt=0)
    # Reference mutants of gold in each task's reference pool; 0: no pool is evaluated.
    reference_sample: int = Field(default=DEFAULT_SAMPLE_SIZE, ge=0)
    # The reference pool's budget (its equality probes and confirmations included): this share
    # of the attack's own sandbox-seconds (1: never more than the attack), within
    # reference_max_seconds; members that cannot fit are left out and counted.
    reference_max_seconds: float = Field(default=600.0, gt=0)
    reference_attack_share: float = Field(default=1.0, gt=0)

    @property
    def llm_api_key(self) -> SecretStr | None:
        """The chosen provider's key, if one is set."""
        key = self.openai_api_key if self.llm_provider == "openai" else self.anthropic_api_key
        return key if key is not None and key.get_secret_value() else None

    @property
    def llm_endpoint(self) -> str | None:
        if self.llm_provider == "anthropic":
            return self.llm_base_url or self.anthropic_base_url
        return self.llm_base_url

    @property
    def llm_model_name(self) -> str:
        return self.llm_model or DEFAULT_MODELS[self.llm_provider]

    @property
    def llm_enabled(self) -> bool:
        if self.llm_provider == "openai" and self.llm_base_url:
            return True  # a self-hosted endpoint may need no key
        return self.llm_api_key is not None

    @property
    def round_state_dir(self) -> Path:
        return self.state_dir / "attacker" / "rounds"

    @property
    def completion_cache_dir(self) -> Path:
        return self.llm_cache_dir or self.state_dir / "attacker" / "llm-cache"

    def attack_config(self) -> AttackConfig:
        return AttackConfig(
            llm=LLMParams(
                model=self.llm_model_name,
                max_tokens=self.llm_max_tokens,
                prompt_budget_tokens=self.llm_prompt_budget_tokens,
                temperature=self.llm_temperature,
                max_log_chars=self.attack_log_chars,
            ),
            llm_share=self.llm_share,
            max_log_chars=self.attack_log_chars,
            budget_seconds=self.budget_seconds,
            reference_sample=self.reference_sample,
            reference_max_seconds=self.reference_max_seconds,
            reference_attack_share=self.reference_attack_share,
            confirmation=ConfirmationConfig(
                held_back=self.confirm_held_back,
                probes=self.confirm_probes,
                suite_scope=self.confirm_suite,
                suite_selection=self.confirm_suite_selection,
                suite_max_tests=self.confirm_suite_max_tests,
                suite_timeout_s=self.suite_timeout_s,
                suite_task_budget_s=self.suite_task_budget_s or None,
            ),
        )
