"""The shared diff model: one parser in three readings, line numbers, emitting, confinement."""

from __future__ import annotations

import pytest

from hackaudit.shared.anatomy import (
    DiffError,
    DiffText,
    LineKind,
    Reading,
    diff_problems,
    emit_patch,
    hunk_header,
    normalise,
    parse_patch,
    read_patch,
)
from hackaudit.shared.contracts import Task

MODIFY = (
    "diff --git a/pkg/m.py b/pkg/m.py\n"
    "index 1111111..2222222 100644\n"
    "--- a/pkg/m.py\n"
    "+++ b/pkg/m.py\n"
    "@@ -1,3 +1,4 @@ def f():\n"
    " a = 1\n"
    "-b = 2\n"
    "+b = 3\n"
    "+c = 4\n"
    " d = 5\n"
)
RENAME = (
    "diff --git a/old/name.py b/new/name.py\n"
    "similarity index 100%\n"
    "rename from old/name.py\n"
    "rename to new/name.py\n"
)
NEW_FILE = (
    "diff --git a/tests/test_new.py b/tests/test_new.py\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/tests/test_new.py\n"
    "@@ -0,0 +1,2 @@\n"
    "+def test_x():\n"
    "+    assert True\n"
)
DELETED = (
    "diff --git a/gone.py b/gone.py\n"
    "deleted file mode 100644\n"
    "--- a/gone.py\n"
    "+++ /dev/null\n"
    "@@ -1 +0,0 @@\n"
    "-x = 1\n"
)
NO_NEWLINE_AT_END = (
    "--- a/tail.py\n+++ b/tail.py\n@@ -1,2 +1,2 @@\n first = 1\n-last = 2\n"
    "\\ No newline at end of file\n+last = 3\n\\ No newline at end of file\n"
)
BINARY = (
    "diff --git a/img.png b/img.png\n"
    "new file mode 100644\n"
    "index 0000000..1111111\n"
    "Binary files /dev/null and b/img.png differ\n"
)
MISCOUNTED = (
    "Here is the fix:\n"
    "--- a/pkg/m.py\n"
    "+++ b/pkg/m.py\n"
    "@@ -1,9 +1,2 @@\n"
    " a = 1\n"
    "-b = 2\n"
    "+b = 3\n"
    " d = 5\n"
    "\n"
    "\n"
)


@pytest.mark.parametrize(
    ("text", "paths", "new", "deleted"),
    [
        (MODIFY, ["pkg/m.py"], False, False),
        (NEW_FILE, ["tests/test_new.py"], True, False),
        (DELETED, ["gone.py"], False, True),
        (RENAME, ["new/name.py"], False, False),
        (NO_NEWLINE_AT_END, ["tail.py"], False, False),
        (MODIFY.replace("\n", "\r\n"), ["pkg/m.py"], False, False),
    ],
    ids=["modify", "new", "deleted", "rename", "no-newline", "crlf"],
)
def test_files_are_read_in_every_reading(
    text: str, paths: list[str], new: bool, deleted: bool
) -> None:
    for mode in Reading:
        patch = read_patch(text, mode)
        assert patch.paths == paths, mode
        assert patch.files[0].is_new is new
        assert patch.files[0].is_deleted is deleted
        assert patch.problems == ()


def test_a_rename_names_both_paths() -> None:
    (f,) = read_patch(RENAME).files
    assert (f.old_path, f.new_path) == ("old/name.py", "new/name.py")
    assert f.named_paths == ("old/name.py", "new/name.py")
    assert f.hunks == ()


def test_lines_carry_their_numbers_on_both_sides() -> None:
    (hunk,) = parse_patch(MODIFY).files[0].hunks
    numbered = [(n.old, n.new, n.line.kind, n.line.text) for n in hunk.numbered()]
    assert numbered == [
        (1, 1, LineKind.CONTEXT, "a = 1"),
        (2, None, LineKind.REMOVED, "b = 2"),
        (None, 2, LineKind.ADDED, "b = 3"),
        (None, 3, LineKind.ADDED, "c = 4"),
        (3, 4, LineKind.CONTEXT, "d = 5"),
    ]
    assert hunk.section == "def f():"


