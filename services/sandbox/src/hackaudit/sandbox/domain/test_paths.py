"""Reads the test sections a configuration change touches from a diff taken inside the container.

Which paths are test files or test configuration is `hackaudit.shared.anatomy.roles`. When a
candidate's own hunks do not show the section of a changed line in `setup.cfg`, `tox.ini` or
`pyproject.toml`, the sandbox takes a whole-file diff (`git diff -U<big>`) in the container right
after the candidate is applied, and reads it here.
"""

from __future__ import annotations

from hackaudit.shared.anatomy import read_patch, touches_test_sections


def sectioned_changes_from_full_diff(full_diff: str) -> dict[str, bool]:
    """Per file of a whole-file-context diff (`git diff -U<big>`): does it change a test section."""
    verdicts: dict[str, bool] = {}
    for change in read_patch(full_diff).files:
        verdict = touches_test_sections(change.path, change.hunks)
        verdicts[change.path] = bool(verdict)
    return verdicts
