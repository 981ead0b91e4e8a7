"""The LLM prompt's contents and its budget: base code from the fix, test patch, clipping."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.generate.prompt_budget import MIN_CAP, Part, cap_for, clip, fit
from hackaudit.attacker.domain.generate.strategies.base import Feedback, ProposalContext
from hackaudit.attacker.domain.generate.strategies.llm import LLMParams, build_prompt
from hackaudit.attacker.domain.reading import diffs, gold_source
from hackaudit.shared.contracts import Candidate, Provenance


@pytest.mark.parametrize(
    ("lengths", "available", "cap"),
    [
        ([10, 20, 30], 60, None),  # fits: nothing is cut
        ([10, 20, 30], 59, 29),  # only the longest loses a little
        ([10, 20, 300], 100, 70),  # the long one absorbs the whole cut
        ([100, 100, 100], 150, 50),  # equal parts are cut equally
        ([5, 1000, 2000], 1005, 500),  # the two long ones meet at one cap, the short one stays
        ([50, 50], -10, 0),  # nothing available
    ],
)
def test_cap_cuts_the_longest_parts_first(lengths, available, cap) -> None:
    assert cap_for(lengths, available) == cap
    if cap is not None and available >= 0:
        assert sum(min(n, cap) for n in lengths) <= available


def test_clip_keeps_head_and_tail_on_line_boundaries_and_the_limit() -> None:
    text = "".join(f"line {i:04d}\n" for i in range(1000))
    out = clip(text, 2000)
    assert len(out) <= 2000 and out.startswith("line 0000\n") and out.endswith("line 0999\n")
    head, marker, tail = out.partition("\n[... ")
    assert marker and head.splitlines()[-1] == "line 0097"  # whole lines up to the cut
    cut = int(tail.split(" characters cut")[0])
    kept = out.replace(f"\n[... {cut} characters cut ...]\n", "\n")
    assert len(text) - cut == len(kept) - 1
    assert all(line.startswith("line ") for line in kept.splitlines())  # no half lines
    assert clip("short", 100) == "short"


def test_fit_reports_each_cut_and_leaves_short_parts_whole() -> None:
    parts = [Part(name="a", text="x" * 100), Part(name="b", text="y\n" * 5000)]
    fitted, cuts = fit(parts, 3000)
    assert fitted[0] == parts[0]
    assert [c.name for c in cuts] == ["b"] and cuts[0].original_chars == 10000
    assert len(fitted[1].text) == cuts[0].kept_chars <= 2900
    # A budget nothing fits into still leaves every part MIN_CAP characters.
    fitted, cuts = fit(parts, 10)
    assert [len(p.text) for p in fitted] == [100, cuts[0].kept_chars]
    assert MIN_CAP - 30 <= cuts[0].kept_chars <= MIN_CAP


def test_base_excerpts_are_the_base_files_lines(tiny) -> None:
    gold = diffs.parse_patch(tiny.task.patch)
    text = gold_source.base_excerpts(gold)
    numbered = [line for line in text.splitlines() if " | " in line]
    assert numbered
    base = {
        f.path: (tiny.repo / f.path).read_text().splitlines() for f in gold.files if not f.is_new
    }
    current = ""
    for line in text.splitlines():
        if " | " in line:
            number, _, content = line.partition(" | ")
            assert base[current][int(number) - 1] == content, line
        elif line.endswith(":") and not line.startswith("lines "):
            current = line[:-1]
    assert "lines 13-25 (after `def clamp(value, low, high):`)" in text


def test_base_excerpts_of_new_files_and_pure_insertions() -> None:
    patch = diffs.parse_patch(
        "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
        "--- a/pkg/old.py\n+++ b/pkg/old.py\n@@ -4,0 +5 @@\n+y = 2\n"
    )
    text = gold_source.base_excerpts(patch)
    assert "pkg/new.py: new file (absent at the base commit)" in text
    assert "(the fix inserts after line 4)" in text


def test_prompt_carries_test_patch_and_base_code(tiny) -> None:
    prompt = build_prompt(tiny.task, ProposalContext(round=1, budget=2), LLMParams())
    assert "## Test patch" in prompt.user and tiny.task.test_patch.strip() in prompt.user
    assert "## Base code around the fix" in prompt.user
    assert "    16 |     return n % 2 == 1" in prompt.user
    assert "## Clipped to fit" not in prompt.user and "characters cut" not in prompt.user


def _blocked(n: int, size: int) -> Feedback:
    candidate = Candidate(
        instance_id="tiny__pkg-1",
        diff=f"--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1 +1 @@\n-a\n+b{n}\n",
        provenance=Provenance(strategy="mutation", round=1, detail=f"variant {n}"),
    )
    log = "".join(f"FAILED tests/test_core.py::test_{n}_{i}\n" for i in range(size // 40))
    return Feedback(label=f"B{n}", candidate=candidate, verdict="blocked", log=log)


def test_prompt_is_fitted_to_the_budget_longest_parts_first(tiny) -> None:
    huge_tests = tiny.task.test_patch + "+# padding\n" * 6000  # ~66k characters
    task = tiny.task.model_copy(update={"test_patch": huge_tests})
    context = ProposalContext(round=2, budget=2, feedback=(_blocked(1, 1500), _blocked(2, 1500)))
    params = LLMParams(prompt_budget_tokens=4000, max_test_patch_chars=100_000)
    prompt = build_prompt(task, context, params)
    assert len(prompt.user) + len(prompt.system) <= params.prompt_budget_chars
    note = prompt.user.split("## Clipped to fit\n", 1)[1].split("\n\n", 1)[0]
    assert "test patch (" in note and f"{len(huge_tests.rstrip()):,} ->" in note
    # The short parts are untouched: problem statement, fix, base code, the blocked diffs.
    for short in ("problem statement", "reference fix", "base code", "B1 diff", "B1 failure"):
        assert short not in note
    assert tiny.task.patch.strip() in prompt.user
    assert "+b1" in prompt.user and "FAILED tests/test_core.py::test_2_0" in prompt.user
    # The head of the test patch survives the cut.
    assert "+def test_is_even():" in prompt.user


def test_own_part_ceilings_are_reported_too(tiny) -> None:
    task = tiny.task.model_copy(update={"problem_statement": "word " * 4000})
    prompt = build_prompt(task, ProposalContext(), LLMParams(max_problem_chars=1000))
    assert "problem statement (20,000 -> " in prompt.user.replace("19,999", "20,000")
    without = build_prompt(task, ProposalContext(), LLMParams(max_problem_chars=100_000))
    assert "## Clipped to fit" not in without.user
