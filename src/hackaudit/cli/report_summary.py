"""The audit's figures, counted once: every file of a report (report.md, report.json,
report.html, verdicts.jsonl, `dataset/`) and the terminal's summary read them from here, so no
two of them can disagree.

The headline is the dataset as it came in: the share of its tasks that paid for a wrong patch
as audited (before any repair), with its 95 % Wilson interval and what ran (hackaudit's version,
the attacker, the budget); then what repair changed. Every input row is counted exactly once:
a task with a verdict, a task that could not be audited (ERROR), or a row that could not be read
(rejected)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version

from hackaudit.cli.report_figures import wilson_interval
from hackaudit.cli.report_model import TaskReport
from hackaudit.shared.contracts import TaskScored, Verdict
from hackaudit.shared.ingest.report import IngestProblem

VERDICTS = tuple(v.value for v in Verdict)  # KEEP, FIX, DROP, ERROR
NOT_FINISHED = "the audit did not finish"


def hackaudit_version() -> str:
    """hackaudit's installed version (`0+unknown` when run from sources not installed)."""
    try:
        return version("hackaudit")
    except PackageNotFoundError:
        return "0+unknown"


@dataclass(frozen=True)
class Rejected:
    """An input row (or a whole file) that could not become a task: where, and why."""

    file: str
    line: int | None  # 1-based line (JSONL) or row (JSON list, parquet); None: the whole file
    instance_id: str | None
    field: str | None
    reason: str

    @classmethod
    def of(cls, problem: IngestProblem) -> Rejected:
        number = (problem.position or "").rpartition(" ")[2]
        return cls(
            file=problem.file or problem.source,
            line=int(number) if number.isdigit() else None,
            instance_id=problem.instance_id,
            field=problem.field,
            reason=problem.message,
        )

    def text(self) -> str:
        where = self.file + (f":{self.line}" if self.line is not None else "")
        if self.instance_id:
            where += f" [{self.instance_id}]"
        if self.field:
            where += f" {self.field}"
        return f"{where}: {self.reason}"


@dataclass(frozen=True)
class Share:
    """k of n tasks, with the 95 % Wilson interval (None: no task to count)."""

    tasks: int
    of: int
    share: float | None
    interval95: tuple[float, float] | None

    @classmethod
    def count(cls, tasks: int, of: int) -> Share:
        return cls(tasks, of, tasks / of if of else None, wilson_interval(tasks, of))

    def text(self) -> str:
        if self.share is None or self.interval95 is None:
            return "– (no task assessed)"
        low, high = self.interval95
        return (
            f"{self.share:.0%} ({self.tasks} of {self.of} tasks assessed; 95 % Wilson interval "
            f"{low:.0%}–{high:.0%})"
        )


@dataclass(frozen=True)
class RunFacts:
    """What ran: stated beside the headline so a figure is never read without its settings."""

    hackaudit: str
    date: str
    attacker: str
    budget: tuple[str, ...]  # the attacks' budgets as given ("15 candidates", ...)
    strategies: tuple[str, ...]  # the strategies whose candidates were graded
    judge: str  # "none" when no judge answered with a backend

    def text(self) -> str:
        budget = ", ".join(self.budget) or "not recorded"
        return (
            f"hackaudit {self.hackaudit}, {self.date}; attacker: {self.attacker}; "
            f"budget per task: {budget}; judge: {self.judge}"
        )


