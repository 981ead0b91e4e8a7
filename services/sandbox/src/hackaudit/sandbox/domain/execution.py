"""The contract between the run logic and a container backend: a plan in, an execution out.

A backend takes a `RunPlan` (image, command, stdin, markers, limits), runs it in a fresh
container, and returns an `Execution`: the captured output and what the engine observed. It
interprets nothing; `domain.outcome` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from hackaudit.sandbox.domain.transcript import CapturedOutput


class Phase(StrEnum):
    """Where a run's time went: preparing, running the tests, reporting afterwards."""

    SETUP = "setup"
    TEST = "test"
    REPORT = "report"


@dataclass(frozen=True)
class RunPlan:
    """One run for a backend: a fresh container of `image` running `argv` as `user`, fed `stdin`.

    The backend enforces three deadlines: `setup_timeout_s` until `begin_marker` appears,
    `test_timeout_s` from there until `split_marker`, and `setup_timeout_s` again from there
    until `end_marker`. Output before `split_marker` is kept capped (head and tail); output
    after it is the trailer, capped separately.
    """

    run_id: str
    image: str
    argv: tuple[str, ...]
    stdin: bytes
    user: str
    begin_marker: bytes
    split_marker: bytes
    end_marker: bytes
    setup_timeout_s: float
    test_timeout_s: float


@dataclass(frozen=True)
class Execution:
    """What a backend observed running a plan."""

    output: CapturedOutput
    exit_code: int | None = None
    timed_out: Phase | None = None
    container_oom: bool = False
    wall_s: float = 0.0
    # Seconds the run spent in the background (not counted against its deadlines).
    background_s: float = 0.0
