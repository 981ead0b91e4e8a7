"""How every service reaches a model: Anthropic's Messages API and OpenAI-compatible Chat
Completions (OpenAI, vLLM, llama.cpp's server, Ollama, gateways), each through its official SDK,
built one way from the same connection settings.

    ModelEndpoint            the SDK client built from a key and a `Connection`; `close`
    ├── AnthropicEndpoint    an `AsyncAnthropic` client
    │   └── AnthropicText    a prompt's text answer on the Messages API
    └── OpenAIEndpoint       an `AsyncOpenAI` client, and which output-limit field it sends
        └── OpenAIChatText   a prompt's text answer on Chat Completions
    message_usage / chat_usage    the tokens one reply cost, as `Usage`
    call_fault                    what a failed call was: rate limited, timed out, unavailable

Rate limits (429) and server errors (5xx) are retried by the SDK itself with exponential backoff,
honouring `retry-after`, at most `max_retries` times. The text adapters turn what still fails into
an `LLMUnavailableError` (a transient fault: the message is retried later); an adapter that records
failures as values instead (the judge) subclasses an endpoint and maps the SDK's errors itself.
The base URL is configurable so tests and proxies can stand in for the real endpoint; the API key
is a `SecretStr`, handed to the SDK only. A service gets its `LLMPort` by subclassing a text
adapter with its own reply type and logger name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Generic, Literal, TypedDict, TypeVar, Unpack

import anthropic
import openai
from anthropic.types import Message
from openai.types.chat import ChatCompletion
from pydantic import SecretStr

from hackaudit.shared.errors import LLMUnavailableError
from hackaudit.shared.logs import get_logger
from hackaudit.shared.ports import ModelPrompt, ModelReply

# OpenAI's newer models take `max_completion_tokens`; most compatible servers take `max_tokens`.
OutputLimitParam = Literal["max_tokens", "max_completion_tokens"]
# How a call failed after the SDK's retries (the names of the judge's sample outcomes).
FaultKind = Literal["rate_limited", "timeout", "unavailable"]

ClientT = TypeVar("ClientT", anthropic.AsyncAnthropic, openai.AsyncOpenAI)
ReplyT = TypeVar("ReplyT", bound=ModelReply)


class Connection(TypedDict, total=False):
    """Where the endpoint is and how hard to try; what is left out takes the endpoint's default."""

    base_url: str | None  # None: the provider's own endpoint
    max_retries: int  # default 4
    timeout_s: float  # default: the class's `default_timeout_s`


class Usage(TypedDict):
    """The tokens one call cost, named as the contracts name them."""

    input_tokens: int
    output_tokens: int


def message_usage(message: Message) -> Usage:
    return {
        "input_tokens": message.usage.input_tokens,
        "output_tokens": message.usage.output_tokens,
    }


def chat_usage(reply: ChatCompletion) -> Usage:
    """Servers that report no usage cost zero tokens."""
    usage = reply.usage
    return {
        "input_tokens": usage.prompt_tokens if usage else 0,
        "output_tokens": usage.completion_tokens if usage else 0,
    }


def call_fault(
    exc: anthropic.APIError | openai.APIError | ValueError, api: str
) -> tuple[FaultKind, str]:
    """What a call that failed after the SDK's retries was, for an adapter that records it as a
    value: its kind and a short detail naming `api` (a ValueError is a body that is not JSON)."""
    if isinstance(exc, anthropic.RateLimitError | openai.RateLimitError):
        return "rate_limited", f"{api} answered {exc.status_code} after the retries"
    if isinstance(exc, anthropic.APITimeoutError | openai.APITimeoutError):
        return "timeout", f"{api} timed out"
    if isinstance(exc, anthropic.APIStatusError | openai.APIStatusError):
        return "unavailable", f"{api} answered {exc.status_code} after the retries"
    if isinstance(exc, anthropic.APIError | openai.APIError):
        return "unavailable", f"{api}: {type(exc).__name__}"
    return "unavailable", f"unreadable response: {exc}"[:300]


class ModelEndpoint(ABC, Generic[ClientT]):
    """Owns one SDK client, built at construction from the key and the connection settings."""

    default_timeout_s: ClassVar[float] = 300.0

    def __init__(self, api_key: SecretStr, **connection: Unpack[Connection]) -> None:
        self.client: ClientT = self._connect(
            api_key.get_secret_value(),
            connection.get("base_url"),
            connection.get("max_retries", 4),
            connection.get("timeout_s", self.default_timeout_s),
        )

    @abstractmethod
    def _connect(self, key: str, base_url: str | None, retries: int, timeout_s: float) -> ClientT:
        """The SDK client; retries and timeout are the SDK's own."""

    async def close(self) -> None:
        await self.client.close()


