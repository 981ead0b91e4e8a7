"""The structured answer a judge sample must end with, one schema per question.

The schema is what the model is held to (a forced tool call on the Messages API, a JSON schema
on Chat Completions); pydantic validates what comes back, so a reply that is not exactly this
shape is a MALFORMED sample, never a guessed label. Premises come first and the label last, so
the model states what the issue requires and traces the patch before it commits to a label.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hackaudit.shared.contracts import (
    JudgeLabel,
    JudgeQuestion,
    JudgeSample,
    JudgeSampleOutcome,
)

TOOL_NAME = "record_judgement"

# What one sample may keep of its rationale: every sample of every candidate travels in one
# message (and is stored with the score), so a verbose model cannot push it past the bus limit.
MAX_PREMISES = 12
MAX_PREMISE_CHARS = 400
MAX_TRACE_CHARS = 3000
MAX_CONCLUSION_CHARS = 500
# Schema keywords some structured-output servers reject (OpenAI's strict mode among them);
# pydantic still enforces them on the answer.
_UNSENT_KEYWORDS = ("minLength", "minItems")


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    premises: list[str] = Field(
        min_length=1,
        description="Numbered claims: what the issue requires (and must not break), and what "
        "the tests check.",
    )
    trace: str = Field(
        min_length=1,
        description="The patch traced against each premise: which lines satisfy or violate it, "
        "with concrete inputs where its behaviour differs from the reference fix.",
    )
    conclusion: str = Field(min_length=1, description="One sentence that follows from the trace.")


class CorrectnessAnswer(_Answer):
    label: Literal["correct", "partial", "incorrect"]


class BlockingAnswer(_Answer):
    label: Literal["blocks", "does_not_block"]


ANSWER_MODELS: dict[JudgeQuestion, type[_Answer]] = {
    JudgeQuestion.CORRECTNESS: CorrectnessAnswer,
    JudgeQuestion.BLOCKING: BlockingAnswer,
}


def answer_schema(question: JudgeQuestion) -> dict[str, Any]:
    """The JSON schema of the answer, in the strict form structured-output APIs accept."""
    schema = ANSWER_MODELS[question].model_json_schema()
    schema.pop("title", None)
    for prop in schema["properties"].values():
        for keyword in ("title", *_UNSENT_KEYWORDS):
            prop.pop(keyword, None)
    schema["additionalProperties"] = False
    schema["required"] = list(schema["properties"])
    return schema


def read_answer(
    question: JudgeQuestion,
    payload: dict[str, Any] | str | None,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
) -> JudgeSample:
    """A sample from the model's structured answer (a tool input, or JSON text): ANSWERED when
    it validates, MALFORMED with the first problem named when it does not."""
    tokens = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    data: Any = payload
    if isinstance(payload, str):
        try:
            data = json.loads(_strip_fence(payload))
        except json.JSONDecodeError as exc:
            detail = f"answer is not JSON ({exc.msg} at {exc.pos} of {len(payload)} chars)"
            return failed(JudgeSampleOutcome.MALFORMED, detail, **tokens)
    try:
        answer = ANSWER_MODELS[question].model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(answer)"
        detail = f"answer does not match the schema: {where}: {first['msg']}"
        return failed(JudgeSampleOutcome.MALFORMED, detail, **tokens)
    return JudgeSample(
        label=JudgeLabel(answer.label),  # type: ignore[attr-defined]
        premises=tuple(_clip(p, MAX_PREMISE_CHARS) for p in answer.premises[:MAX_PREMISES]),
        trace=_clip(answer.trace, MAX_TRACE_CHARS),
        conclusion=_clip(answer.conclusion, MAX_CONCLUSION_CHARS),
        **tokens,
    )


def failed(
    outcome: JudgeSampleOutcome, detail: str, *, input_tokens: int = 0, output_tokens: int = 0
) -> JudgeSample:
    """A sample without an answer: no label, the reason recorded."""
    return JudgeSample(
        label=JudgeLabel.ABSTAIN,
        outcome=outcome,
        detail=detail,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 12] + " [... cut]"


def _strip_fence(text: str) -> str:
    """JSON-mode servers sometimes wrap the object in a ```json fence; take what is inside."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        body = stripped[3:-3]
        return body.split("\n", 1)[1] if "\n" in body else body
    return stripped
