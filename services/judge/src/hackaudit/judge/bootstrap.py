"""The judge's composition root: settings in, the judge with its real (or no) backend out."""

from __future__ import annotations

from pathlib import Path

from hackaudit.judge.domain.budget import Budget
from hackaudit.judge.domain.ports import JudgeModel
from hackaudit.judge.service_layer.judging import Judge
from hackaudit.judge.settings import NO_BACKEND, JudgeSettings
from hackaudit.shared.content_cache import JsonDirCache
from hackaudit.shared.contracts import JudgeSample


def backend(settings: JudgeSettings) -> JudgeModel | None:
    """The configured model backend, or None when none is configured."""
    if settings.backend == "anthropic":
        from hackaudit.judge.adapters.anthropic_model import AnthropicJudgeModel

        return AnthropicJudgeModel(
            settings.api_key(),
            base_url=settings.base_url,
            max_retries=settings.max_retries,
            timeout_s=settings.timeout_s,
        )
    if settings.backend == "openai":
        from hackaudit.judge.adapters.openai_model import OpenAIJudgeModel

        return OpenAIJudgeModel(
            settings.api_key(),
            base_url=settings.base_url,
            max_retries=settings.max_retries,
            timeout_s=settings.timeout_s,
            json_mode=settings.json_mode,
            output_limit_param=settings.output_limit_param,
        )
    return None


def bootstrap(settings: JudgeSettings, state_dir: Path, model: JudgeModel | None = None) -> Judge:
    """The judge; `model` replaces the configured backend (tests)."""
    return Judge(
        model=model if model is not None else backend(settings),
        cache=JsonDirCache(JudgeSample, settings.cache_dir or state_dir / "judge" / "cache"),
        budget=Budget(
            prices=settings.prices(),
            max_usd=settings.budget_usd,
            max_tokens=settings.budget_tokens,
        ),
        params=settings.params(),
        concurrency=settings.concurrency,
        call_limit_s=settings.call_limit_s,
        no_backend=NO_BACKEND,
    )
