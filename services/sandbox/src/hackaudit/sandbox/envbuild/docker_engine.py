"""The `ImageEngine` port on the Docker SDK: image lookups and network-less builds.

Builds go through the engine's build API with `network_mode="none"` and `pull=False`: the base
image must already be local, and nothing in a build step can reach the network. The build log is
streamed; on failure its last lines travel with the error. An engine that stops answering
mid-call (the SDK then raises the HTTP library's connection errors, not its own) is an
`EngineError` like any other refusal.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from typing import Any, BinaryIO

import docker
from docker.errors import DockerException, ImageNotFound
from requests.exceptions import RequestException

from hackaudit.sandbox.envbuild.errors import EngineError, ImageBuildFailed

_LOG_LINES = 40
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class DockerImageEngine:
    def __init__(self, client: Any | None = None, *, timeout_s: int = 1800) -> None:
        self._client = client
        self._timeout_s = timeout_s

    def image_id(self, ref: str) -> str | None:
        try:
            return str(self._docker().images.get(ref).id)
        except ImageNotFound:
            return None
        except (DockerException, RequestException) as exc:
            raise EngineError(f"looking up image {ref} failed: {exc}") from exc

    def build(self, context: BinaryIO, *, tag: str, labels: Mapping[str, str]) -> str:
        log: deque[str] = deque(maxlen=_LOG_LINES)
        image_id: str | None = None
        try:
            stream = self._docker().api.build(
                fileobj=context,
                custom_context=True,
                tag=tag,
                labels=dict(labels),
                network_mode="none",
                pull=False,
                rm=True,
                forcerm=True,
                decode=True,
            )
            for chunk in stream:
                if "error" in chunk:
                    error = _ANSI.sub("", str(chunk["error"])).strip()
                    raise ImageBuildFailed(tag, error, list(log))
                text = _ANSI.sub("", str(chunk.get("stream", ""))).rstrip()
                if text:
                    log.extend(text.splitlines())
                aux = chunk.get("aux")
                if isinstance(aux, dict) and "ID" in aux:
                    image_id = str(aux["ID"])
        except (DockerException, RequestException) as exc:
            raise ImageBuildFailed(tag, str(exc), list(log)) from exc
        return image_id or self.image_id(tag) or _missing(tag, log)

    def _docker(self) -> Any:
        if self._client is None:
            try:
                self._client = docker.from_env(timeout=self._timeout_s)
            except DockerException as exc:
                raise EngineError(f"no Docker engine answers: {exc}") from exc
        return self._client


def _missing(tag: str, log: deque[str]) -> str:
    raise ImageBuildFailed(tag, "the build ended without an image", list(log))
