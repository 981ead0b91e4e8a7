"""The model behind `LLMPort` on any OpenAI-compatible endpoint: Chat Completions via the SDK.

OpenAI itself, and the many servers that speak its Chat Completions API (vLLM, llama.cpp's
server, Ollama, LiteLLM and other gateways), are reached through the shared SDK adapter
(`hackaudit.shared.llm_client`), which behaves like the Anthropic one: 429 / 5xx retried by the
SDK honouring `retry-after`, what still fails an `LLMUnavailableError`, usage missing counted as
zero tokens. A reply that carries no text is an empty completion, which the strategy turns into
an INVALID candidate.
"""

from __future__ import annotations

from hackaudit.attacker.domain.ports import Completion
from hackaudit.shared.llm_client import OpenAIChatText


class OpenAIChatLLM(OpenAIChatText[Completion]):
    """`OpenAIChatLLM(api_key, base_url=..., max_retries=4, timeout_s=300.0,
    output_limit_param="max_tokens")`."""

    reply_type = Completion
    logger_name = "hackaudit.attacker.llm"
