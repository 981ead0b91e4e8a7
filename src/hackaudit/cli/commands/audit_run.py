"""The audit `eval attacker` and `eval repair` both run over a labelled corpus: the options they
share, as one block (`LabelledAudit`), and the steps they share — the tasks read, their images
built, the audit run, its report written where `--out` says."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hackaudit.cli import inputs, pipeline, report, services, stops
from hackaudit.cli.commands.options import (
    CANDIDATES_PER_ROUND,
    EXAMPLE_TASKS,
    ROUNDS,
    TIMEOUT_S,
    AlsoReportTo,
    BudgetSeconds,
    Candidates,
    GiveUpAfter,
    InstanceIds,
    PassAtOneFile,
    ReposDir,
    Rounds,
    audit_options,
)
from hackaudit.cli.commands.terminal import err, fail, ingest, use_repos
from hackaudit.cli.progress import AuditTracker
from hackaudit.shared.contracts import Task
from hackaudit.shared.errors import HackauditError
from hackaudit.shared.settings import BusSettings


@dataclass(frozen=True)
class LabelledAudit:
    """The options of an audit run to be measured: its budget, its time limit, where images are
    built from, pass@1 data, and a folder for its report too."""

    candidates: Candidates = CANDIDATES_PER_ROUND
    rounds: Rounds = ROUNDS
    timeout: GiveUpAfter = TIMEOUT_S
    repos: ReposDir = None
    budget_seconds: BudgetSeconds = None
    out: AlsoReportTo = None
    pass_at_1: PassAtOneFile = None
    instance_ids: InstanceIds = None

    def ingest(self, tasks: list[Path] | None) -> inputs.Ingested:
        """The tasks given (those of `--instance-ids` only, when given), or the example tasks;
        exits 2 if none is valid."""
        use_repos(self.repos)
        return ingest(tasks or [EXAMPLE_TASKS], self.pass_at_1, self.instance_ids)

    def run(
        self,
        tasks: list[Task],
        builders: dict[str, services.Builder],
        *,
        stop_when_hackable: bool = False,
    ) -> tuple[AuditTracker, list[Task]]:
        """Audit the tasks whose image is ready, with these services; the tracker and the tasks
        audited. A fault of the run exits 1."""
        from hackaudit.cli.environments import ensure_images

        ready = ensure_images(tasks, err)
        options = audit_options(
            self.candidates, self.rounds, self.budget_seconds, stop_when_hackable
        )
        try:
            tracker = stops.run(
                pipeline.run_audit(
                    ready.tasks, options, BusSettings(), builders, limit_s=self.timeout
                )
            )
        except HackauditError as exc:
            raise fail(exc) from exc
        return tracker, ready.tasks

    def write_report(self, tracker: AuditTracker, tasks: list[Task]) -> None:
        """The audit's report, when `--out` asks for one."""
        if self.out is not None:
            items = pipeline.task_reports(tracker, tasks)
            report.write_audit(
                self.out, items, None, missing_stages=[], attacker=services.attacker_text()
            )


# What a command's `LabelledAudit` parameter defaults to; `expands` replaces it by the options.
DEFAULTS = LabelledAudit()
