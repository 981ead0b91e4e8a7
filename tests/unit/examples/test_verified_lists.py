"""UTBoost's lists against the same rows classified here: equal lists counted, every test on one
side only named, and the rows the classification could not list given with why."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "real"))

from realcorpus.lists_check import compare_lists, lists_markdown

OFFICIAL = [
    {"instance_id": "a__a-1", "FAIL_TO_PASS": '["t1"]', "PASS_TO_PASS": '["p1", "p2"]'},
    {"instance_id": "a__a-2", "FAIL_TO_PASS": ["t1", "t2"], "PASS_TO_PASS": ["net"]},
    {"instance_id": "a__a-3", "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": []},
]
CLASSIFIED = [
    {"instance_id": "a__a-1", "FAIL_TO_PASS": ["t1"], "PASS_TO_PASS": ["p2", "p1"]},
    {"instance_id": "a__a-2", "FAIL_TO_PASS": ["t2", "t3"], "PASS_TO_PASS": []},
]


def test_lists_are_compared_test_by_test() -> None:
    found = compare_lists(OFFICIAL, CLASSIFIED, {"a__a-3": "no test fails without the fix"})

    assert found["compared"] == 2
    assert (found["f2p_equal"], found["p2p_equal"]) == (1, 1)
    assert found["f2p_tests"] == {"utboost": 3, "classified": 3, "both": 2}
    assert found["p2p_tests"] == {"utboost": 3, "classified": 2, "both": 2}
    [_, second] = found["tasks"]
    assert second["f2p"]["utboost_only"] == ["t1"] and second["f2p"]["classified_only"] == ["t3"]
    assert second["p2p"]["utboost_only"] == ["net"]
    assert found["not_listed"] == {"a__a-3": "no test fails without the fix"}

    text = lists_markdown(found)
    assert "| FAIL_TO_PASS | 1 of 2 | 3 | 3 | 2 |" in text
    assert "| `a__a-2` | 1 / 1 (`t1`…) | 1 / 0 (`net`…) |" in text
    assert "- `a__a-3`: not listed here: no test fails without the fix" in text
