"""`HACKAUDIT_SANDBOX_ISOLATION` picks the Docker backend: a container per run by default, warm
containers when asked; anything else is refused at start-up."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hackaudit.sandbox.adapters.docker_backend import DockerBackend
from hackaudit.sandbox.adapters.warm_backend import WarmDockerBackend
from hackaudit.sandbox.bootstrap import docker_backend
from hackaudit.sandbox.settings import Isolation, SandboxSettings


def test_default_is_a_container_per_run() -> None:
    backend = docker_backend(SandboxSettings())

    assert type(backend) is DockerBackend


def test_warm_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HACKAUDIT_SANDBOX_ISOLATION", "warm")
    monkeypatch.setenv("HACKAUDIT_SANDBOX_WARM_PER_RUN", "1")
    settings = SandboxSettings()

    assert settings.isolation is Isolation.WARM and settings.warm_per_run == 1
    assert isinstance(docker_backend(settings), WarmDockerBackend)


def test_unknown_isolation_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HACKAUDIT_SANDBOX_ISOLATION", "chroot")

    with pytest.raises(ValidationError, match="isolation"):
        SandboxSettings()
