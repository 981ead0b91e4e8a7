"""`python -m hackaudit.cli`, the same as the `hackaudit` command."""

from hackaudit.cli.main import run

run()
