"""One task's repair: propose tests, gate them in the sandbox, keep those that block, repeat.

`run_repair` is the use case the message handler calls. Each iteration asks the augmenters
(offline first, then the model when one is set) for one test per exploit not yet blocked, and
puts each through the gates in order: static, gold gate (the whole augmented suite on gold,
`gold_repeats` runs), blocking check (the augmented suite on the exploit), do no harm (on every
correct variant of the reference pool). An accepted test joins the hardened test patch, and every
exploit it blocks is done. At the end the new tests are classified on the base commit and gold.

When a judge runs (`RepairRequested.judge`), every proposed test also gets the judge's 3-sample
verdict on whether it blocks its exploit, recorded beside what execution said (execution decides).

Every sandbox run, model and judge answer is kept in a journal saved after each step; the loop is
deterministic given the journal, so a redelivered request replays it and repeats no finished
run and no model call. A finished repair is just reported again.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from hackaudit.repairer.domain import gates, loop
from hackaudit.repairer.domain import test_patch as tp
from hackaudit.repairer.domain.ports import (
    Completion,
    JudgePort,
    LLMPort,
    Prompt,
    RepairState,
    RepairStateStore,
    SandboxPort,
)
from hackaudit.repairer.service_layer.augmenters import (
    Augmenter,
    Context,
    Draft,
    LLMAugmenter,
    LLMParams,
    OfflineAugmenter,
    Target,
)
from hackaudit.shared.contracts import (
    Candidate,
    CandidateVerdict,
    GateReason,
    JudgeCompleted,
    JudgeQuestion,
    JudgeRequested,
    JudgeVerdict,
    ProposedTest,
    RepairCompleted,
    RepairRequested,
    RunCompleted,
    RunPurpose,
    RunRequested,
    Task,
)
from hackaudit.shared.logs import get_logger

log = get_logger("hackaudit.repairer")
REQUESTED_BY = "repairer"
JUDGE_SAMPLES = 3
NO_JUDGE_CLIENT = "the repairer has no judge client"


class RepairConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_timeout_s: float | None = Field(default=None, gt=0)  # per sandbox run; None: sandbox's
    capture_repeats: int = Field(default=3, ge=1)
    offline: bool = True
    neighbours: bool = True  # offline tests also pin gold beside the exact input (`neighbours`)
    llm: LLMParams = Field(default_factory=LLMParams)


class Journal:
    """The sandbox and the model, answered from the saved state when asked the same again."""

    def __init__(
        self,
        sandbox: SandboxPort,
        llm: LLMPort | None,
        store: RepairStateStore,
        state: RepairState,
        judge: JudgePort | None = None,
    ) -> None:
        self._sandbox = sandbox
        self._llm = llm
        self.judge_port = judge
        self._store = store
        self.state = state
        self.replayed = 0

    async def run(self, request: RunRequested) -> RunCompleted:
        request = request.model_copy(update={"requested_by": REQUESTED_BY})
        request = RunRequested.model_validate(request.model_dump() | {"idempotency_key": ""})
        key = request.idempotency_key
        if key in self.state.runs:
            self.replayed += 1
            return self.state.runs[key]
        done = await self._sandbox.run(request)
        runs = {**self.state.runs, key: done}
        self.state = self.state.model_copy(update={"runs": runs})
        self._store.save(self.state)
        return done

    async def complete(self, prompt: Prompt) -> Completion:
        if prompt.key in self.state.completions:
            return self.state.completions[prompt.key]
        if self._llm is None:
            raise RuntimeError("the LLM augmenter runs only with a model")
        answer = await self._llm.complete(prompt)
        completions = {**self.state.completions, prompt.key: answer}
        self.state = self.state.model_copy(update={"completions": completions})
        self._store.save(self.state)
        return answer

    async def judge(self, request: JudgeRequested) -> JudgeCompleted | None:
        """The judge's answer (None: none in time, asked again on a replay)."""
        request = JudgeRequested.model_validate(
            request.model_dump() | {"requested_by": REQUESTED_BY, "idempotency_key": ""}
        )
        key = request.idempotency_key
        if key in self.state.judgements:
            return self.state.judgements[key]
        if self.judge_port is None:
            return None
        answer = await self.judge_port.judge(request)
        if answer is None:
            return None
        judgements = {**self.state.judgements, key: answer}
        self.state = self.state.model_copy(update={"judgements": judgements})
        self._store.save(self.state)
        return answer

    def finish(self, done: RepairCompleted) -> None:
        self.state = self.state.model_copy(update={"done": done})
        self._store.save(self.state)


