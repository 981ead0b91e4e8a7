"""A local stand-in for both model APIs the judge speaks, on 127.0.0.1 at a free port.

POST /v1/messages answers in the Messages API's shape (the answer as a `tool_use` block), POST
/v1/chat/completions in the Chat Completions shape (the answer as JSON text). Each request takes
the next step of the script (or asks `respond`): a structured answer, a malformed one, a
truncated one, a refusal, an HTTP error with headers (429 with retry-after), a delay (for
timeouts) or a raw body. Every request is recorded, so tests can check what the real SDKs sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Answer:
    """A well-formed answer with this label."""

    label: str
    input_tokens: int = 1500
    output_tokens: int = 300


@dataclass(frozen=True)
class Malformed:
    """An answer that is not the schema (a dict), or for chat, any text."""

    payload: dict[str, Any] | str


@dataclass(frozen=True)
class Truncated:
    """Output limit hit: stop_reason max_tokens / finish_reason length, half an answer."""


@dataclass(frozen=True)
class Refusal:
    """stop_reason refusal / message.refusal set."""


@dataclass(frozen=True)
class Failure:
    status: int
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delay:
    """Sleep, then answer with `then` (the client may have given up by then)."""

    seconds: float
    then: Step


@dataclass(frozen=True)
class Raw:
    status: int
    body: str


Step = Answer | Malformed | Truncated | Refusal | Failure | Delay | Raw


def answer_body(label: str) -> dict[str, Any]:
    return {
        "premises": ["1. The issue asks for X.", "2. The tests check X on one input."],
        "trace": f"Premise 1 holds on line 3; premise 2 holds. So: {label}.",
        "conclusion": f"The patch is {label}.",
        "label": label,
    }


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeJudgeApi:
    def __init__(self) -> None:
        self.script: list[Step] = []
        self.respond: Callable[[dict[str, Any]], Step] | None = None
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._n = 0

    def next_step(self, body: dict[str, Any]) -> Step:
        with self._lock:
            if self.script:
                return self.script.pop(0)
        if self.respond is not None:
            return self.respond(body)
        return Failure(500)

    def _id(self) -> int:
        with self._lock:
            self._n += 1
            return self._n

    def messages(self, step: Step, model: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        usage = {"input_tokens": 1500, "output_tokens": 300}
        content: list[dict[str, Any]]
        stop = "tool_use"
        if isinstance(step, Answer):
            usage = {"input_tokens": step.input_tokens, "output_tokens": step.output_tokens}
            content = [_tool_use(answer_body(step.label))]
        elif isinstance(step, Malformed):
            payload = step.payload if isinstance(step.payload, dict) else {"text": step.payload}
            content = [_tool_use(payload)]
        elif isinstance(step, Truncated):
            content, stop = [_tool_use({"premises": ["1. The issue"]})], "max_tokens"
        elif isinstance(step, Refusal):
            content, stop = [{"type": "text", "text": "I can't help with that."}], "refusal"
        else:
            raise TypeError(step)
        body = {
            "id": f"msg_fake_{self._id():04d}",
            "type": "message",
            "role": "assistant",
            "content": content,
            "model": model,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return 200, body, {}

    def chat(self, step: Step, model: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        usage = (1500, 300)
        refusal = None
        finish = "stop"
        if isinstance(step, Answer):
            usage = (step.input_tokens, step.output_tokens)
            text: str | None = json.dumps(answer_body(step.label))
        elif isinstance(step, Malformed):
            text = step.payload if isinstance(step.payload, str) else json.dumps(step.payload)
        elif isinstance(step, Truncated):
            text, finish = '{"premises": ["1. The issue', "length"
        elif isinstance(step, Refusal):
            text, refusal = None, "I can't help with that."
        else:
            raise TypeError(step)
        body = {
            "id": f"chatcmpl-fake-{self._id():04d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": refusal},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
            },
        }
        return 200, body, {}


def _tool_use(payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_fake", "name": "record_judgement", "input": payload}


def _handler(api: FakeJudgeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, body: str, headers: dict[str, str]) -> None:
            data = body.encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a timeout test)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length).decode() if length else ""
            body = json.loads(raw) if raw else {}
            path = self.path.split("?")[0]
            api.requests.append(
                Recorded(path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            step = api.next_step(body)
            while isinstance(step, Delay):
                time.sleep(step.seconds)
                step = step.then
            if isinstance(step, Failure):
                error = {"type": "error", "error": {"type": "rate_limit_error", "message": "x"}}
                self._send(step.status, json.dumps(error), step.headers)
                return
            if isinstance(step, Raw):
                self._send(step.status, step.body, {})
                return
            model = str(body.get("model", "unknown"))
            if path == "/v1/messages":
                status, payload, headers = api.messages(step, model)
            elif path == "/v1/chat/completions":
                status, payload, headers = api.chat(step, model)
            else:
                self._send(404, json.dumps({"error": {"message": path}}), {})
                return
            self._send(status, json.dumps(payload), headers)

    return Handler


@contextmanager
def serve() -> Iterator[tuple[str, FakeJudgeApi]]:
    """Run the fake on a free port; yields (base URL without /v1, the fake)."""
    api = FakeJudgeApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    server.daemon_threads = True
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
