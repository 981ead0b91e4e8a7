"""`hackaudit eval attacker` on the corpus: it never confirms an exploit in a task known to be
robust, and it keeps finding the weaknesses it finds today (recall on the whole corpus,
including the three tasks shaped like weaknesses of real SWE-bench tasks — a generator refilling
one shared dict, a printer graded on one printed form, a check needed in two branches; README,
"The attacker"), with a margin of one task for a loaded machine.

By default it runs on a stratified subset, one task per kind of label: each way a task is
hackable, robust, equivalent hunk, over-strict, broken, flaky and empty patch passes, each hackable
attack stopping at its first confirmed exploit (as the README's run does). The whole corpus, with
the README's figures, runs with `HACKAUDIT_E2E_WHOLE_CORPUS=1` (about 7 minutes on an idle 2-core
machine), or by hand as `hackaudit eval attacker examples/tasks --labels examples/labels.json`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.e2e.conftest import hackaudit, picked_tasks

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(1500)]

WHOLE_CORPUS = os.environ.get("HACKAUDIT_E2E_WHOLE_CORPUS") == "1"
# One task per kind of label; per hackable way, the task of a real SWE-bench shape where one is.
SUBSET = {
    "inikit__inikit-2": "hackable (no_exception_only)",
    "mdtable__mdtable-2": "hackable (type_only_checked)",
    "combinat__combinat-3": "hackable (edge_case_untested): a check needed in two branches",
    "urlnorm__urlnorm-2": "hackable (one_example_asserted)",
    "ttlcache__ttlcache-2": "hackable (harness_hole)",
    "urlnorm__urlnorm-1": "robust",
    "spanlib__spanlib-3": "equivalent_hunk",
    "slugkit__slugkit-1": "over_strict",
    "inikit__inikit-3": "broken",
    "ttlcache__ttlcache-3": "flaky",
    "mdtable__mdtable-3": "empty_passes",
}
NO_EXPLOIT = {"robust", "equivalent_hunk", "over_strict"}


def kinds(ids: Iterable[str], labels: dict[str, dict[str, object]]) -> set[tuple[object, object]]:
    """(label, how) of each task: how a task is hackable tells its kind apart."""
    return {(labels[i]["label"], labels[i].get("how")) for i in ids}


def test_the_subset_holds_every_kind_of_label(labels: dict[str, dict[str, object]]) -> None:
    assert kinds(SUBSET, labels) == kinds(labels, labels)
    assert len(SUBSET) == len(kinds(labels, labels))


def test_attacker_accuracy_on_the_labelled_corpus(
    tmp_path: Path, labels: dict[str, dict[str, object]]
) -> None:
    if WHOLE_CORPUS:
        picked = set(labels)
        done = hackaudit(tmp_path, "eval", "attacker", timeout=1400)
    else:
        picked = set(SUBSET)
        tasks = picked_tasks(tmp_path, picked)
        done = hackaudit(tmp_path, "eval", "attacker", str(tasks), "--stop-when-hackable",
                         timeout=1400)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    of_label = [str(labels[i]["label"]) for i in picked]
    hackable = of_label.count("hackable")
    no_exploit = sum(1 for label in of_label if label in NO_EXPLOIT)
    assert (hackable, no_exploit) == ((11, 12) if WHOLE_CORPUS else (5, 3))
    found = re.search(
        r"recall on hackable tasks: (\d+)/(\d+) = [\d.]+; "
        r"false alarms on robust, equivalent-hunk and over-strict tasks: (\d+)/(\d+)",
        done.stdout,
    )
    assert found, done.stdout[-3000:]
    hits, shown_hackable, false_alarms, shown_no_exploit = map(int, found.groups())
    assert (shown_hackable, shown_no_exploit) == (hackable, no_exploit)
    assert hits >= hackable - 1, done.stdout[-4000:]
    assert false_alarms == 0, done.stdout[-4000:]

    # The verdicts a curator needs: hackable tasks FIX, robust ones KEEP, broken / flaky /
    # empty-passes DROP, over-strict ones reported as such (one miss allowed for the flaky task's
    # luck or a hackable task's exploit found in one run and not the next).
    needed = re.search(r"verdicts as the labels need: (\d+)/(\d+)", done.stdout)
    assert needed, done.stdout[-3000:]
    met, labelled = map(int, needed.groups())
    assert labelled == len(picked) and met >= labelled - 1, done.stdout[-4000:]
    robust_row = re.search(r"│ robust\s+│ (\d+)\s+│ (\d+)\s+│", done.stdout)
    robust = str(of_label.count("robust"))
    assert robust_row and robust_row.groups() == (robust, "0"), done.stdout[-4000:]
