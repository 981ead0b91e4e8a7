"""The `hackaudit` command line: audit task files, run the services, submit, watch, analyse.

This module only assembles the commands, in the order `hackaudit --help` lists them; each group
of commands lives in its own module under `hackaudit.cli.commands`."""

from __future__ import annotations

import enum
import os
import sys
from typing import Annotated

import typer
from rich.markup import escape

from hackaudit.cli import bus_contract, configuration, stops
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
from hackaudit.cli.commands.terminal import err, fail
from hackaudit.cli.report_summary import hackaudit_version
from hackaudit.shared.logs import configure_logging
from hackaudit.shared.settings import SettingsError

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


def _print_version(wanted: bool) -> None:
    if wanted:
        typer.echo(f"hackaudit {hackaudit_version()}")
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
    try:  # a bad hackaudit.toml or HACKAUDIT_* variable: one line, exit 2, before any work
        configuration.check()
    except SettingsError as exc:
        raise fail(exc, 2) from exc


app.command("audit")(audit.audit)
app.command("report")(audit.report_from_store)
app.command("up")(operations.up)
app.command("submit")(operations.submit)
app.command("status")(operations.status)

tasks_app = typer.Typer(help="Task files.", no_args_is_help=True)
tasks_app.command("validate")(tasks.tasks_validate)
tasks_app.command("grade")(tasks.tasks_grade)
tasks_app.command("check")(tasks.tasks_check)
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
    """The console entry point: every usage error, bad setting or fault ends in one line on
    stderr and its exit code (2 for unusable input or usage, 1 for a fault of the run)."""
    stops.install()
    try:
        code = app(prog_name="hackaudit", standalone_mode=False)
    except typer.TyperException as exc:  # typer's own says a usage error in a block of lines
        raise SystemExit(_usage_error(exc)) from None
    except typer.Abort:
        err.print("[red]error:[/] aborted")
        raise SystemExit(1) from None
    except stops.Stopped as stop:
        err.print(f"stopped by {stop.signal_name}")
        # The services are stopped by now; a worker thread still blocked in a Docker call must
        # not keep the process from exiting (its containers are labelled and swept at the next
        # start), so the interpreter does not wait to join it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(stop.code if isinstance(stop.code, int) else 1)
    except SettingsError as exc:  # a setting read after the check (a file changed meanwhile)
        raise SystemExit(fail(exc, 2).exit_code) from exc
    raise SystemExit(code if isinstance(code, int) else 0)


def _usage_error(exc: typer.TyperException) -> int:
    """Say a usage error (an unknown option, a value out of bounds) in one line naming the
    command; its exit code (2)."""
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        typer.echo(ctx.get_help())  # a group given no command: its help, and click's exit code
        return exc.exit_code
    where = f"{ctx.command_path}: " if ctx is not None else ""
    hint = f" (see {ctx.command_path} -h)" if ctx is not None else ""
    err.print(f"[red]error:[/] {escape(where + exc.format_message() + hint)}")
    return exc.exit_code
