"""A local stand-in for an OpenAI-compatible Chat Completions API: POST /v1/chat/completions.

The same scripted server as the Messages API fake (`fake_messages_api`: replies, HTTP errors
with headers, raw bodies, every request recorded); only the path and the JSON shapes differ.
Point the real `openai` SDK's base_url at `<url>/v1`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fake_messages_api import Failure, FakeMessagesApi, Reply, serve


class FakeChatApi(FakeMessagesApi):
    path = "/v1/chat/completions"

    def error_json(self, step: Failure) -> dict[str, Any]:
        return {
            "error": {
                "message": f"fake {step.status}",
                "type": step.error_type,
                "param": None,
                "code": None,
            }
        }

    def reply_json(self, reply: Reply, model: str) -> dict[str, Any]:
        message = self.message_json(reply, model)  # numbering and locking shared with the base
        finish = "stop" if reply.stop_reason == "end_turn" else reply.stop_reason
        return {
            "id": message["id"].replace("msg_", "chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": reply.input_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": reply.input_tokens + reply.output_tokens,
            },
        }


@contextmanager
def serve_chat() -> Iterator[tuple[str, FakeChatApi]]:
    """Run the fake on a free port; yields (base URL ending in /v1, the fake)."""
    api = FakeChatApi()
    with serve(api) as (url, _):
        yield f"{url}/v1", api
