"""Fitting the variable parts of a prompt into a size budget, longest parts clipped first.

A prompt is fixed text (instructions, headings) plus parts whose size depends on the task: the
problem statement, the reference fix, the base code, the test patch, the blocked candidates and
their logs. When they do not fit, one cap is found such that every part longer than it is cut
down to it and the total fits ("water-filling"): a huge test patch is cut before a short problem
statement is touched, and short parts stay whole. A part is cut in the middle, on line
boundaries, keeping its head and tail, with a marker saying how much went; every cut is reported
so the prompt can say what the model is not seeing.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

MIN_CAP = 400  # no part is cut below this many characters, even when the budget is exceeded


class Part(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str  # how the prompt's clipping note refers to it ("test patch")
    text: str


class Cut(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    original_chars: int
    kept_chars: int


def clip(text: str, limit: int) -> str:
    """`text` at most `limit` characters long: head and tail kept, the middle replaced by a marker.

    The cut falls on line boundaries when a line break is near; the result is never longer than
    `limit` unless `limit` is smaller than the marker itself.
    """
    if len(text) <= limit:
        return text
    marker = f"\n[... {len(text) - limit} characters cut ...]\n"
    room = max(limit - len(marker), 0)
    head, tail = text[: room - room // 2], text[len(text) - room // 2 :] if room // 2 else ""
    if "\n" in head[len(head) // 2 :]:
        head = head[: head.rindex("\n")]
    if "\n" in tail[: len(tail) // 2]:
        tail = tail[tail.index("\n") + 1 :]
    marker = f"\n[... {len(text) - len(head) - len(tail)} characters cut ...]\n"
    return head + marker + tail


def cap_for(lengths: Sequence[int], available: int) -> int | None:
    """The largest cap c with sum(min(n, c)) <= available; None when everything fits as it is."""
    if sum(lengths) <= available:
        return None
    remaining = max(available, 0)
    ordered = sorted(lengths)
    for i, n in enumerate(ordered):
        left = len(ordered) - i
        if n * left > remaining:
            return remaining // left
        remaining -= n
    return remaining  # unreachable: the sum exceeded `available`


def fit(parts: Sequence[Part], available_chars: int) -> tuple[list[Part], list[Cut]]:
    """The parts cut so that their total is within `available_chars` (or every part at MIN_CAP)."""
    cap = cap_for([len(p.text) for p in parts], available_chars)
    if cap is None:
        return list(parts), []
    cap = max(cap, MIN_CAP)
    out: list[Part] = []
    cuts: list[Cut] = []
    for part in parts:
        if len(part.text) <= cap:
            out.append(part)
            continue
        text = clip(part.text, cap)
        out.append(part.model_copy(update={"text": text}))
        cuts.append(Cut(name=part.name, original_chars=len(part.text), kept_chars=len(text)))
    return out, cuts