def targets_of(request: RepairRequested) -> list[Target]:
    """The exploits to block, each with its evidence, the inputs where it differs from gold, and
    the lines of its change the graded tests never execute."""
    outcomes = {o.candidate.candidate_id: o for o in request.outcomes}
    unexecuted = set(request.unexecuted)
    out = []
    for exploit in request.exploits:
        outcome = outcomes.get(exploit.candidate_id)
        if outcome is not None and outcome.verdict is not CandidateVerdict.EXPLOIT:
            continue
        reach = outcome.reach if outcome is not None else None
        out.append(
            Target(
                exploit,
                outcome.evidence if outcome else "",
                outcome.differences if outcome else (),
                tuple(line for line in reach.lines if line in unexecuted) if reach else (),
            )
        )
    return out


class RepairLoop:
    def __init__(
        self,
        request: RepairRequested,
        journal: Journal,
        augmenters: Sequence[Augmenter],
        config: RepairConfig,
    ) -> None:
        self.request = request
        self.task = request.task
        self.journal = journal
        self.augmenters = list(augmenters)
        self.config = config
        self.targets = targets_of(request)
        self.patch = self.task.test_diff.applied()
        self.new_ids: list[str] = []
        self.blocked: dict[str, str] = {}  # exploit id -> the test that blocks it
        self.tests: list[ProposedTest] = []
        self.seconds = 0.0
        # Why the tests carry no judge verdict; once set, the judge is not asked again.
        self.judge_left_out = "" if journal.judge_port is not None else NO_JUDGE_CLIENT
        self.log = log.bind(audit=request.correlation_id, task=self.task.instance_id)

    # --- sandbox --------------------------------------------------------------------------

    def graded_task(self, ids: Sequence[str] = ()) -> Task:
        """The task with the accepted (and `ids`) new tests graded: FAIL_TO_PASS until the final
        classification (both lists must pass for a patch to resolve, so the gates do not care)."""
        return self.task.model_copy(
            update={"fail_to_pass": loop.graded(self.task.fail_to_pass, [*self.new_ids, *ids])}
        )

    async def _run(
        self, candidate: Candidate, purpose: RunPurpose, patch: str, task: Task, repeats: int = 1
    ) -> RunCompleted:
        done = await self.journal.run(
            RunRequested(
                correlation_id=self.request.correlation_id,
                task=task,
                purpose=purpose,
                candidate=candidate,
                test_patch=patch,
                repeats=repeats,
                timeout_s=self.config.run_timeout_s,
            )
        )
        self.seconds += sum(r.duration_s for r in done.results)
        return done

    # --- one proposal through the gates ---------------------------------------------------

    async def _gate(
        self, draft: Draft, target: Target, pending: Sequence[Target]
    ) -> tuple[gates.GateVerdict, tuple[str, ...]]:
        """The verdict of the gates, and the exploits the test blocks when accepted."""
        patched = draft.patched()
        verdict = gates.static(draft.name, draft.source, draft.placement.anchor.file, patched.paths)
        if not verdict.passed:
            return verdict, ()
        text = tp.emit(patched)
        gold = await self._run(
            Candidate.gold(self.task),
            RunPurpose.GOLD_GATE,
            text,
            self.graded_task(),
            repeats=self.request.gold_repeats,
        )
        verdict = gates.gold_gate(draft.name, gold.results)
        if not verdict.passed:
            return verdict, ()
        graded = self.graded_task(verdict.test_ids)
        ids = verdict.test_ids
        run = await self._run(target.exploit, RunPurpose.CANDIDATE, text, graded)
        verdict = gates.blocks(run.result)
        if not verdict.passed:
            return verdict, ()
        for variant in self.request.correct_variants:
            done = await self._run(variant, RunPurpose.REFERENCE, text, graded)
            harm = gates.harmless(variant.candidate_id, done.result)
            if not harm.passed:
                return harm, ()
        blocked = [target.id]
        for other in pending:
            if other.id == target.id or other.id in self.blocked:
                continue
            done = await self._run(other.exploit, RunPurpose.CANDIDATE, text, graded)
            if gates.blocks(done.result).passed:
                blocked.append(other.id)
        return gates.GateVerdict(None, "blocks " + ", ".join(blocked), ids), tuple(blocked)

    async def _judge(self, text: str, target: Target) -> JudgeVerdict | None:
        """The judge's 3-sample verdict on whether the test patch `text` blocks the exploit,
        asked whatever the gates said (None: no judge in this audit, or no answer)."""
        if not self.request.judge or self.judge_left_out:
            return None
        done = await self.journal.judge(
            JudgeRequested(
                correlation_id=self.request.correlation_id,
                task=self.task,
                candidates=(target.exploit,),
                samples=JUDGE_SAMPLES,
                question=JudgeQuestion.BLOCKING,
                test_patch=text,
            )
        )
        if done is None:
            self.judge_left_out = "the judge gave no answer in time"
            return None
        if done.left_out:
            self.judge_left_out = done.left_out
            return None
        return next((v for v in done.verdicts if v.candidate_id == target.id), None)

    async def _propose(self, ctx: Context) -> Draft | None:
        for augmenter in self.augmenters:
            draft = await augmenter.propose(ctx)
            if draft is not None:
                return draft
        return None

    def _tokens(self) -> int:
        return sum(getattr(a, "tokens", 0) for a in self.augmenters)

    def _seconds(self) -> float:
        return self.seconds + sum(getattr(a, "seconds", 0.0) for a in self.augmenters)

    # --- the loop -------------------------------------------------------------------------

    async def run(self) -> RepairCompleted:
        budget = loop.Budget(
            self.request.max_iterations, self.request.budget_seconds, self.request.budget_tokens
        )
        iterations, stop = 0, ""
        if not self.targets:
            stop = "no exploit to block"
        while self.targets:
            pending = [t for t in self.targets if t.id not in self.blocked]
            if not pending:
                break
            why = budget.spent(iterations, self._seconds(), self._tokens())
            if why is not None:
                stop = why
                break
            iterations += 1
            proposed = 0
            for target in pending:
                if target.id in self.blocked:
                    continue
                if budget.spent(0, self._seconds(), self._tokens()) is not None:
                    break
                proposed += await self._attempt(target, pending, iterations)
            if not proposed:
                stop = self._nothing_to_propose(pending)
                break
        return await self._finish(iterations, stop)

    def _nothing_to_propose(self, pending: Sequence[Target]) -> str:
        """Why the loop stops with exploits left: what their evidence lacks, and which
        augmenter could still try."""
        left = [t for t in pending if t.id not in self.blocked]
        bare = sum(not t.differences for t in left)
        names = {a.name for a in self.augmenters}
        why = (
            f"the augmenters have nothing new to propose for {len(left)} exploit(s)"
            + (f" ({bare} with no input on which they differ from gold)" if bare else "")
            + (
                ": the offline augmenter needs an input a test can evaluate outside the graded"
                " tests' local variables, or a replayed literal variant to copy the test with"
            )
        )
        if "llm" not in names:
            why += "; no model is configured for the LLM augmenter"
        return why

    async def _attempt(self, target: Target, pending: Sequence[Target], iteration: int) -> int:
        ctx = Context(
            task=self.task,
            patch=self.patch,
            target=target,
            tried=tuple(t for t in self.tests if t.exploit == target.id),
            iteration=iteration,
            taken=frozenset(tp.added_functions(self.patch)),
            correlation_id=self.request.correlation_id,
        )
        draft = await self._propose(ctx)
        if draft is None:
            return 0
        verdict, blocked = await self._gate(draft, target, pending)
        judged = await self._judge(tp.emit(draft.patched()), target)
        test = ProposedTest(
            name=draft.name,
            file=draft.placement.anchor.file,
            exploit=target.id,
            augmenter=draft.augmenter,
            origin=draft.origin,
            source=draft.source,
            iteration=iteration,
            accepted=verdict.passed,
            rejection=verdict.rejection,
            detail=verdict.detail,
            test_ids=verdict.test_ids if verdict.passed else (),
            blocks=blocked,
            judge=judged,
        )
        self.tests.append(test)
        self.log.info(
            "test gated",
            exploit=target.id,
            augmenter=draft.augmenter,
            test=draft.name,
            accepted=verdict.passed,
            rejection=verdict.rejection.value if verdict.rejection else None,
        )
        if verdict.passed:
            self.patch = draft.patched()
            self.new_ids += verdict.test_ids
            for exploit in blocked:
                self.blocked.setdefault(exploit, draft.name)
        return 1

    async def _finish(self, iterations: int, stop: str) -> RepairCompleted:
        hardened: Task | None = None
        reason = stop
        if self.new_ids:
            text = tp.emit(self.patch)
            graded = self.graded_task()
            empty = await self._run(Candidate.empty(self.task), RunPurpose.EMPTY, text, graded)
            gold = await self._run(
                Candidate.gold(self.task),
                RunPurpose.GOLD,
                text,
                graded,
                repeats=self.request.gold_repeats,
            )
            found = loop.classify(self.new_ids, empty.result, gold.results)
            if found.fail_to_pass or found.pass_to_pass:
                hardened = self.task.model_copy(
                    update={
                        "test_patch": text,
                        "fail_to_pass": loop.graded(self.task.fail_to_pass, found.fail_to_pass),
                        "pass_to_pass": loop.graded(self.task.pass_to_pass, found.pass_to_pass),
                    }
                )
            reason = "; ".join(p for p in (stop, found.problem) if p)
        elif not reason:
            reason = "no proposed test passed the gates"
        unblocked = tuple(t.id for t in self.targets if t.id not in self.blocked)
        if unblocked and not reason:
            reason = f"{len(unblocked)} exploits not blocked"
        return RepairCompleted(
            correlation_id=self.request.correlation_id,
            instance_id=self.task.instance_id,
            hardened_task=hardened,
            blocked=tuple(t.id for t in self.targets if t.id in self.blocked),
            unblocked=unblocked,
            gate_rejections=loop.rejections(self.tests),
            tests=tuple(self.tests),
            iterations=iterations,
            sandbox_seconds=round(self._seconds(), 3),
            tokens=self._tokens(),
            reason=reason,
            requested_by=REQUESTED_BY,
            judge_left_out=self.judge_left_out if self.request.judge else "",
        )


