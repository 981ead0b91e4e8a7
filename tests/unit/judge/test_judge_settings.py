"""Which backend the judge uses, from what is set; none when nothing is."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.judge.bootstrap import bootstrap
from hackaudit.judge.domain.budget import Prices
from hackaudit.judge.settings import JudgeSettings

VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "HACKAUDIT_ANTHROPIC_API_KEY",
        "HACKAUDIT_OPENAI_API_KEY", "HACKAUDIT_JUDGE_BASE_URL", "HACKAUDIT_JUDGE_PROVIDER",
        "HACKAUDIT_JUDGE_MODEL")  # fmt: skip


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("env", "backend", "model"),
    [
        ({}, None, None),
        ({"ANTHROPIC_API_KEY": "k"}, "anthropic", "claude-sonnet-4-6"),
        ({"HACKAUDIT_ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o"}, "anthropic", None),
        ({"OPENAI_API_KEY": "o"}, "openai", "gpt-4.1"),
        ({"HACKAUDIT_JUDGE_BASE_URL": "http://gpu:8000/v1", "HACKAUDIT_JUDGE_MODEL": "qwen"},
         "openai", "qwen"),
        ({"ANTHROPIC_API_KEY": "k", "HACKAUDIT_JUDGE_PROVIDER": "openai"}, "openai", None),
        ({"ANTHROPIC_API_KEY": ""}, None, None),
    ],
)  # fmt: skip
def test_backend_is_chosen_by_what_is_set(
    env: dict[str, str], backend: str | None, model: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = JudgeSettings()
    assert settings.backend == backend
    if model is not None:
        assert settings.model_name == model


def test_prices_default_for_known_models_and_are_configurable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert JudgeSettings().prices() == Prices(3.0, 15.0)
    monkeypatch.setenv("HACKAUDIT_JUDGE_MODEL", "local-model")
    assert not JudgeSettings().prices().priced
    monkeypatch.setenv("HACKAUDIT_JUDGE_PRICE_INPUT_PER_MTOK", "0.5")
    monkeypatch.setenv("HACKAUDIT_JUDGE_PRICE_OUTPUT_PER_MTOK", "1.5")
    assert JudgeSettings().prices() == Prices(0.5, 1.5)


def test_without_a_backend_the_judge_has_no_model(tmp_path: Path) -> None:
    judge = bootstrap(JudgeSettings(), tmp_path)
    assert judge.model is None and "no judge backend configured" in judge.no_backend
