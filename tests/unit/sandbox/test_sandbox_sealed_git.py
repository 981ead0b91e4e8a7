"""The wrapper's git after the final kill (`protocol.KEEP_GIT_CONFIG`, `SEALED_GIT`), run by bash
against a real repository: what a candidate writes into the repository's configuration, a
submodule's, or `$HOME` never runs, and a `.git` replaced by a symlink gets no git call; and the
search path the wrapper keeps after the kill (`SEALED_PATH`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hackaudit.sandbox.domain.protocol import (
    GIT_SAFE,
    KEEP_GIT_CONFIG,
    PRISTINE_REPOSITORY,
    SEALED_GIT,
    SEALED_PATH,
    STATUS_ARGS,
    WRAPPER,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git on this machine")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def _repository(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("calc\n")
    env = {**os.environ, **GIT_ENV}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-C", str(repo), *argv], check=True, env=env)
    return repo


def _run(repo: Path, home: Path, plant: str) -> tuple[str, str]:
    """(the porcelain status the sealed git reports or `no-git`, the filter's marker)."""
    script = f"""
safe="{GIT_SAFE}"
g() {{ git $safe "$@"; }}
cd "$1" || exit 1
hasgit=1
{KEEP_GIT_CONFIG}
{SEALED_GIT}
{plant}
if reseal && sealed rev-parse --git-dir >/dev/null 2>&1; then
  sealed status {STATUS_ARGS} | tr '\\0' '\\n'
else
  echo no-git
fi
"""
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(
        ["bash", "-c", script, "sealed-test", str(repo)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    marker = home / "filter-ran"
    return done.stdout, marker.read_text() if marker.exists() else ""


# A clean filter that hides README.md's same-size edit from git status and leaves a marker.
FILTER = """printf '#!/bin/sh\\ncat >/dev/null\\necho ran >> "$HOME/filter-ran"\\n' > "$HOME/filter"
printf 'printf "calc\\\\n"\\n' >> "$HOME/filter" && chmod +x "$HOME/filter"
printf 'CALC\\n' > README.md
echo 'README.md filter=hide' >> .git/info/attributes
"""


@pytest.mark.parametrize(
    "where",
    [
        'printf "[filter \\"hide\\"]\\n\\tclean = $HOME/filter\\n" >> .git/config',
        'printf "[filter \\"hide\\"]\\n\\tclean = $HOME/filter\\n" >> "$HOME/.gitconfig"',
        'printf "[include]\\n\\tpath = $HOME/inc\\n" >> .git/config && '
        'printf "[filter \\"hide\\"]\\n\\tclean = $HOME/filter\\n" > "$HOME/inc"',
        'printf "[core]\\n\\tfsmonitor = $HOME/filter\\n" >> .git/config',
    ],
    ids=["repository-config", "global-config", "include", "fsmonitor"],
)
def test_a_planted_program_never_runs_and_the_edit_stays_visible(
    tmp_path: Path, where: str
) -> None:
    repo, home = _repository(tmp_path), tmp_path / "home"
    home.mkdir()

    status, marker = _run(repo, home, f"{FILTER}{where}")

    assert marker == ""
    assert " M README.md" in status.splitlines()


def test_the_status_before_and_after_agree_on_an_untouched_repository(tmp_path: Path) -> None:
    repo, home = _repository(tmp_path), tmp_path / "home"
    home.mkdir()

    status, _ = _run(repo, home, "")

    assert status == ""


def test_a_git_directory_replaced_by_a_symlink_gets_no_git_call(tmp_path: Path) -> None:
    repo, home = _repository(tmp_path), tmp_path / "home"
    home.mkdir()
    plant = (
        f"{FILTER}"
        'cp -a .git "$HOME/evil" && '
        'printf "[filter \\"hide\\"]\\n\\tclean = $HOME/filter\\n" >> "$HOME/evil/config" && '
        'rm -rf .git && ln -s "$HOME/evil" .git'
    )

    status, marker = _run(repo, home, plant)

    assert status.strip() == "no-git"
    assert marker == ""


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("/usr/local/bin:/usr/bin:/bin", "/usr/local/bin:/usr/bin:/bin"),
        (
            "/testbed/.venv/bin:/tmp/evil:/usr/bin",
            f"{PRISTINE_REPOSITORY}/.venv/bin:/usr/bin",
        ),
        ("bin:.::/var/tmp:/dev/shm/x:/var/tmpx:/testbed", f"/var/tmpx:{PRISTINE_REPOSITORY}"),
        ("/tmp/*:/usr/bin", "/usr/bin"),
        ("", ""),
    ],
)
def test_after_the_kill_commands_are_looked_up_only_where_the_run_could_not_write(
    given: str, kept: str
) -> None:
    script = f'{SEALED_PATH}\nsealed_path "$1"; echo; echo "$-"'
    done = subprocess.run(
        ["bash", "-c", script, "sh", given], capture_output=True, text=True, check=True
    )
    out, flags = done.stdout.split("\n")[:2]
    assert out == kept
    assert "f" not in flags, "globbing is restored"
    assert 'PATH=$(sealed_path "$PATH")' in WRAPPER
    assert WRAPPER.index('PATH=$(sealed_path "$PATH")') < WRAPPER.rindex("sealed status")