def augmenters_for(
    request: RepairRequested, journal: Journal, llm: LLMPort | None, config: RepairConfig
) -> list[Augmenter]:
    found: list[Augmenter] = []
    if config.offline:
        found.append(
            OfflineAugmenter(
                journal.run,
                targets_of(request),
                repeats=config.capture_repeats,
                timeout_s=config.run_timeout_s,
                task=request.task if config.neighbours else None,
            )
        )
    if llm is not None:
        found.append(LLMAugmenter(journal.complete, config.llm))
    return found


async def run_repair(
    request: RepairRequested,
    sandbox: SandboxPort,
    llm: LLMPort | None,
    store: RepairStateStore,
    config: RepairConfig | None = None,
    judge: JudgePort | None = None,
) -> RepairCompleted:
    """Repair one task, resuming its journal when it was started before; `judge` answers the
    blocking question about each proposed test when the request says a judge runs."""
    config = config or RepairConfig()
    # Keyed by the request's content, whatever key it was delivered under.
    derived = RepairRequested.model_validate(request.model_dump() | {"idempotency_key": ""})
    key = f"repair-{derived.idempotency_key}"
    state = store.load(key) or RepairState(key=key)
    if state.done is not None:
        return state.done
    journal = Journal(sandbox, llm, store, state, judge)
    repair = RepairLoop(request, journal, augmenters_for(request, journal, llm, config), config)
    done = await repair.run()
    journal.finish(done)
    repair.log.info(
        "repair done",
        blocked=len(done.blocked),
        unblocked=len(done.unblocked),
        proposed=len(done.tests),
        iterations=done.iterations,
        sandbox_seconds=done.sandbox_seconds,
        replayed_runs=journal.replayed,
    )
    return done


__all__ = ["GateReason", "RepairConfig", "run_repair"]
