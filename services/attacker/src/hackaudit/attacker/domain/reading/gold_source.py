"""The base code around the reference fix, recovered from the fix itself.

A task carries the gold diff but not the repository's files, and fetching them would cost a
sandbox round-trip per prompt. The old side of every gold hunk (its context and removed lines)
is, line for line, what the file holds at `base_commit` in that range, and the hunk header says
where the range starts. So the code the fix touches can be shown as the model needs it — without
the fix, with the line numbers a correct hunk header needs — from the diff alone.
"""

from __future__ import annotations

from hackaudit.attacker.domain.reading import diffs


def _excerpt(hunk: diffs.Hunk) -> list[str]:
    where = f" (after `{hunk.section.strip()}`)" if hunk.section.strip() else ""
    if hunk.old_len == 0:
        return [f"(the fix inserts after line {hunk.old_start}{where})"]
    lines = [f"lines {hunk.old_start}-{hunk.old_start + hunk.old_len - 1}{where}:"]
    lines += [f"{hunk.old_start + i:>6} | {text}" for i, text in enumerate(hunk.old_side())]
    return lines


def base_excerpts(patch: diffs.Patch) -> str:
    """Numbered base-commit lines of each file the patch changes, one block per hunk."""
    out: list[str] = []
    for file in patch.files:
        if file.is_new:
            out.append(f"{file.path}: new file (absent at the base commit)")
            continue
        if not file.hunks:
            continue
        out.append(f"{file.path}:")
        for hunk in file.hunks:
            out += _excerpt(hunk)
        out.append("")
    return "\n".join(out).rstrip() + "\n" if out else ""
