"""A scripted `JudgeModel` for tests: answers by a function of the prompt, or in order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from hackaudit.judge.domain.answers import read_answer
from hackaudit.judge.domain.prompts import JudgePrompt
from hackaudit.shared.contracts import JudgeSample

Script = str | JudgeSample  # a label ("correct"), or a whole sample (e.g. a failed one)


class ScriptedJudgeModel:
    def __init__(
        self,
        replies: Sequence[Script] = (),
        *,
        respond: Callable[[JudgePrompt], Script] | None = None,
        input_tokens: int = 1000,
        output_tokens: int = 200,
        delay_s: float = 0.0,
    ) -> None:
        self._replies = list(replies)
        self._respond = respond
        self._tokens = (input_tokens, output_tokens)
        self._delay = delay_s
        self.prompts: list[JudgePrompt] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def ask(self, prompt: JudgePrompt) -> JudgeSample:
        self.prompts.append(prompt)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self._delay:
                await asyncio.sleep(self._delay)
            reply = self._respond(prompt) if self._respond else self._replies.pop(0)
        finally:
            self.in_flight -= 1
        if isinstance(reply, JudgeSample):
            return reply
        answer = {
            "premises": ["1. the issue asks for a fix"],
            "trace": f"scripted trace ({reply})",
            "conclusion": f"scripted: {reply}",
            "label": reply,
        }
        return read_answer(
            prompt.question, answer, input_tokens=self._tokens[0], output_tokens=self._tokens[1]
        )

    async def close(self) -> None:
        return None
