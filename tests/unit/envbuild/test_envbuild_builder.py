"""The builder's decisions, on fakes: build once per shared spec, reuse tags, isolate failures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hackaudit.sandbox.envbuild import (
    BaseCommitMismatch,
    BuildProgress,
    BuildStatus,
    EnvironmentBuilder,
    ImageMissing,
    build_images,
    resolve_image,
    with_images,
)
from hackaudit.sandbox.envbuild.base_image import FixedBaseImage
from hackaudit.sandbox.envbuild.fakes import FakeImageEngine, FakeWheelSource
from hackaudit.shared.contracts.task import EnvironmentSpec, Task

BASE = "hackaudit/base:test"


def _task(instance_id: str, source: Path | None, base_commit: str, **env: object) -> Task:
    environment = None
    if source is not None:
        spec: dict[str, object] = {"source": str(source), "pip_packages": ["pytest"]}
        spec["install"] = None
        spec.update(env)
        environment = EnvironmentSpec.model_validate(spec)
    return Task(
        instance_id=instance_id,
        repo="tiny/tinylib",
        base_commit=base_commit,
        patch="",
        test_patch="",
        FAIL_TO_PASS=["tests/test_core.py::test_double"],
        environment=environment,
    )


@pytest.fixture
def engine() -> FakeImageEngine:
    return FakeImageEngine(images={BASE: "sha256:base"})


@pytest.fixture
def wheels() -> FakeWheelSource:
    return FakeWheelSource()


@pytest.fixture
def builder(engine: FakeImageEngine, wheels: FakeWheelSource) -> EnvironmentBuilder:
    return EnvironmentBuilder(engine=engine, base_images=FixedBaseImage(BASE), wheels=wheels)


@pytest.fixture
def head(tiny_repo: Path, corpus_commit: Callable[[Path], str]) -> str:
    return corpus_commit(tiny_repo)


def test_a_task_is_built_then_found_cached(
    builder: EnvironmentBuilder, engine: FakeImageEngine, tiny_repo: Path, head: str
) -> None:
    task = _task("t-1", tiny_repo, head)

    [first] = build_images([task], builder=builder)
    [second] = build_images([task], builder=builder)

    assert first.status is BuildStatus.BUILT
    assert first.image is not None and first.image.startswith("hackaudit-env/tiny__tinylib:")
    assert (second.status, second.image) == (BuildStatus.CACHED, first.image)
    assert len(engine.builds) == 1


def test_the_context_holds_the_dockerfile_wheels_and_the_committed_repository(
    builder: EnvironmentBuilder, engine: FakeImageEngine, tiny_repo: Path, head: str
) -> None:
    build_images([_task("t-1", tiny_repo, head)], builder=builder)

    [build] = engine.builds
    assert "Dockerfile" in build.members
    assert "wheelhouse/pytest-1.0-py3-none-any.whl" in build.members
    assert "testbed/.git/HEAD" in build.members
    assert "testbed/tinylib/core.py" in build.members
    assert not any("__pycache__" in m or ".pytest_cache" in m for m in build.members)
    assert build.labels["hackaudit.base_commit"] == head


def test_tasks_sharing_repository_commit_and_spec_share_one_image(
    builder: EnvironmentBuilder, engine: FakeImageEngine, tiny_repo: Path, head: str
) -> None:
    tasks = [
        _task("t-1", tiny_repo, head),
        _task("t-2", tiny_repo, head),
        _task("t-3", tiny_repo, head, pip_packages=["pytest", "hypothesis"]),
    ]

    outcomes = build_images(tasks, builder=builder)

    built, cached = BuildStatus.BUILT, BuildStatus.CACHED
    assert [o.status for o in outcomes] == [built, cached, built]
    assert outcomes[0].image == outcomes[1].image != outcomes[2].image
    assert len(engine.builds) == 2


def test_changed_wheels_give_a_new_image(
    engine: FakeImageEngine, tiny_repo: Path, head: str
) -> None:
    task = _task("t-1", tiny_repo, head)
    old = EnvironmentBuilder(
        engine=engine, base_images=FixedBaseImage(BASE), wheels=FakeWheelSource(b"v1")
    )
    new = EnvironmentBuilder(
        engine=engine, base_images=FixedBaseImage(BASE), wheels=FakeWheelSource(b"v2")
    )

    [before] = build_images([task], builder=old)
    [after] = build_images([task], builder=new)

    assert after.status is BuildStatus.BUILT and after.image != before.image


def test_a_wrong_base_commit_fails_that_task_only_and_names_it(
    builder: EnvironmentBuilder, engine: FakeImageEngine, tiny_repo: Path, head: str
) -> None:
    tasks = [_task("wrong-1", tiny_repo, "0" * 40), _task("right-2", tiny_repo, head)]

    wrong, right = build_images(tasks, builder=builder)

    assert wrong.status is BuildStatus.FAILED and wrong.image is None
    assert "wrong-1" in wrong.reason and "0" * 40 in wrong.reason and head in wrong.reason
    assert right.status is BuildStatus.BUILT
    assert len(engine.builds) == 1


def test_resolve_image_fills_the_image_or_raises_the_named_error(
    builder: EnvironmentBuilder, tiny_repo: Path, head: str
) -> None:
    resolved = resolve_image(_task("t-1", tiny_repo, head), builder=builder)

    assert resolved.image is not None and resolved.image.startswith("hackaudit-env/")
    with pytest.raises(BaseCommitMismatch, match="bad-1"):
        resolve_image(_task("bad-1", tiny_repo, "0" * 40), builder=builder)


def test_prebuilt_images_are_checked_not_built(
    builder: EnvironmentBuilder, engine: FakeImageEngine
) -> None:
    engine.images["swebench/sweb.eval.x:latest"] = "sha256:present"
    present = _task("p-1", None, "c" * 40).model_copy(
        update={"image": "swebench/sweb.eval.x:latest"}
    )
    absent = _task("p-2", None, "c" * 40).model_copy(update={"image": "nowhere/image:1"})

    found, missing = build_images([present, absent], builder=builder)

    assert (found.status, found.image) == (BuildStatus.PREBUILT, "swebench/sweb.eval.x:latest")
    assert missing.status is BuildStatus.FAILED and "nowhere/image:1" in missing.reason
    assert engine.builds == []
    assert resolve_image(present, builder=builder) == present
    with pytest.raises(ImageMissing):
        resolve_image(absent, builder=builder)


def test_tasks_that_cannot_be_built_say_why(
    builder: EnvironmentBuilder, tiny_repo: Path, head: str
) -> None:
    nothing = _task("n-1", None, head)
    no_source = _task("n-2", tiny_repo, head).model_copy(
        update={"environment": EnvironmentSpec(source=None)}
    )
    other_base = _task("n-3", tiny_repo, head, base="jammy")

    outcomes = build_images([nothing, no_source, other_base], builder=builder)

    assert [o.status for o in outcomes] == [BuildStatus.FAILED] * 3
    assert "neither an image nor an environment" in outcomes[0].reason
    assert "environment.source" in outcomes[1].reason
    assert "'jammy'" in outcomes[2].reason


def test_a_missing_base_image_fails_every_build_with_the_reason(
    wheels: FakeWheelSource, tiny_repo: Path, head: str
) -> None:
    builder = EnvironmentBuilder(
        engine=FakeImageEngine(), base_images=FixedBaseImage(BASE), wheels=wheels
    )

    outcomes = build_images([_task("t-1", tiny_repo, head)], builder=builder)

    assert outcomes[0].status is BuildStatus.FAILED
    assert f"the base image {BASE} is not present" in outcomes[0].reason


def test_an_engine_failure_is_the_outcome_with_its_log(
    builder: EnvironmentBuilder, engine: FakeImageEngine, tiny_repo: Path, head: str
) -> None:
    engine.fail_with = "The command '/bin/sh -c make' returned a non-zero code: 2"

    [outcome] = build_images([_task("t-1", tiny_repo, head)], builder=builder)

    assert outcome.status is BuildStatus.FAILED
    assert "non-zero code: 2" in outcome.reason


def test_progress_reports_each_image_started_and_each_task_finished(
    builder: EnvironmentBuilder, tiny_repo: Path, head: str
) -> None:
    events: list[BuildProgress] = []
    tasks = [_task("t-1", tiny_repo, head), _task("t-2", tiny_repo, head), _task("n-3", None, head)]

    build_images(tasks, builder=builder, progress=events.append)

    finished = [e for e in events if e.outcome is not None]
    assert [(e.instance_id, e.done, e.total) for e in finished] == [
        ("n-3", 1, 3),
        ("t-1", 2, 3),
        ("t-2", 3, 3),
    ]
    started = [e for e in events if e.outcome is None]
    assert [(e.instance_id, e.done) for e in started] == [("t-1", 1)]


def test_with_images_keeps_the_tasks_that_have_one(
    builder: EnvironmentBuilder, tiny_repo: Path, head: str
) -> None:
    tasks = [_task("t-1", tiny_repo, head), _task("n-2", None, head)]

    resolved = with_images(tasks, build_images(tasks, builder=builder))

    assert [t.instance_id for t in resolved] == ["t-1"]
    assert resolved[0].image is not None
