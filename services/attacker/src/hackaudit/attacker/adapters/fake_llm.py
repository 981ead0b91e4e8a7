"""A scripted `LLMPort` for tests: replies in order, or by a function of the prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hackaudit.attacker.domain.ports import Completion, LLMUnavailableError, Prompt


class ScriptedLLM:
    def __init__(
        self,
        replies: Sequence[str | Exception] = (),
        *,
        respond: Callable[[Prompt], str] | None = None,
        input_tokens: int = 100,
        output_tokens: int = 50,
    ) -> None:
        self._replies = list(replies)
        self._respond = respond
        self._tokens = (input_tokens, output_tokens)
        self.prompts: list[Prompt] = []

    async def complete(self, prompt: Prompt) -> Completion:
        self.prompts.append(prompt)
        if self._respond is not None:
            text = self._respond(prompt)
        elif self._replies:
            reply = self._replies.pop(0)
            if isinstance(reply, Exception):
                raise reply
            text = reply
        else:
            raise LLMUnavailableError("no scripted reply left")
        return Completion(
            text=text,
            model=prompt.model,
            stop_reason="end_turn",
            input_tokens=self._tokens[0],
            output_tokens=self._tokens[1],
        )
