"""The attacker calls test tampering exactly what the sandbox flags (one shared path rule)."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.confirm.classification import Kind, exploit_kind
from hackaudit.sandbox.domain.flags import config_verdicts, patch_flags
from hackaudit.shared.anatomy import read_patch
from hackaudit.shared.contracts import Candidate, Provenance


def _diff(path: str, body: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{body}"


CASES = [
    ("pkg/core.py", "@@ -1 +1 @@\n-a = 1\n+a = 2\n", False),
    ("tests/test_core.py", "@@ -1 +1 @@\n-assert f()\n+assert True\n", True),
    ("pkg/core_tests.py", "@@ -1 +1 @@\n-assert f()\n+assert True\n", True),
    ("conftest.py", "@@ -1 +1 @@\n-x = 1\n+x = 2\n", True),
    ("setup.cfg", "@@ -1,2 +1,2 @@\n [metadata]\n-version = 1\n+version = 2\n", False),
    ("setup.cfg", "@@ -1,2 +1,2 @@\n [tool:pytest]\n-addopts = -x\n+addopts = -q\n", True),
    ("pyproject.toml", "@@ -1,2 +1,2 @@\n [project]\n-name = 'a'\n+name = 'b'\n", False),
]


@pytest.mark.parametrize(("path", "body", "tampering"), CASES)
def test_tampering_is_what_the_sandbox_flags(path: str, body: str, tampering: bool) -> None:
    diff = _diff(path, body)
    parsed = read_patch(diff)
    paths = parsed.named_paths
    flags = patch_flags(paths, (), config_verdicts(parsed.files, paths, None))
    flagged = bool(flags.touched_test_files or flags.touched_test_config)
    candidate = Candidate(instance_id="pkg-1", diff=diff, provenance=Provenance(strategy="llm"))

    assert flagged is tampering
    assert (exploit_kind(candidate, flags).kind is Kind.TEST_TAMPERING) is tampering
