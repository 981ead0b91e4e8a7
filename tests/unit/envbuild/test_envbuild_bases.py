"""Which base an environment's Python maps to, and what the errors say."""

from __future__ import annotations

import pytest

from hackaudit.sandbox.envbuild.bases import BaseTarget, base_target, missing_image_message
from hackaudit.sandbox.envbuild.errors import TaskNotBuildable


@pytest.mark.parametrize(
    ("python", "base", "suite", "glibc"),
    [
        ("3.9", None, "bullseye", 31),
        ("3.11", None, "bookworm", 36),
        ("3.13", None, "trixie", 41),
        (None, None, "bookworm", 36),
        (None, "bullseye", "bullseye", 31),
        ("3.9", "bullseye", "bullseye", 31),
    ],
)
def test_a_debian_release_carrying_the_python_is_its_base(
    python: str | None, base: str | None, suite: str, glibc: int
) -> None:
    target = base_target(python, base)

    assert (target.suite, target.glibc_minor, target.image) == (suite, glibc, None)


def test_another_python_comes_from_the_configured_image() -> None:
    target = base_target(
        "3.6", None, python_image="mirror/py:{version}", python_image_glibc_minor=24
    )

    assert target == BaseTarget(python="3.6", glibc_minor=24, image="mirror/py:3.6")
    assert base_target("3.8", None).image == "python:3.8-slim"


def test_the_missing_image_error_names_the_python_and_the_setting() -> None:
    message = missing_image_message(base_target("3.6", None))

    assert "Python 3.6" in message
    assert "python:3.6-slim" in message
    assert "HACKAUDIT_PYTHON_IMAGE" in message


def test_unknown_or_contradictory_bases_are_refused() -> None:
    with pytest.raises(TaskNotBuildable, match="'jammy'"):
        base_target(None, "jammy")
    with pytest.raises(TaskNotBuildable, match=r"carries Python 3\.11.*3\.9"):
        base_target("3.9", "bookworm")
