"""The `hackaudit` commands, one module per group of commands; `hackaudit.cli.main` assembles
them into the one command line."""
