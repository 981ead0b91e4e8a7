"""Subgroup labels: submission era, model family, Pass@1 quartile."""

from __future__ import annotations

from datetime import date

import pytest

from hackaudit.analysis.subgroups import era, model_family, pass1_quartiles
from hackaudit.analysis.submissions import Submission


def _submission(name: str = "", tags: tuple[str, ...] = (), day: date | None = None) -> Submission:
    return Submission("20240101_x", frozenset(), name=name, date=day, tags=tags)


@pytest.mark.parametrize(
    ("name", "tags", "family"),
    [
        ("Agent", ("Model: claude-3-5-sonnet-20241022",), "Claude"),
        ("Agent", ("Model: o3-20250416",), "OpenAI"),
        ("Agent", ("Model: gpt-oss-120b",), "OpenAI"),
        ("Agent", ("Model: claude-3-5-sonnet-20241022", "Model: gpt-4o-2024-08-06"), "mixed"),
        ("Agent", ("Org: OpenAI", "System: Attempts - 1"), "unknown"),
        ("mini-SWE-agent + Gemini 2.5 Pro", (), "Gemini"),
        ("RAG + ChatGPT 3.5", (), "OpenAI"),
        ("Lingma Agent + Lingma SWE-GPT 72b", (), "unknown"),
        ("RAG + SWE-Llama 13B", (), "Llama"),
        ("mini-SWE-agent + Devstral (2512)", (), "Mistral"),
        ("mini-SWE-agent + GLM-4.6 (T=1)", (), "GLM"),
        ("Solver (2024-09-12)", (), "unknown"),
        # tags win over the name
        ("Claude wrapper", ("Model: Qwen2.5-Coder-32B-Instruct",), "Qwen"),
    ],
)
def test_model_family(name: str, tags: tuple[str, ...], family: str) -> None:
    assert model_family(_submission(name, tags)) == family


@pytest.mark.parametrize(
    ("day", "expected"),
    [(date(2023, 10, 10), "2023"), (date(2025, 1, 1), "2025"), (None, "unknown")],
)
def test_era_is_the_submission_year(day: date | None, expected: str) -> None:
    assert era(_submission(day=day)) == expected


def test_quartiles_split_rates_at_the_percentiles() -> None:
    # rates 0.1..0.8: cut points 0.275, 0.45, 0.625 -> two per quartile
    rates = [0.8, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    assert pass1_quartiles(rates) == ["Q4", "Q1", "Q1", "Q2", "Q2", "Q3", "Q3", "Q4"]


def test_equal_rates_share_the_lowest_quartile() -> None:
    assert pass1_quartiles([0.5, 0.5, 0.5]) == ["Q1", "Q1", "Q1"]
