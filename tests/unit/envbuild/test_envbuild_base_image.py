"""Where the base image comes from: a fixed tag, the repository's script, or a clear refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import BaseImageUnavailable, EnvBuildSettings
from hackaudit.sandbox.envbuild.base_image import (
    FixedBaseImage,
    ScriptBaseImage,
    UnconfiguredBaseImage,
    base_image_source,
)

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_a_configured_tag_is_used_as_it_is() -> None:
    source = base_image_source(EnvBuildSettings(base_image="mine/base:1"))

    assert isinstance(source, FixedBaseImage)
    assert source.base_image() == "mine/base:1"


def test_by_default_the_repository_script_is_found() -> None:
    settings = EnvBuildSettings(base_image=None)

    assert settings.base_image_script_path() == REPO_ROOT / "scripts" / "base-image.sh"
    assert isinstance(base_image_source(settings), ScriptBaseImage)


def test_the_script_prints_the_tag_and_runs_once(tmp_path: Path) -> None:
    script = tmp_path / "base.sh"
    count = tmp_path / "count"
    script.write_text(
        f'echo run >> {count}\necho "building" >&2\necho "suite/$HACKAUDIT_BASE_SUITE"\n'
    )
    source = ScriptBaseImage(script, suite="bookworm")

    assert source.base_image() == "suite/bookworm"
    assert source.base_image() == "suite/bookworm"
    assert count.read_text().splitlines() == ["run"]


def test_a_failing_script_is_a_base_image_error_with_its_message(tmp_path: Path) -> None:
    script = tmp_path / "base.sh"
    script.write_text('echo "base-image: debootstrap is not installed" >&2\nexit 1\n')

    with pytest.raises(BaseImageUnavailable, match="debootstrap is not installed"):
        ScriptBaseImage(script).base_image()


def test_without_tag_or_script_the_error_says_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(BaseImageUnavailable, match="HACKAUDIT_BASE_IMAGE"):
        UnconfiguredBaseImage().base_image()
