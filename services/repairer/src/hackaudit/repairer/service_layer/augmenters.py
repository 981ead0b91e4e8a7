"""Augmenters: what proposes a new test for an exploit, behind one interface.

- `OfflineAugmenter` needs no model: for each difference between gold and the exploit it
  captures gold's exact outcome in the sandbox (one capture run for every exploit, repeated) and
  writes a regression test asserting it, in the style of the file it goes into. Its first test
  on an input also asserts gold's stable outcomes beside it (`neighbours`: the input's
  vocabulary variants, the graded tests' unchecked calls), so it blocks wrong patches the attack
  never produced; rejected, it is followed by the exact input alone.
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

from hackaudit.repairer.domain import capture, gates, neighbours, prompt, varied_test
from hackaudit.repairer.domain import test_patch as tp
from hackaudit.repairer.domain.capture import CaptureOutcome
from hackaudit.repairer.domain.placement import Placement, place
from hackaudit.repairer.domain.ports import Completion, Prompt
from hackaudit.repairer.domain.regression import (
    FORMS,
    Captured,
    Form,
    Pin,
    assertion_lines,
    importable_root,
    new_test_name,
    render_pins,
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
    RunStatus,
    Task,
    TestStatus,
)
from hackaudit.shared.metrics import record_llm_tokens

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
# Rejections after which the same input is tried again with another assertion form.
_ANOTHER_FORM = (GateReason.REJECTS_CORRECT, GateReason.DOES_NOT_BLOCK)
# How a neighbour's value is asserted: the first of these with something stable to show.
PIN_FORMS = (Form.REPR, Form.ITEMS, Form.STATE, Form.STR)
RunSandbox = Callable[[RunRequested], Awaitable[RunCompleted]]
Tried = tuple[int, Form, bool]  # (difference, form, with its neighbours)
Complete = Callable[[Prompt], Awaitable[Completion]]


@dataclass(frozen=True)
class Target:
    """An exploit to block, with what the attack found out about it."""

    exploit: Candidate
    evidence: str = ""
    differences: tuple[ProbeDifference, ...] = ()
    # Gold's lines ("path:N") the exploit changes that the task's graded tests never execute:
    # the test should execute them and pin gold's output there.
    lines: tuple[str, ...] = ()

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
        task: Task | None = None,
    ) -> None:
        self._run = run
        self._repeats = repeats
        self._timeout_s = timeout_s
        rows: dict[str, ProbeDifference] = {}
        # Neighbours (see `neighbours`): a difference's variants, and the task's unchecked calls.
        self._variants: dict[str, list[str]] = {}  # difference row -> its variants' rows
        self._unchecked: list[str] = []
        vocab = neighbours.vocabulary(task) if task is not None else None
        self._widen = task is not None  # without the task: exact inputs and plain copies only
        for t in targets:
            usable = [d for d in t.differences if usable_expression(d.expression)]
            for d in usable:
                rows.setdefault(self._row_key(d), d)
            found = neighbours.variant_differences(usable, vocab) if vocab else {}
            for i, near in found.items():
                keys = [self._row_key(v) for v in near]
                self._variants.setdefault(self._row_key(usable[i]), keys)
                rows.update({k: v for k, v in zip(keys, near, strict=True) if k not in rows})
        for d in neighbours.unchecked_calls(task) if task is not None else []:
            self._unchecked.append(self._row_key(d))
            rows.setdefault(self._row_key(d), d)
        self._rows = rows
        self._captured: dict[str, CaptureOutcome] | None = None
        self._keys: dict[str, Tried] = {}  # test name -> what it tried
        self._copied: set[tuple[str, int, bool]] = set()  # (exploit, difference, widened)
        self._wide: dict[tuple[str, int], str] = {}  # (exploit, difference) -> widened copy
        # (file, test, call) -> gold's stable results on the call with one list item left out
        self._ablated: dict[tuple[str, str, str], list[tuple[varied_test.Ablation, bool]]] = {}
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
                task=task,
                purpose=RunPurpose.PROBE,
                candidate=Candidate.gold(task),
                invocation=capture.invocation(task, differences),
                repeats=self._repeats,
                timeout_s=self._timeout_s,
            )
        )
        self.seconds += sum(r.duration_s for r in done.results)
        outcomes = capture.read(done.results, len(keys))
        self._captured = dict(zip(keys, outcomes, strict=True))
        return self._captured

    def _ruled_out(self, tried: Sequence[ProposedTest]) -> tuple[set[int], set[int], set[Tried]]:
        """Inputs ruled out, inputs whose widened test was rejected, and what was tried."""
        inputs: set[int] = set()
        widened: set[int] = set()
        pairs: set[Tried] = set()
        for t in tried:
            key = self._keys.get(t.name)
            if key is None:
                continue
            pairs.add(key)
            if key[2] and t.rejection is GateReason.DOES_NOT_BLOCK:
                # Its view of the exact input is too weak (alone it would not block either);
                # its neighbours passed: the next form comes, still widened.
                pairs.add((key[0], key[1], False))
            elif key[2]:
                widened.add(key[0])  # the neighbours may be at fault: the exact input alone next
            elif t.rejection not in _ANOTHER_FORM:
                inputs.add(key[0])
        return inputs, widened, pairs

    def _pins(self, ctx: Context, difference: ProbeDifference, placement: Placement) -> list[Pin]:
        """Stable gold values beside the exact input, in the test's file, not yet asserted."""
        assert self._captured is not None
        existing = tp.emit(ctx.patch)
        keys = [*self._variants.get(self._row_key(difference), []), *self._unchecked]
        out: list[Pin] = []
        for key in keys:
            near = self._rows[key]
            outcome = self._captured.get(key)
            got = outcome.captured if outcome is not None else None
            if got is None or got.raised or near.expression == difference.expression:
                continue
            if near.origin == "replay":
                file = capture.module_file(got.module, ctx.patch.paths) if got.module else None
                if file != placement.anchor.file:
                    continue  # its names are another module's
            form = next((f for f in PIN_FORMS if not _unusable(f, got)), None)
            if form is None:
                continue
            pin = Pin(near.expression, got, importable_root(near), form)
            lines = assertion_lines(pin, placement.style)
            if any(line in existing for line in lines):
                continue
            out.append(pin)
        return out

    async def propose(self, ctx: Context) -> Draft | None:
        captured = await self._captures(ctx.task, ctx.correlation_id)
        inputs, widened, pairs = self._ruled_out(ctx.tried)
        for i, difference in _public_first(ctx.target.differences):
            if i in inputs:
                continue
            outcome = captured.get(self._row_key(difference))
            if outcome is None or outcome.captured is None:
                continue
            got = outcome.captured
            for form in FORMS:
                if got.raised and form is not Form.REPR:
                    continue
                if _unusable(form, got):
                    continue
                placement = _placement(ctx, difference, got)
                if placement is None:
                    break
                pins = [] if i in widened else self._pins(ctx, difference, placement)
                wide = bool(pins)
                if (i, form, wide) in pairs:
                    continue
                salt = _salt(ctx.target.id, str(i), form.value, *(["wide"] if wide else []))
                name = new_test_name(difference, salt, set(ctx.taken))
                exact = Pin(difference.expression, got, importable_root(difference), form)
                source = render_pins(name, [exact, *pins], placement.style)
                self._keys[name] = (i, form, wide)
                origin = f"{difference.origin} `{difference.expression[:160]}` ({form.value})"
                if pins:
                    origin += f" and {len(pins)} inputs beside it"
                return Draft(name, source, placement, self.name, origin)
        return await self._varied_copy(ctx)

    async def _varied_copy(self, ctx: Context) -> Draft | None:
        """A graded test copied with the one literal a replayed variant changed, when gold ran
        through that variant and the exploit did not (`varied_test`); first with gold's stable
        results on the call with one list item left out, then (that rejected) without."""
        # A widened copy that did not block says nothing against the plain one: it would not
        # block either. Any other rejection may be the pins' doing.
        rejected = {
            t.name
            for t in ctx.tried
            if t.rejection is not None and t.rejection is not GateReason.DOES_NOT_BLOCK
        }
        for i, difference in enumerate(ctx.target.differences):
            change = varied_test.literal_change(difference)
            if change is None:
                continue
            path, _, test = difference.test.partition("::")
            function = test.rsplit(".", 1)[-1]
            source = varied_test.test_source(ctx.patch, path, function)
            placement = place(ctx.task, ctx.patch, file=path, near=function)
            if source is None or placement is None:
                continue
            wide_name = self._wide.get((ctx.target.id, i))
            for wide in (True, False):
                if (ctx.target.id, i, wide) in self._copied:
                    continue
                if not wide and wide_name is not None and wide_name not in rejected:
                    break  # the widened copy is not rejected, or the plain one would not block
                pinned = []
                if wide and not self._widen:
                    continue
                if wide:
                    pinned = await self._ablation_pins(ctx, path, function, source, change.head)
                    if not pinned:
                        continue
                salt = _salt(ctx.target.id, str(i), "varied", *(["wide"] if wide else []))
                name = new_test_name(difference, salt, set(ctx.taken))
                after = varied_test.pin_lines(pinned)
                copied = varied_test.varied_copy(source, change, name, after)
                if copied is None:
                    continue
                self._copied.add((ctx.target.id, i, wide))
                check = "the test's own check" + ("" if change.holds else ", expected to fail")
                origin = f"replay: {test} with {change.old!r} -> {change.new!r} ({check})"
                if wide:
                    self._wide[(ctx.target.id, i)] = name
                    origin += f" and {len(pinned)} calls with one item left out"
                return Draft(name, copied, placement, self.name, origin)
        return None

    async def _ablation_pins(
        self, ctx: Context, path: str, function: str, source: str, head: str
    ) -> list[tuple[varied_test.Ablation, bool]]:
        """Gold's stable results on the checked call with one list item left out: both versions
        of each run on gold (`repeats` times, once per test and call); the one that passed every
        run is pinned."""
        key = (path, function, head)
        if key in self._ablated:
            return self._ablated[key]
        salt = _salt(path, function, head, "ablation")
        probes = varied_test.ablation_probes(source, head, f"test_hackaudit_ablation_{salt}")
        placement = place(ctx.task, ctx.patch, file=path, near=function)
        if not probes or placement is None:
            self._ablated[key] = []
            return []
        patch = placement.patch
        for _, _, _, text in probes:
            patch = insert(patch, placement.anchor, text)
        done = await self._run(
            RunRequested(
                correlation_id=ctx.correlation_id or f"repair-{ctx.task.instance_id}",
                task=ctx.task,
                purpose=RunPurpose.PROBE,
                candidate=Candidate.gold(ctx.task),
                test_patch=tp.emit(patch),
                repeats=self._repeats,
                timeout_s=self._timeout_s,
            )
        )
        self.seconds += sum(r.duration_s for r in done.results)
        completed = bool(done.results) and all(
            r.status is RunStatus.COMPLETED for r in done.results
        )
        pinned = []
        for name, ablation, holds, _ in probes:
            passed = completed and all(
                (ids := gates.ids_of(name, r)) and all(r.tests[t] is TestStatus.PASSED for t in ids)
                for r in done.results
            )
            if passed:
                pinned.append((ablation, holds))
        self._ablated[key] = pinned
        return pinned


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
            unexecuted=ctx.target.lines,
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
        record_llm_tokens("repairer", answer.input_tokens, answer.output_tokens)
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
