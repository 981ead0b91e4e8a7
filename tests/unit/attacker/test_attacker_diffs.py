"""The unified-diff editor: parse, revert, insert, merge, emit — and git accepts what it emits."""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.reading import diffs
from hackaudit.attacker.domain.reading.diffs import DiffError, LineKind

TWO_HUNKS = """\
diff --git a/m.py b/m.py
index 1111111..2222222 100644
--- a/m.py
+++ b/m.py
@@ -1,4 +1,5 @@
 a = 1
-b = 2
+b = 3
+c = 4
 d = 5
 e = 6
@@ -10,3 +11,3 @@ def f():
 x = 1
-y = 2
+y = 20
 z = 3
"""

FILES = {
    "m.py": "a = 1\nb = 2\nd = 5\ne = 6\n5\n6\n7\n8\n9\nx = 1\ny = 2\nz = 3\n",
    "tail.py": "first = 1\nlast = 2",  # no newline at end of file
}


def test_round_trip_keeps_the_diff_minus_index_lines() -> None:
    emitted = diffs.emit_patch(diffs.parse_patch(TWO_HUNKS))
    assert emitted == TWO_HUNKS.replace("index 1111111..2222222 100644\n", "")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("just some text\n", "no file section"),
        ("diff --git a/x b/x\n--- a/x\nno plus line\n", "not followed"),
        ("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n", "does not match"),
        ("--- a/x\n+++ b/x\n@@ nonsense @@\n a\n", "malformed hunk header"),
        ("--- a/x\n+++ b/x\n@@ -1 +1 @@\n?odd\n", "unexpected line"),
        ("--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n", "both sides"),
    ],
)
def test_malformed_diffs_are_rejected_with_a_reason(bad: str, message: str) -> None:
    with pytest.raises(DiffError, match=message):
        diffs.parse_patch(bad)


def test_lenient_parse_recounts_wrong_headers() -> None:
    wrong = "--- a/m.py\n+++ b/m.py\n@@ -1,9 +1,9 @@\n a = 1\n-b = 2\n+b = 3\n d = 5\n"
    with pytest.raises(DiffError):
        diffs.parse_patch(wrong)
    assert "@@ -1,3 +1,3 @@" in diffs.normalise(wrong)


# Each case: which slots (by their added/removed text) to revert -> the lines the result keeps.
REVERTS = [
    ("changed line b", ["b = 3"], ["+c = 4", "-y = 2", "+y = 20"]),
    ("pure addition c", ["c = 4"], ["-b = 2", "+b = 3", "-y = 2", "+y = 20"]),
    ("second hunk", ["y = 20"], ["-b = 2", "+b = 3", "+c = 4"]),
    ("everything", ["b = 3", "c = 4", "y = 20"], []),
]


@pytest.mark.parametrize(("name", "revert", "kept"), REVERTS, ids=[r[0] for r in REVERTS])
def test_revert_keeps_the_rest_and_still_applies(git_repo, name, revert, kept) -> None:
    repo = git_repo(FILES)
    patch = diffs.parse_patch(TWO_HUNKS)
    refs = [s.ref for s in diffs.slots(patch) if s.added in revert]
    text = diffs.emit_patch(diffs.revert(patch, refs))
    changes = [ln for ln in text.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert changes == kept
    if text:
        assert repo.applies(text) == (True, "")


def test_slots_pair_a_removed_line_with_its_most_similar_addition() -> None:
    patch = diffs.parse_patch(
        "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,4 @@\n a = 1\n-b = 2\n+if x:\n+    b = 3\n d = 5\n"
    )
    assert [(s.removed, s.added) for s in diffs.slots(patch)] == [
        (None, "if x:"),
        ("b = 2", "    b = 3"),
    ]


def test_new_file_and_insertion_apply(git_repo) -> None:
    repo = git_repo(FILES)
    patch = diffs.parse_patch(TWO_HUNKS)
    f = patch.files[0]
    inserted = diffs.insertion(f, f.hunks[1], 1, ["w = 0"])
    new = diffs.new_file("pkg/new.py", "print('hi')\n")
    text = diffs.emit_patch(diffs.Patch(files=(inserted, new)))
    assert repo.applies(text) == (True, "")
    assert "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+print('hi')" in text
    assert "+w = 0\n y = 2" in text


def test_file_without_final_newline_keeps_its_marker(git_repo) -> None:
    repo = git_repo(FILES)
    marker = "\\ No newline at end of file\n"
    header = "--- a/tail.py\n+++ b/tail.py\n@@ -1,2 +1,2 @@\n"
    text = f"{header} first = 1\n-last = 2\n{marker}+last = 3\n{marker}"
    patch = diffs.parse_patch(text)
    assert patch.files[0].hunks[0].lines[-1].no_newline
    assert repo.applies(diffs.emit_patch(patch)) == (True, "")
    reverted = diffs.revert(patch, [s.ref for s in diffs.slots(patch)])
    assert reverted.files == ()
    with pytest.raises(DiffError):
        diffs.insertion(patch.files[0], patch.files[0].hunks[0], 2, ["x"])


def test_replace_and_insert_lines_recompute_headers(git_repo) -> None:
    repo = git_repo(FILES)
    patch = diffs.parse_patch(TWO_HUNKS)
    index = next(i for i, ln in enumerate(patch.files[0].hunks[0].lines) if ln.text == "c = 4")
    patch = diffs.replace_line(patch, 0, 0, index, "c = 5")
    patch = diffs.insert_lines(patch, 0, 0, index, ["q = 1", "r = 2"])
    text = diffs.emit_patch(patch)
    assert "@@ -1,4 +1,7 @@" in text
    assert "@@ -10,3 +13,3 @@ def f():" in text
    assert repo.applies(text) == (True, "")
    with pytest.raises(DiffError):
        diffs.replace_line(patch, 0, 0, 0, "context cannot be replaced")


def test_merge_interleaves_overlapping_insertions(git_repo) -> None:
    repo = git_repo(FILES)
    f = diffs.parse_patch(TWO_HUNKS).files[0]
    a = diffs.Patch(files=(diffs.insertion(f, f.hunks[0], 1, ["one = 1"]),))
    b = diffs.Patch(files=(diffs.insertion(f, f.hunks[0], 3, ["two = 2"]),))
    merged = diffs.merge(a, b)
    assert len(merged.files) == 1 and len(merged.files[0].hunks) == 1
    assert repo.applies(diffs.emit_patch(merged)) == (True, "")
    kinds = [ln.kind for ln in merged.files[0].hunks[0].lines]
    assert kinds.count(LineKind.ADDED) == 2


def test_merge_refuses_overlapping_changes() -> None:
    patch = diffs.parse_patch(TWO_HUNKS)
    with pytest.raises(DiffError):
        diffs.merge(patch, patch)


def test_added_blocks_are_the_runs_of_added_lines_or_a_new_file_whole() -> None:
    patch = diffs.parse_patch(TWO_HUNKS)
    assert list(diffs.added_blocks(patch.files[0])) == ["b = 3\nc = 4", "y = 20"]
    created = diffs.new_file("n.py", "a = 1\nb = 2\n")
    assert list(diffs.added_blocks(created)) == ["a = 1\nb = 2"]
