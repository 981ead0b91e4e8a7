"""``python -m hackaudit.analysis meta-analysis ...``: the command without the main CLI."""

from __future__ import annotations

import typer

from hackaudit.analysis.cli import register


def main() -> None:
    """Build a one-command typer app and run it."""
    app = typer.Typer(help="hackaudit analysis commands.", no_args_is_help=True)

    @app.callback()
    def analysis() -> None:
        """hackaudit analysis commands."""

    register(app)
    app()


if __name__ == "__main__":
    main()
