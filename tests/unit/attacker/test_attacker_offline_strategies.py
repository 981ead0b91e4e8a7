"""Partial fixes, harness exploits and special-casing on the tiny task: real diffs, real git."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.generate.strategies import (
    harness,
    offline_pools,
    partial,
    special_casing,
)
from hackaudit.attacker.domain.generate.strategies.base import Category, ProposalContext
from hackaudit.shared.contracts import Candidate, RunPurpose, RunRequested


def _changes(diff: str) -> list[str]:
    return [ln for ln in diff.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]


def test_partial_fixes_are_strict_subsets_of_gold_that_apply(tiny) -> None:
    produced = partial.partial_fixes(tiny.task)
    gold = _changes(tiny.task.patch)
    details = [c.provenance.detail for c in produced]
    assert any("without pkg/core.py hunk" in d for d in details)
    assert any("lines of change" in d for d in details)  # a whole added block reverted
    assert any("line reverted" in d for d in details)  # a single line reverted
    for c in produced:
        assert tiny.applies(c.diff) == (True, ""), c.provenance.detail
        changes = _changes(c.diff)
        assert changes and len(changes) < len(gold)
        assert set(changes) <= set(gold)
        assert (
            c.provenance.parent_id
            == Candidate(instance_id="tiny__pkg-1", diff=tiny.task.patch).candidate_id
        )


def test_partial_fixes_that_would_not_parse_are_left_out(tiny) -> None:
    # Reverting only `if n is None:` would leave `return False` over-indented.
    for c in partial.partial_fixes(tiny.task):
        added = [ln[1:] for ln in _changes(c.diff) if ln.startswith("+")]
        assert not ("        return False" in added and "    if n is None:" not in added)


DOCUMENTED = '''diff --git a/pkg/m.py b/pkg/m.py
--- a/pkg/m.py
+++ b/pkg/m.py
@@ -1,3 +1,7 @@
 def f(x):
-    """Old."""
-    return x
+    """New text.
+
+    More text.
+    """
+    # why
+    return x + 1
'''


def test_partial_fixes_that_only_revert_text_are_left_out(tiny) -> None:
    task = tiny.task.model_copy(update={"patch": DOCUMENTED})
    produced = partial.partial_fixes(task)
    assert produced  # each reverts the one line of code, whatever text goes with it
    assert all("+    return x + 1" not in c.diff for c in produced)


def test_every_harness_variant_is_produced_and_applies(tiny) -> None:
    produced = harness.harness_exploits(tiny.task)
    variants = {c.provenance.detail.split(":")[0] for c in produced}
    # pytest captures what an import prints: its forged output is printed at exit only.
    assert variants == set(harness.VARIANTS) - {"forged_pass_lines_then_exit"}
    for c in produced:
        assert tiny.applies(c.diff) == (True, ""), c.provenance.detail
        assert c.provenance.strategy == "harness"


def test_shadowed_test_file_stubs_every_graded_test_in_it(tiny) -> None:
    (shadow,) = harness.shadow_test_file(tiny.task)
    assert "+++ b/tests/test_new.py" in shadow.diff
    assert "ids=['values0-2.0', 'values1-4.0']" in shadow.diff
    assert "+class TestBox:" in shadow.diff and "+    def test_area(self):" in shadow.diff


def test_package_paths_come_from_gold(tiny) -> None:
    (conftest,) = harness.conftest_in_test_dir(tiny.task)
    assert "+++ b/tests/conftest.py" in conftest.diff and "--- a/tests/conftest.py" in conftest.diff
    (exit_zero,) = harness.exit_zero_at_import(tiny.task)
    assert "+++ b/pkg/core.py" in exit_zero.diff and "+_ha_sys.exit(0)" in exit_zero.diff


@pytest.mark.parametrize(
    ("variant", "resolved"),
    [
        ("conftest_report_rewrite", True),
        ("report_patch_at_import", True),
        ("tampered_test_patch", None),  # the test patch then no longer applies
        ("hard_exit_at_import", False),
    ],
)
async def test_harness_exploits_against_a_real_run(tiny, local_sandbox, variant, resolved) -> None:
    candidate = harness.harness_exploits(tiny.task, (variant,))[0]
    done = await local_sandbox.run(
        RunRequested(
            correlation_id="c", task=tiny.task, purpose=RunPurpose.CANDIDATE, candidate=candidate
        )
    )
    assert done.result.resolved is resolved, done.result.log_tail[-2000:]


def test_special_casing_guards_the_test_literals_only(tiny) -> None:
    produced = special_casing.special_cases(tiny.task)
    assert produced
    merged = produced[0]
    assert "is_even, mean, area" in merged.provenance.detail
    assert "+    if n.__class__ is int and n == 4:\n+        return True" in merged.diff
    assert "+    if n is None:\n+        return False" in merged.diff
    assert "+    if values.__class__ is list and values == []:\n+        return 0.0" in merged.diff
    assert "+        return 9" in merged.diff
    assert "n % 2 == 0" not in merged.diff  # gold's fix is not in it
    for c in produced:
        assert tiny.applies(c.diff) == (True, ""), c.provenance.detail


async def test_special_casing_passes_the_real_suite(tiny, local_sandbox) -> None:
    merged = special_casing.special_cases(tiny.task)[0]
    done = await local_sandbox.run(
        RunRequested(
            correlation_id="c", task=tiny.task, purpose=RunPurpose.CANDIDATE, candidate=merged
        )
    )
    assert done.result.resolved is True


def test_offline_pools_group_by_family_and_propose_respects_seen(tiny) -> None:
    pools = offline_pools(tiny.task)
    assert set(pools) == {
        Category.HARNESS,
        Category.SPECIAL_CASE,
        Category.PARTIAL_FIX,
        Category.MUTATION,
    }
    assert all(pools.values())


async def test_offline_strategy_propose_skips_seen_and_sets_round(tiny) -> None:
    everything = partial.STRATEGY.candidates(tiny.task)
    seen = frozenset({everything[0].content_hash})
    got = await partial.STRATEGY.propose(tiny.task, ProposalContext(round=2, budget=3, seen=seen))
    assert len(got) == 3
    assert everything[0].content_hash not in {c.content_hash for c in got}
    assert {c.provenance.round for c in got} == {2}


def test_strategies_return_nothing_for_an_unparseable_gold(tiny) -> None:
    broken = tiny.task.model_copy(update={"patch": "not a diff"})
    assert partial.partial_fixes(broken) == []
    assert special_casing.special_cases(broken) == []
    assert harness.always_equal(broken) == []
