"""The one rule for test files and test configuration, and the test sections of config files."""

from __future__ import annotations

import pytest

from hackaudit.shared.anatomy import (
    is_sectioned_config,
    is_test_config,
    is_test_file,
    is_test_path,
    read_patch,
    touches_test_sections,
)


@pytest.mark.parametrize(
    ("path", "test_file", "config", "sectioned"),
    [
        ("tests/test_ops.py", True, False, False),
        ("src/pkg/tests/helpers.py", True, False, False),
        ("pkg/testing/util.py", True, False, False),
        ("Tests/Helpers.py", True, False, False),
        ("test_x.py", True, False, False),
        ("test_data.json", True, False, False),
        ("pkg/x_test.py", True, False, False),
        ("pkg/x_tests.py", True, False, False),
        ("pkg/tests.py", True, False, False),
        ("pkg/test.py", True, False, False),
        ("tests/roots/test-ext/conf.py", True, False, False),
        ("conftest.py", False, True, False),
        ("tests/conftest.py", False, True, False),
        ("pytest.ini", False, True, False),
        (".pytest.ini", False, True, False),
        ("tests/runtests.py", False, True, False),
        ("bin/test", False, True, False),
        ("sympy/utilities/runtests.py", False, True, False),
        ("setup.cfg", False, False, True),
        ("tox.ini", False, False, True),
        ("pyproject.toml", False, False, True),
        ("src/pkg/core.py", False, False, False),
        ("src/testing_utils.py", False, False, False),
        ("pkg/contest.py", False, False, False),
        ("pkg/myconftest.py", False, False, False),
        ("pkg/tests_helper.py", False, False, False),
        ("src/attest/core.py", False, False, False),
    ],
)
def test_path_roles(path: str, test_file: bool, config: bool, sectioned: bool) -> None:
    assert is_test_file(path) is test_file
    assert is_test_config(path) is config
    assert is_sectioned_config(path) is sectioned
    assert is_test_path(path) is (test_file or config)


@pytest.mark.parametrize(
    ("path", "body", "verdict"),
    [
        ("setup.cfg", "@@ -1,3 +1,3 @@\n [tool:pytest]\n-addopts = -x\n+addopts = -q\n", True),
        ("setup.cfg", "@@ -1,3 +1,3 @@\n [metadata]\n-version = 1\n+version = 2\n", False),
        ("setup.cfg", "@@ -8,3 +8,3 @@\n a = 1\n-b = 2\n+b = 3\n", None),
        (
            "tox.ini",
            "@@ -1,2 +1,2 @@\n [testenv:py]\n-commands = pytest\n+commands = 1\n",
            True,
        ),
        ("tox.ini", "@@ -1,2 +1,2 @@\n [flake8]\n-max = 80\n+max = 99\n", False),
        ("pyproject.toml", "@@ -1,1 +1,2 @@\n [project]\n+[tool.pytest.ini_options]\n", True),
        ("pyproject.toml", "@@ -1,2 +1,2 @@\n [project]\n-name = 'a'\n+name = 'b'\n", False),
        ("README.md", "@@ -1 +1 @@\n-a\n+b\n", False),
    ],
)
def test_test_sections(path: str, body: str, verdict: bool | None) -> None:
    hunks = read_patch(f"--- a/{path}\n+++ b/{path}\n{body}").files[0].hunks
    assert touches_test_sections(path, hunks) is verdict


def test_a_config_file_without_shown_hunks_cannot_be_told() -> None:
    assert touches_test_sections("pyproject.toml", ()) is None