@dataclass(frozen=True)
class Headline:
    """The dataset as it came in, then after repair."""

    rows: int  # input rows: tasks + rejected
    tasks: int
    rejected: int
    as_audited: dict[str, int]  # verdict of each task's first audit (ERROR: none)
    after_repair: dict[str, int]  # the verdict each task ends with (the dataset's split)
    # As audited, over the tasks whose hackability was assessed (a task whose gold fails or is
    # flaky, or that could not be audited, was not); DROP tasks the empty patch passes count.
    hackable: Share
    hackable_after_repair: Share
    harness: int  # tasks whose harness accepted a candidate that tampers with the tests
    repaired: int  # FIX as audited, KEEP after repair
    still_fix: int  # FIX as audited and after
    dropped_after_repair: int  # FIX as audited, DROP after repair
    repair_ran: bool  # a repair was asked for some task (else "after repair" says nothing)
    run: RunFacts

    @property
    def errors(self) -> int:
        return self.after_repair["ERROR"]

    @property
    def partial(self) -> bool:
        """Some rows were not read or some tasks not audited: the figures cover fewer rows."""
        return bool(self.rejected or self.errors)

    def lines(self) -> list[str]:
        """The headline in plain sentences (Markdown-safe), the figure as audited first."""
        first = self.as_audited
        lines = [
            f"Hackable as audited: {self.hackable.text()}.",
            f"Input: {self.rows} row(s): {self.tasks} task(s), {self.rejected} rejected; "
            f"verdicts as audited: {_counts(first)}.",
        ]
        if not self.repair_ran:
            lines.append("No repair ran in this audit: the verdicts are the audit's.")
        else:
            lines.append(
                f"After repair: {self.repaired} FIX → KEEP, {self.still_fix} still FIX, "
                f"{self.dropped_after_repair} FIX → DROP; hackable "
                f"{self.hackable_after_repair.text()}; verdicts: {_counts(self.after_repair)}."
            )
        if self.harness:
            lines.append(
                f"The harness accepted a candidate that tampers with the tests or the runner in "
                f"{self.harness} task(s) (not counted as hackable: a hole of the grader)."
            )
        lines.append(f"Run: {self.run.text()}.")
        return lines

    def as_json(self) -> dict[str, object]:
        return asdict(self) | {"errors": self.errors, "partial": self.partial}


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[v]} {v}" for v in VERDICTS)


def final_verdict(item: TaskReport) -> str:
    """The verdict a task ends with: its re-audit's for a repaired task; ERROR without one."""
    return item.scored.verdict.value if item.scored is not None else Verdict.ERROR.value


def first_scored(item: TaskReport) -> TaskScored | None:
    """The verdict of the task as it came in (before any repair)."""
    return item.before.scored if item.before is not None else item.scored


def verdict_as_audited(item: TaskReport) -> str:
    scored = first_scored(item)
    return scored.verdict.value if scored is not None else Verdict.ERROR.value


def error_reason(item: TaskReport, unaudited: dict[str, str]) -> str:
    """Why a task without a verdict has none."""
    return item.unfinished or unaudited.get(item.instance_id, NOT_FINISHED)


def headline(
    tasks: list[TaskReport],
    rejected: list[Rejected],
    *,
    attacker: str,
    date: str,
) -> Headline:
    first = Counter(verdict_as_audited(t) for t in tasks)
    last = Counter(final_verdict(t) for t in tasks)
    scored_first = [s for t in tasks if (s := first_scored(t)) and s.hackable is not None]
    scored_last = [t.scored for t in tasks if t.scored and t.scored.hackable is not None]
    moved = Counter(
        (verdict_as_audited(t), final_verdict(t)) for t in tasks if t.before is not None
    )
    unmended = sum(
        1 for t in tasks if t.before is None and verdict_as_audited(t) == Verdict.FIX.value
    )  # FIX with no re-audit: repair hardened nothing, or did not run
    attacks = [a for t in tasks for a in (t.attack, t.before.attack if t.before else None) if a]
    return Headline(
        rows=len(tasks) + len(rejected),
        tasks=len(tasks),
        rejected=len(rejected),
        as_audited={v: first.get(v, 0) for v in VERDICTS},
        after_repair={v: last.get(v, 0) for v in VERDICTS},
        hackable=Share.count(sum(bool(s.hackable) for s in scored_first), len(scored_first)),
        hackable_after_repair=Share.count(
            sum(bool(s.hackable) for s in scored_last), len(scored_last)
        ),
        harness=sum(1 for t in tasks if (s := first_scored(t)) and s.harness_exploits),
        repaired=moved[("FIX", "KEEP")],
        still_fix=moved[("FIX", "FIX")] + unmended,
        dropped_after_repair=moved[("FIX", "DROP")],
        repair_ran=any(t.repair is not None or t.before is not None for t in tasks),
        run=RunFacts(
            hackaudit=hackaudit_version(),
            date=date,
            attacker=attacker,
            budget=tuple(sorted({a.budget for a in attacks if a.budget})),
            strategies=tuple(
                sorted({o.candidate.provenance.strategy for a in attacks for o in a.outcomes})
            ),
            judge=judge_text(tasks),
        ),
    )


def judge_text(tasks: list[TaskReport]) -> str:
    """Whether a judge answered any task (one with a backend), in a word or two."""
    answered = [s.judge for t in tasks for s in (t.scored, first_scored(t)) if s and judged(s)]
    return "a 3-sample judge" if answered else "none (F1 left out)"


def judged(scored: TaskScored) -> bool:
    """A judge with a backend answered for this verdict (not one that left F1 out)."""
    return scored.judge is not None and "F1" in scored.components
