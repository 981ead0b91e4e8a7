"""Where the shared SWE-bench Verified data lives, for the command's default inputs.

The folder is looked up, in order, from the ``HACKAUDIT_SHARED_DATA`` environment variable (the
``swebench-verified`` folder itself, or a folder holding it directly or under ``data/``) and then
at ``../shared/data/swebench-verified`` relative to the working directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

ENV_VAR = "HACKAUDIT_SHARED_DATA"
DATASET_FOLDER = "swebench-verified"
SUBMISSIONS_FILE = "swebench_verified_submissions_resolved.json"
INSTANCE_FLAGS_FILE = "swebench_verified_instance_flags.json"


def locate_shared_data(cwd: Path, env: Mapping[str, str]) -> Path | None:
    """The first candidate folder that holds the submissions or the instance-flags file."""
    for folder in _candidates(cwd, env):
        if (folder / SUBMISSIONS_FILE).is_file() or (folder / INSTANCE_FLAGS_FILE).is_file():
            return folder
    return None


def _candidates(cwd: Path, env: Mapping[str, str]) -> list[Path]:
    found = []
    configured = env.get(ENV_VAR)
    if configured:
        base = Path(configured)
        found += [base, base / DATASET_FOLDER, base / "data" / DATASET_FOLDER]
    found.append(cwd.parent / "shared" / "data" / DATASET_FOLDER)
    return found


def default_file(cwd: Path, env: Mapping[str, str], name: str) -> Path | None:
    """``name`` inside the shared data folder, if the folder and the file exist."""
    folder = locate_shared_data(cwd, env)
    if folder is None or not (folder / name).is_file():
        return None
    return folder / name
