"""Fixtures for the ingestion tests: the static task files and the real SWE-bench Verified data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def swebench_verified_data() -> Path:
    """The shared `swebench-verified` data folder; the test is skipped where it is absent.

    HACKAUDIT_SHARED_DATA names the folder holding `swebench-verified/` (or the shared folder
    above it); otherwise `../shared/data` beside the repository root is used.
    """
    candidates = []
    if env := os.environ.get("HACKAUDIT_SHARED_DATA"):
        candidates += [Path(env), Path(env) / "data"]
    candidates.append(REPO_ROOT.parent / "shared" / "data")
    for folder in candidates:
        if (folder / "swebench-verified").is_dir():
            return folder / "swebench-verified"
    pytest.skip("the shared SWE-bench Verified data is not on this machine")
