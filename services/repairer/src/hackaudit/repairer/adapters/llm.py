"""The model behind `LLMPort`: Anthropic's Messages API through the official SDK.

Rate limits (429) and server errors (5xx) are retried by the SDK itself with exponential
backoff, honouring `retry-after`, at most `max_retries` times; what still fails becomes an
`LLMUnavailableError`. The base URL is configurable so tests (and proxies) can stand in for the
real endpoint. The API key is held as a `SecretStr` and handed to the SDK only.
"""

from __future__ import annotations

import anthropic
from pydantic import SecretStr

from hackaudit.repairer.domain.ports import Completion, LLMUnavailableError, Prompt
from hackaudit.shared.logs import get_logger

log = get_logger("hackaudit.repairer.llm")


class AnthropicLLM:
    def __init__(
        self,
        api_key: SecretStr,
        *,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 300.0,
    ) -> None:
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key.get_secret_value(),
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout_s,
        )

    async def complete(self, prompt: Prompt) -> Completion:
        try:
            message = await self._client.messages.create(
                model=prompt.model,
                max_tokens=prompt.max_tokens,
                system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}],
                # Newer SDKs type no `temperature`; the API still takes it in the body.
                extra_body={"temperature": prompt.temperature},
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
        completion = Completion(
            text=text,
            model=message.model,
            stop_reason=message.stop_reason,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
        )
        log.info(
            "model answered",
            model=completion.model,
            stop_reason=completion.stop_reason,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            chars=len(text),
        )
        return completion

    async def close(self) -> None:
        await self._client.close()


class ScriptedLLM:
    """An `LLMPort` fake: answers from a list in order, recording every prompt."""

    def __init__(self, answers: list[str], tokens: int = 100) -> None:
        self.answers = list(answers)
        self.prompts: list[Prompt] = []
        self.tokens = tokens

    async def complete(self, prompt: Prompt) -> Completion:
        self.prompts.append(prompt)
        if not self.answers:
            raise LLMUnavailableError("the script has no answer left")
        return Completion(text=self.answers.pop(0), model=prompt.model, output_tokens=self.tokens)
