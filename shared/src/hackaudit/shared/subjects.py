"""Every subject, stream and durable consumer name on the bus; services name no subject."""

from __future__ import annotations

from dataclasses import dataclass

STREAM = "HACKAUDIT"
DEAD_LETTER_STREAM = "HACKAUDIT_DEADLETTER"

PREFIX = "hackaudit"
DEAD_LETTER_PREFIX = "deadletter.hackaudit"

TASK_INGESTED = f"{PREFIX}.task.ingested"
ATTACK_REQUESTED = f"{PREFIX}.attack.requested"
ATTACK_COMPLETED = f"{PREFIX}.attack.completed"
RUN_REQUESTED = f"{PREFIX}.run.requested"
RUN_COMPLETED = f"{PREFIX}.run.completed"  # + ".<requester>": each service gets its own runs
RUN_COMPLETED_FOR = f"{RUN_COMPLETED}.{{requester}}"  # the same, as the bus contract names it
JUDGE_REQUESTED = f"{PREFIX}.judge.requested"
JUDGE_COMPLETED = f"{PREFIX}.judge.completed"
TASK_SCORED = f"{PREFIX}.task.scored"
REPAIR_REQUESTED = f"{PREFIX}.repair.requested"
REPAIR_COMPLETED = f"{PREFIX}.repair.completed"

EVERYTHING = f"{PREFIX}.>"


def run_completed_subject(requester: str) -> str:
    """Where the sandbox publishes the result of a run that `requester` asked for."""
    if not requester or not requester.replace("-", "").isalnum():
        raise ValueError(f"requester must be a plain service name, not {requester!r}")
    return f"{RUN_COMPLETED}.{requester}"


def dead_letter_subject(subject: str) -> str:
    """Where a message published on `subject` goes when no worker can handle it."""
    return f"{DEAD_LETTER_PREFIX}.{subject.removeprefix(PREFIX + '.')}"


@dataclass(frozen=True)
class Consumer:
    """A durable pull consumer: one per (service, subject); its workers share the queue."""

    durable: str
    subject: str


SANDBOX_RUNS = Consumer("sandbox-runs", RUN_REQUESTED)
ATTACKER_REQUESTS = Consumer("attacker-requests", ATTACK_REQUESTED)
ATTACKER_RUNS = Consumer("attacker-runs", f"{RUN_COMPLETED}.attacker")
SCORER_INGESTED = Consumer("scorer-ingested", TASK_INGESTED)
SCORER_RUNS = Consumer("scorer-runs", f"{RUN_COMPLETED}.scorer")
SCORER_ATTACKS = Consumer("scorer-attacks", ATTACK_COMPLETED)
SCORER_JUDGEMENTS = Consumer("scorer-judgements", JUDGE_COMPLETED)
SCORER_REPAIRS = Consumer("scorer-repairs", REPAIR_COMPLETED)
REPAIRER_REQUESTS = Consumer("repairer-requests", REPAIR_REQUESTED)
REPAIRER_RUNS = Consumer("repairer-runs", f"{RUN_COMPLETED}.repairer")
REPAIRER_JUDGEMENTS = Consumer("repairer-judgements", JUDGE_COMPLETED)
JUDGE_REQUESTS = Consumer("judge-requests", JUDGE_REQUESTED)
