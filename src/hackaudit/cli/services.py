"""The services the CLI can run in its own process, and the stages that are not built yet.

A service is available when its package provides `app.build(bus_settings) -> Service`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from hackaudit.shared.service import Service
from hackaudit.shared.settings import BusSettings

Builder = Callable[[BusSettings], Service]


@dataclass(frozen=True)
class ServiceEntry:
    name: str
    stage: str  # what the audit loses without it


SERVICES = [
    ServiceEntry("scorer", "sanity checks, EQS and verdicts"),
    ServiceEntry("sandbox", "running patches in containers"),
    ServiceEntry("attacker", "exploit search"),
    ServiceEntry("judge", "the LLM judge (F1 component)"),
    ServiceEntry("repairer", "repair of FIX tasks"),
]


def builder(name: str) -> Builder | None:
    try:
        module = importlib.import_module(f"hackaudit.{name}.app")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(f"hackaudit.{name}"):
            return None
        raise
    build: Builder | None = getattr(module, "build", None)
    return build


def available() -> tuple[dict[str, Builder], list[ServiceEntry]]:
    """The services that can run, and the entries of those that are not built yet."""
    found: dict[str, Builder] = {}
    missing: list[ServiceEntry] = []
    for entry in SERVICES:
        build = builder(entry.name)
        if build is None:
            missing.append(entry)
        else:
            found[entry.name] = build
    return found, missing


def attacker_text() -> str:
    """Which attacker an audit run here uses, as the report states it: a model and the offline
    strategies when a model is configured, the offline strategies alone otherwise."""
    try:
        module = importlib.import_module("hackaudit.attacker.settings")
    except ModuleNotFoundError:
        return "none (the attacker is not built)"
    settings = module.AttackerSettings()
    if settings.llm_enabled:
        return f"{settings.llm_provider} model {settings.llm_model_name} and the offline strategies"
    return "the offline strategies only (no model configured)"
