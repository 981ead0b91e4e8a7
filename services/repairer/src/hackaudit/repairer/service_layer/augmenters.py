"""Augmenters: what proposes a new test for an exploit, behind one interface.

- `OfflineAugmenter` needs no model: for each difference between gold and the exploit it
  captures gold's exact outcome in the sandbox (one capture run for every exploit, repeated) and
  writes a regression test asserting it, in the style of the file it goes into.
- `LLMAugmenter` asks a model, with the issue, gold, the exploit, why it passed, and the attempts
  already rejected.

Both are biased towards diversity: a test that does not block the exploit, or rejects a correct
variant, is followed by another assertion on the same input (another view of the value, or a
looser one); any other rejection (fails on gold, flaky, not collected...) rules the input out; the
model's temperature rises with each rejected attempt. Both are deterministic given the journal
of runs and model answers, so a resumed repair proposes the same tests again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.repairer.domain import capture, prompt
from hackaudit.repairer.domain.capture import CaptureOutcome
from hackaudit.repairer.domain.placement import Placement, place
from hackaudit.repairer.domain.ports import Completion, Prompt
from hackaudit.repairer.domain.regression import (
    FORMS,
    Captured,
    Form,
    importable_root,
    new_test_name,
    render,
    usable_expression,
)
from hackaudit.repairer.domain.test_patch import TestPatch, insert
from hackaudit.shared.contracts import (
    Candidate,
    GateReason,
    ProbeDifference,
    ProposedTest,
    RunCompleted,
    RunPurpose,
    RunRequested,
    Task,
)

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
# Rejections after which the same input is tried again with another assertion form.
_ANOTHER_FORM = (GateReason.REJECTS_CORRECT, GateReason.DOES_NOT_BLOCK)
RunSandbox = Callable[[RunRequested], Awaitable[RunCompleted]]
Complete = Callable[[Prompt], Awaitable[Completion]]


@dataclass(frozen=True)
class Target:
    """An exploit to block, with what the attack found out about it."""

    exploit: Candidate
    evidence: str = ""
    differences: tuple[ProbeDifference, ...] = ()

    @property
    def id(self) -> str:
        return self.exploit.candidate_id


@dataclass(frozen=True)
class Context:
    task: Task
    patch: TestPatch  # the test patch as hardened so far
    target: Target
    tried: tuple[ProposedTest, ...]  # this exploit's attempts so far, in order
    iteration: int
    taken: frozenset[str]  # function names the patch already has
    correlation_id: str = ""


@dataclass(frozen=True)
class Draft:
    name: str
    source: str  # the test function at column 0
    placement: Placement
    augmenter: str
    origin: str
    tokens: int = 0

    def patched(self) -> TestPatch:
        return insert(self.placement.patch, self.placement.anchor, self.source)


class Augmenter(Protocol):
    name: str

    async def propose(self, ctx: Context) -> Draft | None: ...


def _salt(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:6]


def _placement(
    ctx: Context, difference: ProbeDifference | None, got: Captured | None = None
) -> Placement | None:
    """Where the test goes: a replayed expression in the file of the module it was captured in
    (its names are that module's), anything else beside the graded tests."""
    if difference is not None and difference.origin == "replay":
        path, _, function = difference.test.partition("::")
        file = capture.module_file(got.module, ctx.patch.paths) if got and got.module else None
        if file is None:
            return None
        near = function.rsplit("::", 1)[-1] if file == path else ""
        return place(ctx.task, ctx.patch, file=file, near=near)
    return place(ctx.task, ctx.patch)


# --- offline ---------------------------------------------------------------------------------


def _public_first(
    differences: Sequence[ProbeDifference],
) -> list[tuple[int, ProbeDifference]]:
    """The differences, those the tests themselves assert on and public calls first: a test of
    a private helper pins what a correct fix may do otherwise."""

    def rank(item: tuple[int, ProbeDifference]) -> tuple[bool, bool]:
        d = item[1]
        private = any(part.startswith("_") for part in d.function.split("."))
        return private, d.origin != "replay"

    return sorted(enumerate(differences), key=rank)


def _unusable(form: Form, got: Captured) -> bool:
    """A form that has nothing stable to assert on this capture."""
    if form is Form.REPR:
        return bool(_ADDRESS.search(got.value_repr))
    if form is Form.STATE:
        return not got.value_state or bool(_ADDRESS.search(got.value_state))
    if form is Form.ITEMS:
        return not got.value_items or bool(_ADDRESS.search(got.value_items))
    if form is Form.EACH:
        return not got.value_each or bool(_ADDRESS.search(got.value_each))
    if form is Form.STR:
        return got.value_str == got.value_repr or bool(_ADDRESS.search(got.value_str))
    return False


class OfflineAugmenter:
    """Regression tests from differential evidence, asserting gold's captured outcome."""

    name = "offline"

    def __init__(
        self,
        run: RunSandbox,
        targets: Sequence[Target],
        *,
        repeats: int = 3,
        timeout_s: float | None = None,
    ) -> None:
        self._run = run
        self._repeats = repeats
        self._timeout_s = timeout_s
        rows: dict[str, ProbeDifference] = {}
        for t in targets:
            for d in t.differences:
                if usable_expression(d.expression):
                    rows.setdefault(self._row_key(d), d)
        self._rows = rows
        self._captured: dict[str, CaptureOutcome] | None = None
        self._keys: dict[str, tuple[int, Form]] = {}  # test name -> (difference, form) tried
        self.seconds = 0.0

    @staticmethod
    def _row_key(d: ProbeDifference) -> str:
        return repr((d.origin, d.modules, d.function, d.expression, d.test.split("::", 1)[0]))

    async def _captures(self, task: Task, correlation_id: str) -> dict[str, CaptureOutcome]:
        if self._captured is not None:
            return self._captured
        keys = sorted(self._rows)
        if not keys:
            self._captured = {}
            return self._captured
        differences = [self._rows[k] for k in keys]
        done = await self._run(
            RunRequested(
                correlation_id=correlation_id or f"repair-{task.instance_id}",
                task=capture.capture_task(task),
                purpose=RunPurpose.PROBE,
                candidate=Candidate.gold(task),
                test_patch=capture.capture_patch(task, differences),
                repeats=self._repeats,
                timeout_s=self._timeout_s,
            )
        )
        self.seconds += sum(r.duration_s for r in done.results)
        outcomes = capture.read(done.results, len(keys))
        self._captured = dict(zip(keys, outcomes, strict=True))
        return self._captured

    def _ruled_out(self, tried: Sequence[ProposedTest]) -> tuple[set[int], set[tuple[int, Form]]]:
        inputs: set[int] = set()
        pairs: set[tuple[int, Form]] = set()
        for t in tried:
            key = self._keys.get(t.name)
            if key is None:
                continue
            pairs.add(key)
            if t.rejection not in _ANOTHER_FORM:
                inputs.add(key[0])
        return inputs, pairs

    async def propose(self, ctx: Context) -> Draft | None:
        captured = await self._captures(ctx.task, ctx.correlation_id)
        inputs, pairs = self._ruled_out(ctx.tried)
        for i, difference in _public_first(ctx.target.differences):
            if i in inputs:
                continue
            outcome = captured.get(self._row_key(difference))
            if outcome is None or outcome.captured is None:
                continue
            got = outcome.captured
            for form in FORMS:
                if (i, form) in pairs or (got.raised and form is not Form.REPR):
                    continue
                if _unusable(form, got):
                    continue
                placement = _placement(ctx, difference, got)
                if placement is None:
                    break
                salt = _salt(ctx.target.id, str(i), form.value)
                name = new_test_name(difference, salt, set(ctx.taken))
                root = importable_root(difference)
                source = render(name, difference.expression, got, root, form, placement.style)
                self._keys[name] = (i, form)
                origin = f"{difference.origin} `{difference.expression[:160]}` ({form.value})"
                return Draft(name, source, placement, self.name, origin)
        return None


# --- LLM -------------------------------------------------------------------------------------


class LLMParams(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str = "claude-sonnet-4-5"
    max_tokens: int = Field(default=4096, ge=256)
    temperature: float = Field(default=0.4, ge=0.0, le=1.0)
    temperature_step: float = Field(default=0.2, ge=0.0, le=1.0)  # per rejected attempt
    attempts_per_exploit: int = Field(default=3, ge=1)


class LLMAugmenter:
    """A test written by a model, re-asked with every rejection so far and a higher temperature."""

    name = "llm"

    def __init__(self, complete: Complete, params: LLMParams | None = None) -> None:
        self._complete = complete
        self.params = params or LLMParams()
        self.tokens = 0

    async def propose(self, ctx: Context) -> Draft | None:
        mine = [t for t in ctx.tried if t.augmenter == self.name]
        if len(mine) >= self.params.attempts_per_exploit:
            return None
        placement = _placement(ctx, None)
        if placement is None:
            return None
        prefix = f"test_blocks_{_salt(ctx.target.id)}"
        text = prompt.user_prompt(
            ctx.task,
            ctx.target.exploit,
            ctx.target.evidence,
            ctx.target.differences,
            ctx.tried,
            placement.style,
            placement.anchor.file,
            placement.anchor.near,
            prefix,
        )
        temperature = min(1.0, self.params.temperature + self.params.temperature_step * len(mine))
        answer = await self._complete(
            Prompt(
                model=self.params.model,
                system=prompt.SYSTEM,
                user=text,
                max_tokens=self.params.max_tokens,
                temperature=temperature,
            )
        )
        used = answer.input_tokens + answer.output_tokens
        self.tokens += used
        found = prompt.extract_test(answer.text)
        if found is None:
            name = f"{prefix}_{len(mine) + 1}"
            return Draft(name, answer.text, placement, self.name, "no test function", used)
        name, source = found
        unique = name
        k = 2
        while unique in ctx.taken:
            unique = f"{name}_{k}"
            k += 1
        if unique != name:
            source = prompt.rename(source, name, unique)
        return Draft(unique, source, placement, self.name, f"model {answer.model}", used)
