"""Settings every service shares: where the bus is, where state lives, how messages are retried;
and how every settings class reads `hackaudit.toml` beside the environment.

The file (`$HACKAUDIT_CONFIG`, else `./hackaudit.toml` when there is one) holds one section per
settings class, named by `config_section` (`[bus]`, `[sandbox]`, ...), with the field names as
keys: `[sandbox] memory_mb = 4096` is `HACKAUDIT_SANDBOX_MEMORY_MB=4096`. Precedence: values
given in code, then environment variables, then the file, then the defaults. A file that cannot
be used (TOML syntax, a key outside a section, a key no setting has) is a `SettingsError`
naming the file and the key; a value of the wrong type is pydantic's `ValidationError`, which
`describe_invalid` says in one line naming where the value came from.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

CONFIG_ENV = "HACKAUDIT_CONFIG"
CONFIG_FILE = Path("hackaudit.toml")


class SettingsError(ValueError):
    """A setting that cannot be used; the message is one line naming the file and key, or the
    environment variable."""


def config_file() -> Path | None:
    """The configuration file in force: `$HACKAUDIT_CONFIG` (which must exist), else
    `./hackaudit.toml` when there is one, else none."""
    named = os.environ.get(CONFIG_ENV)
    if named:
        path = Path(named)
        if not path.is_file():
            raise SettingsError(f"{CONFIG_ENV}={named}: no such file")
        return path
    return CONFIG_FILE if CONFIG_FILE.is_file() else None


def read_config(path: Path) -> dict[str, dict[str, Any]]:
    """The file's sections; a file that is not TOML, or holds a key outside a section, is a
    `SettingsError`."""
    try:
        with path.open("rb") as stream:
            document = tomllib.load(stream)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise SettingsError(f"{path}: cannot be read: {exc.strerror}") from None
    for key, value in document.items():
        if not isinstance(value, dict):
            raise SettingsError(
                f"{path}: {key}: a setting outside a section (put it under its section, "
                "e.g. [bus] or [sandbox])"
            )
    return document


class _SectionSource(TomlConfigSettingsSource):
    """The settings class's own section of the file; a key it has no field for is an error."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path, section: str) -> None:
        self._fields = set(settings_cls.model_fields)
        self._section = section
        super().__init__(settings_cls, toml_file=path)

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        table = read_config(Path(file_path)).get(self._section, {})
        for key in table:
            if key not in self._fields:
                raise SettingsError(f"{file_path}: [{self._section}] {key}: no such setting")
        return table


class FileSettings(BaseSettings):
    """Settings read from the environment and from their section of `hackaudit.toml`."""

    # The file's section of this class: its name matches the class's environment prefix.
    config_section: ClassVar[str]

    # Field names work beside aliases (`nats_url` beside NATS_URL): the file's keys are names.
    model_config = SettingsConfigDict(validate_by_name=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = config_file()
        from_file = [] if path is None else [_SectionSource(settings_cls, path, cls.config_section)]
        return (init_settings, env_settings, dotenv_settings, *from_file, file_secret_settings)


def describe_invalid(cls: type[FileSettings], exc: ValidationError) -> str:
    """The first invalid value of `exc` in one line, named as the user set it: the file's
    section and key, or the environment variable."""
    error = exc.errors()[0]
    given = str(error["loc"][0]) if error["loc"] else ""
    name = next((n for n, f in cls.model_fields.items() if given in (n, f.validation_alias)), given)
    why = f"{error['msg']} (got {error.get('input')!r})"
    path = config_file()
    if path is not None and name in read_config(path).get(cls.config_section, {}):
        return f"{path}: [{cls.config_section}] {name}: {why}"
    alias = cls.model_fields[name].validation_alias if name in cls.model_fields else None
    prefix = str(cls.model_config.get("env_prefix", ""))
    candidates = [str(alias)] if isinstance(alias, str) else []
    candidates.append(f"{prefix}{name}".upper())
    variable = next((v for v in candidates if v in os.environ), candidates[-1])
    return f"{variable}: {why}"


class BusSettings(FileSettings):
    """How a service reaches NATS and how its consumers treat slow or failing handlers.

    With no `nats_url`, the CLI starts an embedded nats-server in `state_dir`.
    """

    config_section = "bus"
    model_config = SettingsConfigDict(env_prefix="HACKAUDIT_", extra="ignore")

    nats_url: str | None = Field(default=None, validation_alias="NATS_URL")
    state_dir: Path = Path(".hackaudit")
    # A handler that runs longer than this without an in-progress ack is presumed dead.
    ack_wait_s: float = Field(default=60.0, gt=0)
    # Handlers send an in-progress ack this often while they work (long test runs).
    heartbeat_s: float = Field(default=15.0, gt=0)
    # Deliveries before a message is dead-lettered; a worker that dies mid-handler counts too.
    max_deliveries: int = Field(default=5, ge=1)
    retry_delay_s: float = Field(default=2.0, ge=0)
    duplicate_window_s: float = Field(default=2 * 3600.0, gt=0)
    stream_max_age_s: float = Field(default=7 * 24 * 3600.0, gt=0)
    # Copies JetStream keeps of each stream (and its consumers) on a NATS cluster: 3 survives the
    # loss of one node. At most the cluster's size; 1 for a single server.
    bus_replicas: int = Field(default=1, ge=1, le=5)
