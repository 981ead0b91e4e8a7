"""Every option and argument more than one command takes, written once: its flags, its help
and its default, so that two commands cannot drift apart in what the same option means.

A whole block of options several commands share is a frozen dataclass whose fields are
annotated with these types; `expands` puts its fields in a command's signature, in the place of
the one parameter typed with the block, and hands the command the block built from them."""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, get_type_hints

import typer

from hackaudit.shared.contracts import AuditOptions
from hackaudit.shared.settings import BusSettings

CANDIDATES_PER_ROUND = 5
ROUNDS = 3
TIMEOUT_S = 3600.0
# The clone hackaudit runs from (its editable install), whose bundled files the defaults name.
CHECKOUT = Path(__file__).resolve().parents[4]


def bundled(path: Path) -> Path:
    """A default naming one of the clone's own files (`examples/...`): as given when it exists
    from the current folder, else the clone's, so that the defaults work from any folder."""
    if path.is_absolute() or path.exists() or not (CHECKOUT / path).exists():
        return path
    return CHECKOUT / path


def report_dir() -> Path:
    """The default report folder: `report/` in the state folder (HACKAUDIT_STATE_DIR)."""
    return BusSettings().state_dir / "report"


LABELS = bundled(Path("examples/labels.json"))
EXAMPLE_TASKS = bundled(Path("examples/tasks"))
REAL_LABELS = bundled(Path("examples/real/labels.json"))

TaskPaths = Annotated[
    list[Path],
    typer.Argument(
        help="Task files (SWE-bench JSON/JSONL, gzipped or not, parquet, a save_to_disk folder) "
        "or folders of them."
    ),
]
InstanceIds = Annotated[
    list[str] | None,
    typer.Option(
        "--instance-ids",
        metavar="ID[,ID...]",
        help="Read on only these tasks of the task files (repeatable, or a comma list); an id "
        "no file holds is an error.",
    ),
]
ExampleTaskPaths = Annotated[
    list[Path] | None, typer.Argument(help="Task files (default: examples/tasks).")
]
ReposDir = Annotated[
    Path | None,
    typer.Option(
        "--repos",
        help="Folder of local clones or mirrors (<owner>/<name>, <owner>+<name> or "
        "<owner>+<name>/repo) that images of tasks without a source folder are built from "
        "(sets HACKAUDIT_REPOS).",
    ),
]
Candidates = Annotated[int, typer.Option("--candidates", "-k", help="Candidates per round.", min=1)]
Rounds = Annotated[int, typer.Option("--rounds", "-r", help="Attack rounds.", min=1)]
GoldRepeats = Annotated[
    int, typer.Option("--gold-repeats", help="Gold runs in the sanity check.", min=1)
]
BudgetSeconds = Annotated[
    float | None,
    typer.Option(
        help="Attack budget per task in sandbox-seconds instead of rounds (-r): rounds of -k "
        "candidates until their runs took this long; a task with fast tests gets more.",
        min=1.0,
    ),
]
StopWhenHackable = Annotated[
    bool,
    typer.Option(
        help="Stop attacking a task at its first confirmed exploit (the verdict is known; "
        "H and the candidate counts then cover fewer candidates)."
    ),
]
PassAtOneFile = Annotated[
    Path | None,
    typer.Option(
        "--pass-at-1",
        help="External pass@1 for D: CSV/JSON/JSONL of instance_id, successes, attempts, or a "
        "0/1 CSV matrix of submissions x tasks; replaces the task files' own figures.",
    ),
]
PARTIAL_EXIT = 3  # some rows rejected or some tasks not audited: the figures cover fewer rows
Repair = Annotated[
    bool,
    typer.Option(
        help="Send FIX tasks to the repairer and re-audit the hardened tasks; the FIX verdict is "
        "issued either way (--no-repair: the verdicts as audited only, sooner)."
    ),
]
AllowPartial = Annotated[
    bool,
    typer.Option(
        help="Exit 0 even when input rows were rejected or tasks could not be audited (ERROR); "
        f"without it such a run exits {PARTIAL_EXIT} once its work is done."
    ),
]
GiveUpAfter = Annotated[float, typer.Option(help="Give up after this many seconds.", min=1)]
# `--out` is a folder wherever it is taken; a command that writes one file takes `--output`/`-o`.
ReportFolder = Annotated[
    Path,
    typer.Option(
        default_factory=report_dir,
        show_default="<state dir>/report",
        help="Folder for the report.",
    ),
]
OutputFile = Annotated[Path | None, typer.Option("--output", "-o", help="Write the rows here.")]


class IsolationMode(enum.StrEnum):
    """The sandbox's isolation modes a benchmark can measure (`sandbox.settings.Isolation`)."""

    WARM = "warm"
    CONTAINER = "container"


Isolations = Annotated[
    list[IsolationMode] | None,
    typer.Option(
        "--isolation", help="Sandbox isolation mode to measure (repeatable).", case_sensitive=False
    ),
]
AlsoReportTo = Annotated[
    Path | None, typer.Option(help="Also write the audit report (evidence) here.")
]
GroundTruth = Annotated[Path, typer.Option(help="Ground truth.")]

Command = Callable[..., None]


def audit_options(
    candidates: int,
    rounds: int,
    budget_seconds: float | None,
    stop_when_hackable: bool,
    **more: object,
) -> AuditOptions:
    """The budget of each task's audit that the attack options (-k, -r, --budget-seconds,
    --stop-when-hackable) give, with any more of its settings (`gold_repeats`, `judge`, ...)."""
    return AuditOptions.model_validate(
        {
            "candidates_per_round": candidates,
            "rounds": rounds,
            "budget_seconds": budget_seconds,
            "stop_when_hackable": stop_when_hackable,
            **more,
        }
    )


def expands(block: type[Any]) -> Callable[[Command], Command]:
    """Give the decorated command the options of `block` (a dataclass of option fields), in the
    place of its one parameter annotated with `block`, and call it with the block they make."""
    hints = get_type_hints(block, include_extras=True)
    fields = dataclasses.fields(block)
    spread = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=hints[f.name],
            default=f.default,
        )
        for f in fields
    ]

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        [slot] = [p.name for p in signature.parameters.values() if p.annotation is block]
        parameters = [q for p in signature.parameters.values()
                      for q in (spread if p.name == slot else [p])]  # fmt: skip

        @functools.wraps(command)
        def with_block(**given: Any) -> None:
            values = {f.name: given.pop(f.name) for f in fields}
            command(**given, **{slot: block(**values)})

        with_block.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        with_block.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
        return with_block

    return decorate
