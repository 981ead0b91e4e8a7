"""The repairer's `LLMPort` on Anthropic's Messages API, and `ScriptedLLM`, its fake.

The client, its retries (429 / 5xx, honouring `retry-after`) and its faults (`LLMUnavailableError`)
are the shared adapter's, `hackaudit.shared.llm_client`; only the reply type is the repairer's.
"""

from __future__ import annotations

from hackaudit.repairer.domain.ports import Completion, LLMUnavailableError, Prompt
from hackaudit.shared.llm_client import AnthropicText


class AnthropicLLM(AnthropicText[Completion]):
    """`AnthropicLLM(api_key, base_url=..., max_retries=4, timeout_s=300.0)`."""

    reply_type = Completion
    logger_name = "hackaudit.repairer.llm"


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
