"""The judge's ports: the model backend and the answer cache, each a small Protocol."""

from __future__ import annotations

from typing import Protocol

from hackaudit.judge.domain.prompts import JudgePrompt
from hackaudit.shared.contracts import JudgeSample


class JudgeModel(Protocol):
    """One sample of one prompt. Never raises for what a backend can answer: a rate limit, a
    timeout, a refusal or a malformed reply is a sample with that outcome recorded."""

    async def ask(self, prompt: JudgePrompt) -> JudgeSample: ...

    async def close(self) -> None: ...


class AnswerCache(Protocol):
    """Answered samples by the content hash of their prompt (`JudgePrompt.cache_key`);
    `hackaudit.shared.content_cache` implements it."""

    def get(self, key: str) -> JudgeSample | None: ...

    def put(self, key: str, sample: JudgeSample) -> None: ...
