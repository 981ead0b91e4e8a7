"""Every settings class checked once before a command runs, so that a bad `hackaudit.toml` or a
bad `HACKAUDIT_*` variable ends any command in one line naming the file and key (or the
variable) with exit 2, instead of failing mid-run inside a service.

`SECTIONS` names the file's sections and the class each one configures; a section of a service
that is not installed is still known (and not checked)."""

from __future__ import annotations

import importlib

from pydantic import ValidationError

from hackaudit.shared.settings import (
    FileSettings,
    SettingsError,
    config_file,
    describe_invalid,
    read_config,
)

SECTIONS: dict[str, tuple[str, str]] = {
    "bus": ("hackaudit.shared.settings", "BusSettings"),
    "metrics": ("hackaudit.shared.ops_endpoint", "OpsSettings"),
    "sandbox": ("hackaudit.sandbox.settings", "SandboxSettings"),
    "env": ("hackaudit.sandbox.envbuild.settings", "EnvBuildSettings"),
    "attacker": ("hackaudit.attacker.settings", "AttackerSettings"),
    "judge": ("hackaudit.judge.settings", "JudgeSettings"),
    "repairer": ("hackaudit.repairer.settings", "RepairerSettings"),
    "scorer": ("hackaudit.scorer.settings", "ScorerSettings"),
}


def settings_classes() -> list[type[FileSettings]]:
    """The settings classes of the installed packages, in `SECTIONS`' order."""
    found = []
    for module_name, class_name in SECTIONS.values():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # a service not installed here
            raise
        found.append(getattr(module, class_name))
    return found


def check() -> None:
    """Raise `SettingsError` (one line) for the first unusable section, key or value."""
    path = config_file()
    if path is not None:
        unknown = sorted(set(read_config(path)) - set(SECTIONS))
        if unknown:
            known = ", ".join(f"[{s}]" for s in SECTIONS)
            raise SettingsError(f"{path}: [{unknown[0]}]: no such section (known: {known})")
    for cls in settings_classes():
        try:
            cls()
        except ValidationError as exc:
            raise SettingsError(describe_invalid(cls, exc)) from None
