"""The `hackaudit` command line: audit task files, run the services, submit, watch, analyse.

This module only assembles the commands, in the order `hackaudit --help` lists them; each group
of commands lives in its own module under `hackaudit.cli.commands`."""

from __future__ import annotations

import enum
from importlib import metadata
from typing import Annotated

import typer

from hackaudit.cli import bus_contract, stops
from hackaudit.cli.commands import (
    audit,
    bench,
    bench_fairness,
    env,
    eval_attacker,
    eval_judge,
    eval_repair,
    eval_verdicts,
    operations,
    tasks,
)
from hackaudit.cli.commands.terminal import err
from hackaudit.shared.logs import configure_logging

__all__ = ["app", "run"]

app = typer.Typer(
    help="Measure and repair the reward hackability of code RL environments.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    # `-h` beside `--help` on every command (click hands it down to the subcommands)
    context_settings={"help_option_names": ["-h", "--help"]},
)


class LogLevel(enum.StrEnum):
    """The levels `--log-level` takes (any case): a name outside them is a one-line error."""

    DEBUG = "DEBUG"
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"
    CRITICAL = "CRITICAL"


def version() -> str:
    """hackaudit's installed version (`0+unknown` when run from sources not installed)."""
    try:
        return metadata.version("hackaudit")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"hackaudit {version()}")
        raise typer.Exit()


@app.callback()
def main(
    log_level: Annotated[
        LogLevel, typer.Option(help="Log level of the services.", case_sensitive=False)
    ] = LogLevel.WARNING,
    json_logs: Annotated[bool, typer.Option(help="Log JSON lines.")] = False,
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print hackaudit's version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    configure_logging(log_level.value, json=json_logs)


app.command("audit")(audit.audit)
app.command("report")(audit.report_from_store)
app.command("up")(operations.up)
app.command("submit")(operations.submit)
app.command("status")(operations.status)

tasks_app = typer.Typer(help="Task files.", no_args_is_help=True)
tasks_app.command("validate")(tasks.tasks_validate)
tasks_app.command("grade")(tasks.tasks_grade)
app.add_typer(tasks_app, name="tasks")

env_app = typer.Typer(help="Task images.", no_args_is_help=True)
env_app.command("build")(env.env_build)
app.add_typer(env_app, name="env")

eval_app = typer.Typer(help="Accuracy against a labelled corpus.", no_args_is_help=True)
eval_app.command("attacker")(eval_attacker.eval_attacker)
eval_app.command("repair")(eval_repair.eval_repair)
eval_app.command("verdicts")(eval_verdicts.eval_verdicts)
eval_app.command("judge")(eval_judge.eval_judge)
app.add_typer(eval_app, name="eval")

bench_app = typer.Typer(help="Benchmarks that print figures.", no_args_is_help=True)
bench_app.command("sandbox")(bench.bench_sandbox)
bench_app.command("scale")(bench.bench_scale_command)
bench_app.command("fairness")(bench_fairness.bench_fairness)
app.add_typer(bench_app, name="bench")


def _register_optional_commands() -> None:
    from hackaudit.analysis.cli import register as register_analysis

    register_analysis(app)


_register_optional_commands()
bus_contract.register(app)  # hackaudit asyncapi


def run() -> None:
    stops.install()
    try:
        app()
    except stops.Stopped as stop:
        err.print(f"stopped by {stop.signal_name}")
        raise
