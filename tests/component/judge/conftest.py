"""Fixtures for the judge's component tests: the fake model APIs on a local port."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The test tree is not a package (pytest imports it with importlib): make the fake importable.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_judge_api import FakeJudgeApi, serve


@pytest.fixture
def judge_api() -> Iterator[tuple[str, FakeJudgeApi]]:
    """(base URL, scripted fake): the Anthropic SDK takes the URL, the openai SDK URL + /v1."""
    with serve() as running:
        yield running
