"""Diff headers, path confinement, test-file and test-configuration detection, patch flags."""

from __future__ import annotations

import pytest

from hackaudit.sandbox.domain.confinement import (
    diff_problems,
    mapping_problems,
    path_problem,
    symlink_problem,
)
from hackaudit.sandbox.domain.flags import config_verdicts, patch_flags, porcelain_paths
from hackaudit.sandbox.domain.test_paths import sectioned_changes_from_full_diff
from hackaudit.shared.anatomy import (
    is_test_config,
    is_test_file,
    read_patch,
    touches_test_sections,
    unquote_path,
)

MODIFY = """diff --git a/src/m.py b/src/m.py
index 1111111..2222222 100644
--- a/src/m.py
+++ b/src/m.py
@@ -1,3 +1,3 @@
 x = 1
---- a comment that looks like a header
+++++ another
"""

CREATE_DELETE_RENAME = """diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
+print(1)
diff --git a/old.py b/old.py
deleted file mode 100644
--- a/old.py
+++ /dev/null
@@ -1 +0,0 @@
-print(0)
diff --git a/a.py b/b.py
similarity index 100%
rename from a.py
rename to b.py
diff --git a/tool.sh b/tool.sh
old mode 100644
new mode 100755
diff --git "a/sp ace\\303\\251.py" "b/sp ace\\303\\251.py"
--- "a/sp ace\\303\\251.py"
+++ "b/sp ace\\303\\251.py"
@@ -1 +1 @@
-a
+b
"""


def test_hunk_bodies_are_counted_not_read_as_headers() -> None:
    parsed = read_patch(MODIFY)

    assert parsed.named_paths == ("src/m.py",)
    assert parsed.files[0].removed_lines == ["--- a comment that looks like a header"]
    assert parsed.files[0].added_lines == ["++++ another"]


def test_created_deleted_renamed_and_quoted_paths() -> None:
    parsed = read_patch(CREATE_DELETE_RENAME)
    by_path = {change.path: change for change in parsed.files}

    assert parsed.named_paths == ("new.py", "old.py", "a.py", "b.py", "tool.sh", "sp aceé.py")
    assert by_path["new.py"].is_new
    assert by_path["old.py"].new_path is None
    assert parsed.modified_existing == ("old.py", "a.py", "tool.sh", "sp aceé.py")
    assert diff_problems(parsed) == []


def test_plain_diff_without_git_headers() -> None:
    diff = "--- a/x.py\t2024-01-01\n+++ b/x.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n"
    assert read_patch(diff).named_paths == ("x.py",)


def test_unquote_path_reads_octal_utf8() -> None:
    assert unquote_path('"a/\\303\\251t\\303\\251.py"') == "a/été.py"


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("src/ok.py", False),
        ("deep/a/b/c.txt", False),
        ("", True),
        ("/etc/passwd", True),
        ("~/x", True),
        ("../x", True),
        ("a/../../x", True),
        (".git/config", True),
        ("sub/.GIT/hooks/post-checkout", True),
        ("a\nb", True),
    ],
)
def test_path_confinement(path: str, refused: bool) -> None:
    assert (path_problem(path) is not None) is refused


@pytest.mark.parametrize(
    ("link", "target", "refused"),
    [
        ("docs/link", "../README.md", False),
        ("docs/link", "sub/file", False),
        ("docs/link", "../../etc", True),
        ("link", "/etc/passwd", True),
        ("link", ".git/config", True),
        ("link", "", True),
    ],
)
def test_symlink_targets(link: str, target: str, refused: bool) -> None:
    assert (symlink_problem(link, target) is not None) is refused


@pytest.mark.parametrize(
    "diff",
    [
        "diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n",
        "--- /dev/null\n+++ /etc/cron.d/x\n@@ -0,0 +1 @@\n+x\n",
        "--- a/../../x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
        "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n",
        "diff --git a/l b/l\nold mode 100644\nnew mode 120000\n"
        "--- a/l\n+++ b/l\n@@ -1 +1 @@\n-x\n+../..\n",
        "diff --git a/a b/a\nrename from a\nrename to ../a\n",
        "*** a/x\n--- b/x\n***************\n*** 1 ****\n! a\n--- 1 ----\n! b\n",
    ],
    ids=[
        "dotdot",
        "absolute",
        "dotdot-old-side",
        "new-symlink",
        "mode-to-symlink",
        "rename",
        "context",
    ],
)
def test_escaping_diffs_are_refused(diff: str) -> None:
    assert diff_problems(read_patch(diff))


