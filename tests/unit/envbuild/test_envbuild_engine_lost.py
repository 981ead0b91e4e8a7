"""An engine that stops answering mid-build fails that build with a reason, never a traceback."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from requests.exceptions import ConnectionError as RequestsConnectionError

from hackaudit.sandbox.envbuild import EngineError
from hackaudit.sandbox.envbuild.docker_engine import DockerImageEngine
from hackaudit.sandbox.envbuild.errors import ImageBuildFailed

_RESET = RequestsConnectionError("('Connection aborted.', ConnectionResetError(104, 'reset'))")


class _GoneImages:
    def get(self, ref: str) -> Any:
        raise _RESET


class _GoneApi:
    def build(self, **_: Any) -> Iterator[dict[str, str]]:
        yield {"stream": "Step 1/4 : FROM base\n"}
        raise _RESET


class _GoneClient:
    images = _GoneImages()
    api = _GoneApi()


def test_a_lookup_on_a_lost_engine_is_an_engine_error_naming_the_image() -> None:
    engine = DockerImageEngine(_GoneClient())
    with pytest.raises(EngineError, match=r"looking up image hackaudit/x:1 failed.*Connection"):
        engine.image_id("hackaudit/x:1")


def test_a_build_cut_off_by_a_lost_engine_keeps_the_log_it_had() -> None:
    engine = DockerImageEngine(_GoneClient())
    with pytest.raises(ImageBuildFailed) as caught:
        engine.build(io.BytesIO(b""), tag="hackaudit/x:1", labels={})
    assert "Connection aborted" in str(caught.value)
    assert "Step 1/4 : FROM base" in str(caught.value)
