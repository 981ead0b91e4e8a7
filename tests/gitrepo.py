"""Git in the small repositories tests make: one command, its output, failing loudly."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git_output(repo: Path, *args: str) -> str:
    """`git args` in `repo` with a throwaway identity; the stripped stdout (raises on failure)."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()
