"""One judge request, answered: every candidate asked `samples` times, voted, costed.

Samples come from the cache when the same prompt was answered before (free), are not asked when
the budget cannot hold their worst case (recorded as NOT_ASKED), and otherwise go to the model
under a concurrency bound shared by every request of this process. Whatever the backend does —
rate limits, timeouts, refusals, malformed or truncated replies — each sample ends with a
recorded outcome, and every request ends with a `JudgeCompleted`; a wall-clock guard around each
call makes sure no backend can hold an audit forever.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from hackaudit.judge.domain.answers import failed
from hackaudit.judge.domain.budget import Budget
from hackaudit.judge.domain.ports import AnswerCache, JudgeModel
from hackaudit.judge.domain.prompts import (
    JudgeParams,
    JudgePrompt,
    blocking_prompt,
    correctness_prompt,
)
from hackaudit.judge.domain.vote import verdict
from hackaudit.shared.contracts import (
    Candidate,
    JudgeCompleted,
    JudgeLabel,
    JudgeQuestion,
    JudgeRequested,
    JudgeSample,
    JudgeSampleOutcome,
    JudgeUsage,
    JudgeVerdict,
)
from hackaudit.shared.logs import get_logger

log = get_logger("hackaudit.judge")


@dataclass
class _Tally:
    calls: int = 0
    cache_hits: int = 0
    not_asked: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


@dataclass
class Judge:
    """The judge of one process: its backend (None: none configured), cache, budget, bounds."""

    model: JudgeModel | None
    cache: AnswerCache
    budget: Budget
    params: JudgeParams
    concurrency: int = 4
    # Hard wall-clock limit of one call, retries included (the backend's own timeouts come first).
    call_limit_s: float = 600.0
    no_backend: str = "no judge backend configured"
    _gate: asyncio.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self._gate = asyncio.Semaphore(self.concurrency)

    async def handle(self, request: JudgeRequested) -> JudgeCompleted:
        if self.model is None:
            return self._completed(request, (), _Tally(), left_out=self.no_backend)
        if request.question is JudgeQuestion.BLOCKING and request.test_patch is None:
            left = "a blocking question needs the proposed test patch"
            return self._completed(request, (), _Tally(), left_out=left)
        tally = _Tally()
        verdicts = await asyncio.gather(
            *(self._judge_one(request, c, tally) for c in _distinct(request.candidates))
        )
        asked = tally.calls + tally.cache_hits
        left_out = ""
        if asked == 0 and tally.not_asked:
            left_out = f"judge budget spent ({self.budget.limit_text}): nothing asked"
        done = self._completed(request, tuple(verdicts), tally, left_out=left_out)
        log.info(
            "judged",
            audit=request.correlation_id,
            task=request.task.instance_id,
            question=request.question.value,
            candidates=len(verdicts),
            abstained=sum(v.label is JudgeLabel.ABSTAIN for v in verdicts),
            calls=tally.calls,
            cache_hits=tally.cache_hits,
            not_asked=tally.not_asked,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            cost_usd=round(tally.cost_usd, 6),
        )
        return done

    def _prompt(self, request: JudgeRequested, candidate: Candidate) -> JudgePrompt:
        if request.question is JudgeQuestion.BLOCKING:
            return blocking_prompt(request.task, candidate, request.test_patch or "", self.params)
        return correctness_prompt(request.task, candidate, self.params)

    async def _judge_one(
        self, request: JudgeRequested, candidate: Candidate, tally: _Tally
    ) -> JudgeVerdict:
        prompt = self._prompt(request, candidate)
        samples = await asyncio.gather(
            *(self._sample(prompt, i, tally) for i in range(request.samples))
        )
        return verdict(candidate.candidate_id, list(samples), request.samples)

    async def _sample(self, prompt: JudgePrompt, index: int, tally: _Tally) -> JudgeSample:
        key = prompt.cache_key(index)
        hit = self.cache.get(key)
        if hit is not None:
            tally.cache_hits += 1
            return hit.model_copy(update={"cached": True})
        async with self._gate:  # reserved only once a call can start: queued ones hold nothing
            held = self.budget.reserve(prompt.size_chars, self.params.max_tokens)
            if held is None:
                tally.not_asked += 1
                spent = f"budget spent ({self.budget.limit_text})"
                return failed(JudgeSampleOutcome.NOT_ASKED, spent)
            assert self.model is not None
            try:
                sample = await asyncio.wait_for(self.model.ask(prompt), self.call_limit_s)
            except TimeoutError:
                sample = failed(
                    JudgeSampleOutcome.TIMEOUT, f"no answer within {self.call_limit_s:g}s"
                )
            except BaseException:  # a fault (or cancellation): release the hold, then raise
                self.budget.settle(held, 0, 0)
                raise
            tally.cost_usd += self.budget.settle(held, sample.input_tokens, sample.output_tokens)
        tally.calls += 1
        tally.input_tokens += sample.input_tokens
        tally.output_tokens += sample.output_tokens
        if sample.outcome is JudgeSampleOutcome.ANSWERED:
            self.cache.put(key, sample)
        return sample

    def _completed(
        self,
        request: JudgeRequested,
        verdicts: tuple[JudgeVerdict, ...],
        tally: _Tally,
        *,
        left_out: str,
    ) -> JudgeCompleted:
        usage = JudgeUsage(
            backend=self.params.backend if self.model is not None else "",
            model=self.params.model if self.model is not None else "",
            calls=tally.calls,
            cache_hits=tally.cache_hits,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            cost_usd=tally.cost_usd,
            priced=self.budget.prices.priced,
        )
        return request.answer(verdicts, left_out=left_out, usage=usage)


def _distinct(candidates: tuple[Candidate, ...]) -> list[Candidate]:
    seen: dict[str, Candidate] = {}
    for candidate in candidates:
        seen.setdefault(candidate.candidate_id, candidate)
    return list(seen.values())
