"""What every command line tool answers: its version, help by `-h`, a bad log level as a usage
error naming the option, never a traceback; and defaults that name the clone's own files work
from any folder."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hackaudit.cli.commands import options
from hackaudit.cli.main import app


def test_version_prints_the_installed_version_and_exits() -> None:
    done = CliRunner().invoke(app, ["--version"])
    assert done.exit_code == 0, done.output
    assert done.output.strip() == f"hackaudit {metadata.version('hackaudit')}"


def test_dash_h_is_help_on_the_root_and_on_every_subcommand() -> None:
    for args in (["-h"], ["tasks", "-h"], ["tasks", "validate", "-h"], ["eval", "attacker", "-h"]):
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, (args, done.output)
        assert "Usage:" in done.output, args


def test_a_log_level_is_taken_in_any_case_and_a_wrong_one_is_a_usage_error() -> None:
    assert CliRunner().invoke(app, ["--log-level", "debug", "tasks", "-h"]).exit_code == 0
    done = CliRunner().invoke(app, ["--log-level", "NOPE", "status"])
    assert done.exit_code == 2
    assert "--log-level" in done.output and "NOPE" in done.output
    assert "Traceback" not in done.output


def test_the_bundled_defaults_name_the_clones_files_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    found = options.bundled(Path("examples/labels.json"))
    assert found == options.CHECKOUT / "examples" / "labels.json" and found.is_file()
    assert options.bundled(Path("no/such/file.json")) == Path("no/such/file.json")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "labels.json").write_text("{}")
    # a file of that name in the current folder is the user's, and wins
    assert options.bundled(Path("examples/labels.json")) == Path("examples/labels.json")
