"""`hackaudit.toml`: each settings class reads its own section beside the environment, the
environment wins, and a file that cannot be used is one error naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from hackaudit.cli import configuration
from hackaudit.sandbox.settings import SandboxSettings
from hackaudit.shared.settings import BusSettings, SettingsError, describe_invalid


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A hackaudit.toml in an empty current folder, no HACKAUDIT_* settings from outside."""
    for name in (
        "HACKAUDIT_CONFIG",
        "HACKAUDIT_STATE_DIR",
        "NATS_URL",
        "HACKAUDIT_SANDBOX_MEMORY_MB",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "hackaudit.toml"


def test_each_class_reads_its_section_of_the_file_in_the_current_folder(config: Path) -> None:
    config.write_text('[bus]\nnats_url = "nats://file:4222"\nstate_dir = "st"\n'
                      "[sandbox]\nmemory_mb = 4096\n")  # fmt: skip
    assert BusSettings().nats_url == "nats://file:4222"
    assert SandboxSettings().memory_mb == 4096
    # each class its own section only
    assert SandboxSettings().state_dir == Path(".hackaudit")


def test_the_environment_wins_over_the_file(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config.write_text('[bus]\nnats_url = "nats://file:4222"\n[sandbox]\nmemory_mb = 4096\n')
    monkeypatch.setenv("NATS_URL", "nats://env:4222")
    monkeypatch.setenv("HACKAUDIT_SANDBOX_MEMORY_MB", "512")
    assert BusSettings().nats_url == "nats://env:4222"
    assert SandboxSettings().memory_mb == 512


def test_hackaudit_config_names_the_file(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config.write_text("[bus]\nmax_deliveries = 2\n")
    named = tmp_path / "elsewhere.toml"
    named.write_text("[bus]\nmax_deliveries = 9\n")
    monkeypatch.setenv("HACKAUDIT_CONFIG", str(named))
    assert BusSettings().max_deliveries == 9
    monkeypatch.setenv("HACKAUDIT_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(SettingsError, match=r"HACKAUDIT_CONFIG=.*missing\.toml: no such file"):
        BusSettings()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[bus\nnats_url = 1\n", "hackaudit.toml: not valid TOML: .*line 1"),
        ('nats_url = "nats://x"\n', "hackaudit.toml: nats_url: a setting outside a section"),
        ("[bus]\nnats_ur = 'x'\n", r"hackaudit.toml: \[bus\] nats_ur: no such setting"),
        ("[sandbx]\nmemory_mb = 1\n", r"hackaudit.toml: \[sandbx\]: no such section"),
        ("[sandbox]\nmemory_mb = 'lots'\n",
         r"hackaudit.toml: \[sandbox\] memory_mb: Input should be a valid integer.*'lots'"),
        ("[bus]\nmax_deliveries = 0\n",
         r"hackaudit.toml: \[bus\] max_deliveries: Input should be greater than or equal to 1"),
    ],
)  # fmt: skip
def test_a_bad_file_is_one_error_naming_the_file_and_key(
    config: Path, text: str, said: str
) -> None:
    config.write_text(text)
    with pytest.raises(SettingsError, match=said) as caught:
        configuration.check()
    assert "\n" not in str(caught.value)


def test_a_bad_variable_is_named_as_the_variable(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HACKAUDIT_SANDBOX_MEMORY_MB", "lots")
    with pytest.raises(pydantic.ValidationError) as caught:
        SandboxSettings()
    assert describe_invalid(SandboxSettings, caught.value).startswith(
        "HACKAUDIT_SANDBOX_MEMORY_MB: Input should be a valid integer"
    )


def test_every_section_configures_the_class_that_names_it() -> None:
    classes = configuration.settings_classes()
    assert [c.config_section for c in classes] == list(configuration.SECTIONS)
