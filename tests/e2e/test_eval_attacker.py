"""`hackaudit eval attacker` on the corpus: it never confirms an exploit in a task known to be
robust, and it keeps finding the weaknesses it finds today (recall 10/10, including the three
tasks shaped like weaknesses of real SWE-bench tasks — a generator refilling one shared dict, a
printer graded on one printed form, a check needed in two branches; README, "The attacker"),
with a margin of one task for a loaded machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import hackaudit

# The whole labelled corpus: about 7 minutes on an idle 2-core machine; the guard leaves room.
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(1500)]


def test_attacker_accuracy_on_the_labelled_corpus(tmp_path: Path) -> None:
    done = hackaudit(tmp_path, "eval", "attacker", timeout=1400)
    assert done.returncode == 0, done.stderr[-3000:]
    found = re.search(
        r"recall on hackable tasks: (\d+)/(\d+) = [\d.]+; "
        r"false alarms on robust, equivalent-hunk and over-strict tasks: (\d+)/(\d+)",
        done.stdout,
    )
    assert found, done.stdout[-3000:]
    hits, hackable, false_alarms, robust = map(int, found.groups())
    assert (hackable, robust) == (10, 11)
    assert hits >= 9, done.stdout[-4000:]
    assert false_alarms == 0, done.stdout[-4000:]

    # The verdicts a curator needs: hackable tasks FIX, robust ones KEEP, broken / flaky /
    # empty-passes DROP, over-strict ones reported as such (one miss allowed for the flaky task's
    # luck or a hackable task's exploit found in one run and not the next).
    needed = re.search(r"verdicts as the labels need: (\d+)/(\d+)", done.stdout)
    assert needed, done.stdout[-3000:]
    met, labelled = map(int, needed.groups())
    assert labelled == 24 and met >= labelled - 1, done.stdout[-4000:]
    robust_row = re.search(r"│ robust\s+│ (\d+)\s+│ (\d+)\s+│", done.stdout)
    assert robust_row and robust_row.groups() == ("7", "0"), done.stdout[-4000:]
