"""Where the environment builder keeps wheels, which base image it starts from, how it runs pip."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from hackaudit.shared.settings import FileSettings

BASE_IMAGE_SCRIPT = Path("scripts") / "base-image.sh"


def _default_wheelhouse() -> Path:
    return Path.home() / ".cache" / "hackaudit" / "wheelhouse"


class EnvBuildSettings(FileSettings):
    """Read from `HACKAUDIT_*` variables (or `[env]` of hackaudit.toml); built once by the caller.

    - `HACKAUDIT_WHEELHOUSE`: the host folder of downloaded wheels (default
      `~/.cache/hackaudit/wheelhouse`); images install only from it, never from the network.
    - `HACKAUDIT_BASE_IMAGE`: a base image tag to use as it is, skipping the base image script.
    - `HACKAUDIT_BASE_IMAGE_SCRIPT`: the script that builds the base image and prints its tag
      (default: `scripts/base-image.sh` in the first folder above this package that has one).
    - `HACKAUDIT_PIP_PYTHON`: the host interpreter that runs `pip download` (default: this one,
      else the first `python3` on PATH with pip).
    - `HACKAUDIT_REPOS`: a folder of local clones or mirrors (`<owner>/<name>`,
      `<owner>+<name>/repo` or `<owner>+<name>`, bare or not), where environments without a
      source folder take their repository at `base_commit`.
    - `HACKAUDIT_PYTHON_IMAGE`: the image for a Python that no Debian base carries
      (`{version}` stands for it; default `python:{version}-slim`); it must be present locally
      and hold git. `HACKAUDIT_PYTHON_IMAGE_GLIBC_MINOR`: its glibc is 2.<this> (default 28).
    """

    config_section = "env"
    model_config = SettingsConfigDict(env_prefix="HACKAUDIT_", extra="ignore")

    wheelhouse: Path = Field(default_factory=_default_wheelhouse)
    base_image: str | None = None
    base_image_script: Path | None = None
    base_suite: str = "bookworm"
    python_version: str = "3.11"
    glibc_minor: int = Field(default=36, description="the base image's glibc is 2.<this>")
    pip_python: str | None = None
    repos: Path | None = None
    python_image: str = "python:{version}-slim"
    python_image_glibc_minor: int = 28
    pip_timeout_s: float = 900.0
    docker_timeout_s: int = 1800

    def base_image_script_path(self) -> Path | None:
        if self.base_image_script is not None:
            return self.base_image_script
        for folder in Path(__file__).resolve().parents:
            if (folder / BASE_IMAGE_SCRIPT).is_file():
                return folder / BASE_IMAGE_SCRIPT
        return None
