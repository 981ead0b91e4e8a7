"""The LLM augmenter's prompt, and reading a test function out of the model's answer.

The model is told what the issue asks, what gold changes, the exploit the task's tests accept and
why it was shown wrong, where the new test goes and in which style, and every attempt already
rejected for this exploit with the gate's reason — so that the next attempt differs (another
input, another assertion) instead of repeating a rejected one. When the exploit changes lines of
gold that the task's tests never execute, the model is shown those lines and asked for a test
that executes them with the options the task's tests use and asserts gold's output there.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from hackaudit.repairer.domain.regression import Style
from hackaudit.shared.contracts import Candidate, ProbeDifference, ProposedTest, Task

MAX_PATCH_CHARS = 8000
MAX_ISSUE_CHARS = 6000
MAX_LINES = 20  # of gold's unexecuted lines shown
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)
_DEF = re.compile(r"^[ \t]*(async\s+)?def\s+(test\w*)\s*\(")

SYSTEM = (
    "You harden the test suite of a software task. The task's tests accept a patch that is "
    "wrong. Write ONE new test function that passes on the reference fix (gold) and fails on the "
    "wrong patch, asserting only behaviour the issue asks for, so that every correct fix still "
    "passes it. Answer with the test function alone in one ```python block."
)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n[... cut ...]"


def _style_text(style: Style, file: str, near: str) -> str:
    where = f"It goes into `{file}`, right after the test `{near}`"
    if style.method and style.unittest:
        return where + (
            ", as a method of the same unittest.TestCase class: take `self`, assert with "
            "self.assertEqual / self.assertRaises."
        )
    if style.method:
        return where + ", as a method of the same class: take `self`, use plain `assert`."
    return where + ", at module level: a plain function with plain `assert` statements."


def _differences(differences: Sequence[ProbeDifference]) -> str:
    if not differences:
        return "(no input was recorded on which the two differ)"
    return "\n".join(
        f"- `{d.expression}`: gold gives {d.gold}, the wrong patch gives {d.candidate}"
        for d in differences[:10]
    )


def _unexecuted(task: Task, lines: Sequence[str]) -> str:
    """Gold's lines ("path:N") with their text, and what a test should do about them."""
    patch = task.gold_diff.applied()
    shown = []
    for spot in lines[:MAX_LINES]:
        path, _, number = spot.rpartition(":")
        found = patch.file(path)
        text = next(
            (
                n.line.text
                for hunk in (found.hunks if found else ())
                for n in hunk.numbered()
                if str(n.new) == number
            ),
            "",
        )
        shown.append(f"- `{spot}`: `{text.strip()}`" if text.strip() else f"- `{spot}`")
    return "\n".join(
        [
            "The wrong patch changes these lines of gold, which no test of the task executes:",
            *shown,
            "Write the test so that it executes them on gold: call the code they belong to the "
            "way the task's tests call it (the same options, settings and keyword arguments), with "
            "a value of the kind these lines handle, and assert gold's exact output there.",
        ]
    )


def _rejected(tried: Sequence[ProposedTest]) -> str:
    if not tried:
        return ""
    parts = ["Attempts already rejected (write something different from each of them):"]
    for t in tried:
        reason = t.rejection.value if t.rejection else "accepted"
        parts.append(f"--- rejected: {reason}: {t.detail[:300]}\n{_cut(t.source, 1500)}")
    return "\n".join(parts)


def user_prompt(
    task: Task,
    exploit: Candidate,
    evidence: str,
    differences: Sequence[ProbeDifference],
    tried: Sequence[ProposedTest],
    style: Style,
    file: str,
    near: str,
    name_prefix: str,
    unexecuted: Sequence[str] = (),
) -> str:
    sections = [
        f"Repository: {task.repo}",
        "## The issue\n" + _cut(task.problem_statement or "(no issue text)", MAX_ISSUE_CHARS),
        "## The reference fix (gold)\n```diff\n" + _cut(task.patch, MAX_PATCH_CHARS) + "\n```",
        "## The task's test patch\n```diff\n" + _cut(task.test_patch, MAX_PATCH_CHARS) + "\n```",
        "## The wrong patch the tests accept\n```diff\n"
        + _cut(exploit.diff or str(exploit.files), MAX_PATCH_CHARS)
        + "\n```",
        "## Why it passed although it is wrong\n" + (evidence[:2000] or "(no evidence text)"),
        "## Inputs where it differs from gold\n" + _differences(differences),
        *(
            ["## Lines the task's tests never execute\n" + _unexecuted(task, unexecuted)]
            if unexecuted
            else []
        ),
        "## Where the test goes\n"
        + _style_text(style, file, near)
        + f" Name it `{name_prefix}...` (a name starting with `test_`). Import what it needs "
        "inside the function body.",
    ]
    rejected = _rejected(tried)
    if rejected:
        sections.append("## " + rejected)
    return "\n\n".join(sections)


def extract_test(answer: str) -> tuple[str, str] | None:
    """(function name, its text at column 0) of the first test function in the answer, with the
    decorators right above it; a method is taken out of its class."""
    blocks = _FENCE.findall(answer) or [answer]
    for block in blocks:
        lines = block.split("\n")
        at = next((i for i, ln in enumerate(lines) if _DEF.match(ln)), None)
        if at is None:
            continue
        match = _DEF.match(lines[at])
        assert match is not None
        level = len(lines[at]) - len(lines[at].lstrip())
        first = at
        while first > 0 and lines[first - 1].strip().startswith("@"):
            first -= 1
        end = len(lines)
        for i in range(at + 1, len(lines)):
            text = lines[i]
            indent = len(text) - len(text.lstrip())
            if text.strip() and indent <= level and text.lstrip()[0] not in ")]}":
                end = i
                break
        body = textwrap.dedent("\n".join(lines[first:end])).rstrip() + "\n"
        return match.group(2), body
    return None


def rename(source: str, old: str, new: str) -> str:
    return re.sub(rf"\bdef\s+{re.escape(old)}\s*\(", f"def {new}(", source, count=1)