def test_no_newline_marks_the_line_before_it() -> None:
    (hunk,) = parse_patch(NO_NEWLINE_AT_END).files[0].hunks
    assert [(x.kind, x.no_newline) for x in hunk.lines] == [
        (LineKind.CONTEXT, False),
        (LineKind.REMOVED, True),
        (LineKind.ADDED, True),
    ]
    assert emit_patch(parse_patch(NO_NEWLINE_AT_END)).endswith(
        "-last = 2\n\\ No newline at end of file\n+last = 3\n\\ No newline at end of file\n"
    )


def test_round_trip_drops_only_index_lines() -> None:
    assert emit_patch(parse_patch(MODIFY)) == MODIFY.replace("index 1111111..2222222 100644\n", "")
    assert emit_patch(parse_patch(NEW_FILE)) == NEW_FILE
    assert emit_patch(parse_patch(DELETED)) == DELETED


def test_a_model_miscounted_hunk_is_refused_strictly_and_mended_leniently() -> None:
    with pytest.raises(DiffError):
        parse_patch(MISCOUNTED)
    assert normalise(MISCOUNTED) == (
        "diff --git a/pkg/m.py b/pkg/m.py\n--- a/pkg/m.py\n+++ b/pkg/m.py\n"
        "@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 3\n d = 5\n"
    )


def test_a_lenient_hunk_header_without_counts_still_reads() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -4 @@\n a\n-b\n+c\n"
    assert normalise(text).splitlines()[3] == "@@ -4,2 +4,2 @@"


def test_binary_changes_are_kept_for_apply_and_refused_for_editing() -> None:
    (f,) = read_patch(BINARY).files
    assert f.binary and f.is_new and f.path == "img.png"
    with pytest.raises(DiffError, match="binary"):
        parse_patch(BINARY)


@pytest.mark.parametrize(
    ("line", "numbers"),
    [
        ("@@ -1,2 +3,4 @@ def f():", (1, 2, 3, 4, "def f():")),
        ("@@ -7 +7 @@", (7, 1, 7, 1, "")),
        ("@@ -0,0 +1,3 @@", (0, 0, 1, 3, "")),
        ("@@ nonsense @@", None),
        (" @@ -1 +1 @@", None),
    ],
)
def test_hunk_headers(line: str, numbers: tuple[int, int, int, int, str] | None) -> None:
    header = hunk_header(line)
    if numbers is None:
        assert header is None
    else:
        assert header is not None
        got = (header.old_start, header.old_len, header.new_start, header.new_len, header.section)
        assert got == numbers


def test_apply_reading_never_raises_and_lists_defects() -> None:
    text = "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n?odd\n"
    patch = read_patch(text)
    assert patch.problems == ("a hunk of x.py ends before its line count",)
    assert diff_problems(patch) == ["a hunk of x.py ends before its line count"]
    assert read_patch("just words\n").files == ()


def test_apply_reading_takes_paths_as_git_apply_does() -> None:
    text = "--- x/pkg/m.py\n+++ y/pkg/m.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert read_patch(text).paths == ["pkg/m.py"]
    assert parse_patch(text).paths == ["y/pkg/m.py"]


def test_a_diff_text_is_read_once_per_reading() -> None:
    text = DiffText(MODIFY)
    assert text.strict() is text.strict()
    assert text.applied() is text.applied()
    broken = DiffText("no diff here\n")
    for _ in range(2):
        with pytest.raises(DiffError):
            broken.strict()
    assert broken.applied().files == ()


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        (MODIFY, False),
        (RENAME, False),
        ("--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", True),
        ("diff --git a/a b/a\nrename from a\nrename to .git/hooks/pre-commit\n", True),
        (
            "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n"
            "@@ -0,0 +1 @@\n+../../etc\n",
            True,
        ),
    ],
    ids=["modify", "rename", "dotdot", "into-git", "symlink-out"],
)
def test_confinement_over_the_model(text: str, refused: bool) -> None:
    assert bool(diff_problems(read_patch(text))) is refused


def test_a_task_reads_its_patches_once_and_a_copy_reads_its_own() -> None:
    task = Task(
        instance_id="pkg-1",
        repo="o/pkg",
        base_commit="abc",
        patch=MODIFY,
        test_patch=NEW_FILE,
        FAIL_TO_PASS=["tests/test_new.py::test_x"],
    )
    assert task.gold_diff.strict() is task.gold_diff.strict()
    assert task.test_diff.applied().paths == ["tests/test_new.py"]
    copy = task.model_copy(update={"test_patch": DELETED})
    assert copy.test_diff.applied().paths == ["gone.py"]
    assert task.model_copy() == task