class AnthropicEndpoint(ModelEndpoint[anthropic.AsyncAnthropic]):
    def _connect(
        self, key: str, base_url: str | None, retries: int, timeout_s: float
    ) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=key, base_url=base_url, max_retries=retries, timeout=timeout_s
        )


class OpenAIEndpoint(ModelEndpoint[openai.AsyncOpenAI]):
    def __init__(
        self,
        api_key: SecretStr,
        *,
        output_limit_param: OutputLimitParam = "max_tokens",
        **connection: Unpack[Connection],
    ) -> None:
        super().__init__(api_key, **connection)
        self.output_limit_param = output_limit_param

    def _connect(
        self, key: str, base_url: str | None, retries: int, timeout_s: float
    ) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=key, base_url=base_url, max_retries=retries, timeout=timeout_s
        )


def _temperature(prompt: ModelPrompt) -> dict[str, float]:
    """Sent only when it differs from the APIs' default of 1.0 (some models take no other)."""
    return {"temperature": prompt.temperature} if prompt.temperature != 1.0 else {}


def _logged(reply: ReplyT, logger_name: str, **extra: object) -> ReplyT:
    """One summary line: sizes and counts, never the model's text."""
    get_logger(logger_name).info(
        "model answered",
        model=reply.model,
        stop_reason=reply.stop_reason,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        chars=len(reply.text),
        **extra,
    )
    return reply


class AnthropicText(AnthropicEndpoint, Generic[ReplyT]):
    """One prompt's text answer on the Messages API, as the subclass's `reply_type`."""

    reply_type: type[ReplyT]
    logger_name: ClassVar[str] = "hackaudit.llm"

    async def complete(self, prompt: ModelPrompt) -> ReplyT:
        try:
            message = await self.client.messages.create(
                model=prompt.model,
                max_tokens=prompt.max_tokens,
                system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}],
                # Not a typed parameter of every SDK version; the API takes it in the body.
                extra_body=_temperature(prompt) or None,
            )
        except anthropic.APIStatusError as exc:
            raise LLMUnavailableError(f"Messages API answered {exc.status_code}") from exc
        except anthropic.APIError as exc:
            raise LLMUnavailableError(f"Messages API failed: {type(exc).__name__}") from exc
        except ValueError as exc:  # a response body that is not the documented JSON
            raise LLMUnavailableError(f"unreadable Messages API response: {exc}") from exc
        text = "".join(
            getattr(block, "text", "") for block in message.content if block.type == "text"
        )
        reply = self.reply_type(
            text=text,
            model=message.model,
            stop_reason=message.stop_reason,
            **message_usage(message),
        )
        return _logged(reply, self.logger_name)


class OpenAIChatText(OpenAIEndpoint, Generic[ReplyT]):
    """One prompt's text answer on Chat Completions, as the subclass's `reply_type`.

    A reply that carries no text (no choices, a null content) is an empty answer, which the
    caller judges; a body that is not JSON at all is a fault."""

    reply_type: type[ReplyT]
    logger_name: ClassVar[str] = "hackaudit.llm"

    async def complete(self, prompt: ModelPrompt) -> ReplyT:
        extra: dict[str, object] = {self.output_limit_param: prompt.max_tokens}
        extra.update(_temperature(prompt))
        try:
            reply = await self.client.chat.completions.create(
                model=prompt.model,
                messages=[
                    {"role": "system", "content": prompt.system},
                    {"role": "user", "content": prompt.user},
                ],
                extra_body=extra,
            )
        except openai.APIStatusError as exc:
            raise LLMUnavailableError(f"Chat Completions API answered {exc.status_code}") from exc
        except openai.APIError as exc:
            raise LLMUnavailableError(f"Chat Completions API failed: {type(exc).__name__}") from exc
        except ValueError as exc:  # a response body that is not JSON
            raise LLMUnavailableError(f"unreadable Chat Completions response: {exc}") from exc
        if not isinstance(reply, ChatCompletion):  # the SDK hands back a body it cannot model
            raise LLMUnavailableError(
                f"unreadable Chat Completions response: {type(reply).__name__}"
            )
        choice = reply.choices[0] if reply.choices else None
        answer = self.reply_type(
            text=(choice.message.content or "") if choice is not None else "",
            model=reply.model or prompt.model,
            stop_reason=(choice.finish_reason if choice is not None else None) or "no_choice",
            **chat_usage(reply),
        )
        return _logged(answer, self.logger_name, usage_reported=reply.usage is not None)
