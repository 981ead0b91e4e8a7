"""A local stand-in for the Anthropic Messages API: POST /v1/messages on 127.0.0.1, free port.

It answers from a script, in order: a reply text (a well-formed `message` JSON with usage), an
HTTP error (429 with `retry-after`, 500, ...) or a raw body (for malformed responses). Every
request is recorded with its headers and JSON body, so tests can check what the real SDK sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """A normal answer: the model's text and the usage it reports."""

    text: str
    input_tokens: int = 120
    output_tokens: int = 40
    stop_reason: str = "end_turn"


@dataclass(frozen=True)
class Failure:
    """An HTTP error as the API sends it (JSON error body), with optional headers."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    error_type: str = "api_error"


@dataclass(frozen=True)
class Raw:
    """Any body at all, e.g. one that is not JSON."""

    status: int
    body: str
    content_type: str = "application/json"


Step = Reply | Failure | Raw


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeMessagesApi:
    path = "/v1/messages"

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.requests: list[Recorded] = []
        self.default: Step | None = None
        self._lock = threading.Lock()
        self._counter = 0

    def next_step(self) -> Step:
        with self._lock:
            if self.script:
                return self.script.pop(0)
            if self.default is not None:
                return self.default
            return Failure(500, error_type="script_exhausted")

    def error_json(self, step: Failure) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": step.error_type, "message": f"fake {step.status}"},
        }

    def reply_json(self, reply: Reply, model: str) -> dict[str, Any]:
        return self.message_json(reply, model)

    def message_json(self, reply: Reply, model: str) -> dict[str, Any]:
        with self._lock:
            self._counter += 1
            n = self._counter
        return {
            "id": f"msg_fake_{n:04d}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": reply.text}],
            "model": model,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }


def _handler(api: FakeMessagesApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: str, headers: dict[str, str], ctype: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length).decode() if length else ""
            try:
                body = json.loads(raw) if raw else {}
            except json.JSONDecodeError:
                body = {"_unparsed": raw}
            api.requests.append(
                Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            if self.path.split("?")[0] != api.path:
                self._send(
                    404,
                    json.dumps(
                        {
                            "type": "error",
                            "error": {"type": "not_found_error", "message": self.path},
                        }
                    ),
                    {},
                    "application/json",
                )
                return
            step = api.next_step()
            if isinstance(step, Reply):
                payload = api.reply_json(step, str(body.get("model", "unknown")))
                self._send(
                    200, json.dumps(payload), {"request-id": payload["id"]}, "application/json"
                )
            elif isinstance(step, Failure):
                error = api.error_json(step)
                self._send(step.status, json.dumps(error), step.headers, "application/json")
            else:
                self._send(step.status, step.body, {}, step.content_type)

    return Handler


@contextmanager
def serve(api: FakeMessagesApi | None = None) -> Iterator[tuple[str, FakeMessagesApi]]:
    """Run the fake on a free port; yields (base URL, the fake)."""
    api = api or FakeMessagesApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}", api
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
