"""The sandbox keeps its run artifacts under the state folder it is built with (the bus's,
HACKAUDIT_STATE_DIR), not under `./.hackaudit` whatever the state folder is."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.sandbox.settings import SandboxSettings


def test_the_artifacts_follow_the_state_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HACKAUDIT_SANDBOX_ARTIFACTS_DIR", raising=False)
    assert SandboxSettings(state_dir=tmp_path).artifacts_dir == tmp_path / "artifacts" / "sandbox"
    monkeypatch.setenv("HACKAUDIT_STATE_DIR", str(tmp_path / "env"))
    assert SandboxSettings().artifacts_dir == tmp_path / "env" / "artifacts" / "sandbox"
    monkeypatch.setenv("HACKAUDIT_SANDBOX_ARTIFACTS_DIR", str(tmp_path / "own"))
    assert SandboxSettings().artifacts_dir == tmp_path / "own"
