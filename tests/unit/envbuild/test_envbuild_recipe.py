"""The image tag names exactly its inputs, and the Dockerfile says what the image must hold."""

from __future__ import annotations

import dataclasses
import json

import pytest

from hackaudit.sandbox.envbuild.recipe import (
    ImageInputs,
    WheelFile,
    dockerfile,
    image_tag,
    normalised_packages,
    repo_slug,
    requirement_name,
    with_build_tools,
)

INPUTS = ImageInputs(
    repo="Acme/Widget",
    base_image="hackaudit/base:bookworm-abc",
    base_image_id="sha256:" + "1" * 64,
    base_commit="c" * 40,
    pip_packages=("pytest",),
    wheels=(WheelFile("pytest-9.0-py3-none-any.whl", "a" * 64),),
    install="pip install --no-build-isolation --no-deps -e .",
)


def test_the_tag_is_stable_and_names_the_repository() -> None:
    tag = image_tag(INPUTS)

    assert tag == image_tag(dataclasses.replace(INPUTS))
    assert tag.startswith("hackaudit-env/acme__widget:")
    assert len(tag.split(":")[1]) == 20


CHANGES = {
    "base image id": {"base_image_id": "sha256:" + "2" * 64},
    "base commit": {"base_commit": "d" * 40},
    "pip packages": {"pip_packages": ("pytest", "hypothesis")},
    "wheel hash": {"wheels": (WheelFile("pytest-9.0-py3-none-any.whl", "b" * 64),)},
    "wheel file": {"wheels": (WheelFile("pytest-9.1-py3-none-any.whl", "a" * 64),)},
    "install command": {"install": "python setup.py develop"},
    "no install": {"install": None},
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_every_input_changes_the_tag(change: dict[str, object]) -> None:
    assert image_tag(dataclasses.replace(INPUTS, **change)) != image_tag(INPUTS)  # type: ignore[arg-type]


def test_a_retagged_but_identical_base_image_keeps_the_tag() -> None:
    assert image_tag(dataclasses.replace(INPUTS, base_image="other/name:tag")) == image_tag(INPUTS)


def test_package_order_and_repeats_do_not_split_images() -> None:
    assert normalised_packages(("b", "a", " a ", "")) == ("a", "b")


@pytest.mark.parametrize(
    ("repo", "slug"),
    [
        ("psf/requests", "psf__requests"),
        ("Pallets/Flask", "pallets__flask"),
        ("weird name/with:colon", "weird-name__with-colon"),
        ("examples/inikit", "examples__inikit"),
        ("///", "repo"),
    ],
)
def test_repo_slugs_fit_docker_names(repo: str, slug: str) -> None:
    assert repo_slug(repo) == slug


def test_the_dockerfile_installs_wheels_offline_into_a_venv_first_on_path() -> None:
    text = dockerfile(INPUTS)

    assert text.splitlines()[1] == "FROM hackaudit/base:bookworm-abc"
    assert "python3 -m venv /opt/venv" in text
    assert "ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:/usr/local/sbin:" in text
    pip_line = next(line for line in text.splitlines() if "--find-links" in line)
    command = json.loads(pip_line.removeprefix("RUN "))
    assert command[:3] == ["/opt/venv/bin/pip", "install", "--no-index"]
    assert command[-1] == "pytest"


def test_the_dockerfile_copies_the_repository_then_installs_then_runs_as_runner() -> None:
    lines = dockerfile(INPUTS).splitlines()

    copy = lines.index("COPY --chown=runner:runner testbed/ /testbed/")
    install = next(i for i, line in enumerate(lines) if "pip install --no-build-isolation" in line)
    assert copy < lines.index("WORKDIR /testbed") < install
    assert lines[-2] == "USER runner"


def test_without_packages_or_install_no_wheels_are_copied_and_nothing_is_run() -> None:
    text = dockerfile(dataclasses.replace(INPUTS, pip_packages=(), wheels=(), install=None))

    assert "wheelhouse" not in text
    assert "bash" not in text.split("WORKDIR /testbed")[1].split("RUN find")[0]


def test_install_commands_keep_their_shell_syntax() -> None:
    text = dockerfile(dataclasses.replace(INPUTS, install="make build && echo 'done; ok'"))
    run = next(line for line in text.splitlines() if "make build" in line)

    assert json.loads(run.removeprefix("RUN "))[-1] == "make build && echo 'done; ok'"


@pytest.mark.parametrize(
    ("packages", "install", "expected"),
    [
        (("pytest",), "pip install -e .", ("pytest", "wheel")),
        (("pytest",), None, ("pytest",)),
        (("pytest", "Wheel==0.40.0"), "pip install -e .", ("Wheel==0.40.0", "pytest")),
        (("wheel[extra]>=0.4",), "make", ("wheel[extra]>=0.4",)),
    ],
)
def test_an_install_command_gets_the_build_tools_it_needs_unless_pinned(
    packages: tuple[str, ...], install: str | None, expected: tuple[str, ...]
) -> None:
    assert with_build_tools(packages, install) == expected


@pytest.mark.parametrize(
    ("requirement", "name"),
    [("Foo_Bar[x]>=1", "foo-bar"), ("zope.interface", "zope-interface"), (" pytest ", "pytest")],
)
def test_requirement_names_compare_like_pip(requirement: str, name: str) -> None:
    assert requirement_name(requirement) == name
