"""The judge's settings, read once at start-up from the environment (HACKAUDIT_JUDGE_* and keys).

Backend: HACKAUDIT_JUDGE_PROVIDER=anthropic|openai, or chosen by what is set — an Anthropic key
(HACKAUDIT_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY) picks Anthropic; otherwise an OpenAI key
(HACKAUDIT_OPENAI_API_KEY or OPENAI_API_KEY) or a HACKAUDIT_JUDGE_BASE_URL (self-hosted servers
often need no key) picks the OpenAI-compatible backend. With none of them there is no backend:
the judge answers every request "left out" and never invents a label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import SettingsConfigDict

from hackaudit.judge.domain.budget import KNOWN_PRICES, Prices
from hackaudit.judge.domain.prompts import JudgeParams
from hackaudit.shared.settings import FileSettings

Provider = Literal["anthropic", "openai"]
DEFAULT_MODELS: dict[str, str] = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4.1"}
NO_BACKEND = (
    "no judge backend configured (set HACKAUDIT_ANTHROPIC_API_KEY, or HACKAUDIT_JUDGE_BASE_URL "
    "for an OpenAI-compatible server)"
)


class JudgeSettings(FileSettings):
    config_section = "judge"
    model_config = SettingsConfigDict(
        env_prefix="HACKAUDIT_JUDGE_", extra="ignore", populate_by_name=True
    )

    provider: Provider | None = None
    anthropic_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("HACKAUDIT_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("HACKAUDIT_OPENAI_API_KEY", "OPENAI_API_KEY"),
    )
    base_url: str | None = None  # the backend's endpoint; default: its public API
    model: str | None = None  # default: claude-sonnet-4-6 (anthropic), gpt-4.1 (openai)
    json_mode: Literal["json_schema", "json_object"] = "json_schema"
    output_limit_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    temperature: float = Field(default=0.7, gt=0.0, le=1.0)
    max_tokens: int = Field(default=4096, ge=256)
    max_section_chars: int = Field(default=20000, ge=1000)
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=10)
    concurrency: int = Field(default=4, ge=1)
    # Stop asking once a call's worst case no longer fits (None: no cap).
    budget_usd: float | None = Field(default=None, ge=0)
    budget_tokens: int | None = Field(default=None, ge=0)
    # USD per million tokens; default: the list price of the default models, else unpriced.
    price_input_per_mtok: float | None = Field(default=None, ge=0)
    price_output_per_mtok: float | None = Field(default=None, ge=0)
    cache_dir: Path | None = None  # default: <state dir>/judge/cache

    @property
    def backend(self) -> Provider | None:
        if self.provider is not None:
            return self.provider
        if _set(self.anthropic_api_key):
            return "anthropic"
        if _set(self.openai_api_key) or self.base_url:
            return "openai"
        return None

    @property
    def model_name(self) -> str:
        return self.model or DEFAULT_MODELS[self.backend or "anthropic"]

    def api_key(self) -> SecretStr:
        key = self.anthropic_api_key if self.backend == "anthropic" else self.openai_api_key
        # A self-hosted endpoint may need no key; the SDK still wants a string.
        return key if key is not None and _set(key) else SecretStr("not-needed")

    def prices(self) -> Prices:
        known = KNOWN_PRICES.get(self.model_name, Prices())
        return Prices(
            self.price_input_per_mtok
            if self.price_input_per_mtok is not None
            else known.input_per_mtok,
            self.price_output_per_mtok
            if self.price_output_per_mtok is not None
            else known.output_per_mtok,
        )

    def params(self) -> JudgeParams:
        return JudgeParams(
            backend=self.backend or "",
            model=self.model_name,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            max_section_chars=self.max_section_chars,
        )

    @property
    def call_limit_s(self) -> float:
        """Wall-clock guard of one call: every attempt timing out, plus backoff."""
        return self.timeout_s * (self.max_retries + 1) + 60.0 * self.max_retries + 5.0


def _set(key: SecretStr | None) -> bool:
    return key is not None and bool(key.get_secret_value())