def test_mapping_problems() -> None:
    assert mapping_problems({"a.py": "x", "b/c.py": None}) == []
    assert mapping_problems({"../a.py": "x"})
    assert mapping_problems({"a.py": "x", "./a.py": "y"})


@pytest.mark.parametrize(
    ("path", "test_file", "config"),
    [
        ("tests/test_ops.py", True, False),
        ("src/pkg/tests/helpers.py", True, False),
        ("test_x.py", True, False),
        ("pkg/x_test.py", True, False),
        ("tests/conftest.py", False, True),
        ("pytest.ini", False, True),
        ("tests/runtests.py", False, True),
        ("bin/test", False, True),
        ("setup.cfg", False, False),
        ("src/pkg/core.py", False, False),
        ("src/testing_utils.py", False, False),
    ],
)
def test_test_file_and_config_classification(path: str, test_file: bool, config: bool) -> None:
    assert is_test_file(path) is test_file
    assert is_test_config(path) is config


@pytest.mark.parametrize(
    ("path", "hunk", "verdict"),
    [
        (
            "setup.cfg",
            ["@@ -1,3 +1,3 @@", " [tool:pytest]", "-addopts = -x", "+addopts = -q"],
            True,
        ),
        ("setup.cfg", ["@@ -1,3 +1,3 @@", " [metadata]", "-version = 1", "+version = 2"], False),
        ("setup.cfg", ["@@ -8,3 +8,3 @@", " a = 1", "-b = 2", "+b = 3"], None),
        (
            "tox.ini",
            ["@@ -1,2 +1,2 @@", " [testenv:py39]", "-commands = pytest", "+commands = true"],
            True,
        ),
        (
            "pyproject.toml",
            ["@@ -1,2 +1,3 @@", " [project]", "+name = 'x'", "+[tool.pytest.ini_options]"],
            True,
        ),
        ("pyproject.toml", [], None),
        ("README.md", ["@@ -1 +1 @@", "-a", "+b"], False),
    ],
)
def test_test_sections(path: str, hunk: list[str], verdict: bool | None) -> None:
    hunks = read_patch("\n".join([f"--- a/{path}", f"+++ b/{path}", *hunk, ""])).files[0].hunks
    assert touches_test_sections(path, hunks) is verdict


def test_sections_from_a_whole_file_diff() -> None:
    full = (
        "diff --git a/setup.cfg b/setup.cfg\n--- a/setup.cfg\n+++ b/setup.cfg\n"
        "@@ -1,5 +1,5 @@\n [metadata]\n name = calc\n \n"
        " [tool:pytest]\n-addopts = -x\n+addopts = -q\n"
    )
    assert sectioned_changes_from_full_diff(full) == {"setup.cfg": True}


def test_porcelain_paths_read_renames() -> None:
    raw = b" M src/a.py\0?? new file.txt\0R  b.py\0a.py\0"
    assert porcelain_paths(raw) == ["src/a.py", "new file.txt", "b.py", "a.py"]


def test_patch_flags() -> None:
    candidate = ["src/m.py", "tests/test_m.py", "tests/conftest.py", "setup.cfg", "data.json"]
    sectioned = config_verdicts([], candidate, {"setup.cfg": False})
    flags = patch_flags(
        candidate,
        test_patch_paths=["tests/test_m.py", "data.json"],
        sectioned=sectioned,
        changed_after_run=[
            "src/m.py",
            "src/__pycache__/m.cpython-311.pyc",
            "written.txt",
            "pre.txt",
        ],
        changed_in_image=["pre.txt"],
    )

    assert flags.touched_test_files == ("tests/test_m.py", "data.json")
    assert flags.touched_test_config == ("tests/conftest.py",)
    assert flags.files_outside_diff == ("written.txt",)


def test_unknown_sections_are_flagged_conservatively() -> None:
    assert config_verdicts([], ["tox.ini"], None) == {"tox.ini": True}
    assert patch_flags([], [], {}, changed_after_run=None, git_removed=True).files_outside_diff == (
        ".git",
    )
