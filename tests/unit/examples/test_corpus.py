"""The example task corpus: rows, labels, base commits and (slow) the end-to-end check."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def _load_corpus():
    name = "hackaudit_examples_corpus"
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / "tools" / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
TASKS = corpus.load_tasks()
LABELS = corpus.load_labels()
IDS = [task["instance_id"] for task in TASKS]
LIBRARIES = sorted({corpus.library_of(task) for task in TASKS})


def _task(instance_id: str) -> dict:
    return next(task for task in TASKS if task["instance_id"] == instance_id)


# --- rows ---------------------------------------------------------------------------------------


def test_corpus_size():
    assert len(TASKS) >= 21
    assert len(LIBRARIES) >= 7
    per_library = Counter(corpus.library_of(task) for task in TASKS)
    assert all(count >= 1 for count in per_library.values())


def test_every_line_of_every_task_file_is_a_json_object():
    for path in sorted((EXAMPLES / "tasks").glob("*.jsonl")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert lines, path
        for line in lines:
            row = json.loads(line)
            assert isinstance(row, dict)
            assert corpus.library_of(row) == path.stem


@pytest.mark.parametrize("instance_id", IDS)
def test_row_fields(instance_id):
    task = _task(instance_id)
    lib = corpus.library_of(task)
    assert set(corpus.REQUIRED_FIELDS) <= set(task)
    assert task["repo"] == f"hackaudit-examples/{lib}"
    assert task["hints_text"] == ""
    assert task["version"] == "0.1"
    assert task["difficulty"] in corpus.DIFFICULTIES
    assert task["created_at"].endswith("Z")
    assert task["log_parser"] in corpus.TEST_COMMANDS
    assert task["test_command"] == corpus.TEST_COMMANDS[task["log_parser"]]
    assert task["environment"] == {
        "source": f"../repos/{lib}",
        "pip_packages": ["pytest"],
        "install": None,
    }
    assert (EXAMPLES / "tasks" / task["environment"]["source"]).is_dir()
    for name in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        assert isinstance(task[name], str), "SWE-bench stores the lists as JSON strings"
        assert all(isinstance(item, str) for item in json.loads(task[name]))
    assert json.loads(task["FAIL_TO_PASS"])
    assert len(task["problem_statement"]) > 200


@pytest.mark.parametrize("instance_id", IDS)
def test_patches_are_git_diffs_on_the_right_files(instance_id):
    task = _task(instance_id)
    for name in ("patch", "test_patch"):
        patch = task[name]
        assert patch.startswith("diff --git a/")
        assert "\n--- a/" in patch or "\n--- /dev/null" in patch
        assert "\n+++ b/" in patch
        assert patch.endswith("\n")
    assert not [p for p in corpus.touched_files(task["patch"]) if corpus.is_test_path(p)]
    assert all(corpus.is_test_path(p) for p in corpus.touched_files(task["test_patch"]))


@pytest.mark.parametrize("instance_id", IDS)
def test_test_names_as_the_log_parser_prints_them(instance_id):
    task = _task(instance_id)
    names = json.loads(task["FAIL_TO_PASS"]) + json.loads(task["PASS_TO_PASS"])
    files = corpus.touched_files(task["test_patch"])
    for name in names:
        if task["log_parser"] == "pytest":
            assert name.split("::")[0] in files, name
            assert " " not in name
        else:
            method, dotted = name.removesuffix(")").split(" (")
            module, _cls, last = dotted.rsplit(".", 2)
            assert last == method, name
            assert module.replace(".", "/") + ".py" in files, name


def test_rows_validate_as_hackaudit_tasks():
    contracts = pytest.importorskip("hackaudit.shared.contracts.task")
    for row in TASKS:
        task = contracts.Task.model_validate(row)
        assert list(task.fail_to_pass) == json.loads(row["FAIL_TO_PASS"])
        assert task.environment is not None
        assert task.environment.install is None


def test_at_least_one_unittest_library():
    unittest_tasks = [task for task in TASKS if task["log_parser"] == "unittest"]
    assert unittest_tasks
    for task in unittest_tasks:
        assert corpus.targets_for(task, [task["test_patch"]])[0].startswith("tests.test_")


def test_lint_is_clean():
    assert corpus.lint(TASKS, LABELS) == []


# --- labels -------------------------------------------------------------------------------------


def test_labels_cover_every_task_and_nothing_else():
    assert set(LABELS) == set(IDS)


def test_label_counts():
    kinds, hows = corpus.label_counts(LABELS)
    assert kinds["hackable"] >= 10
    assert kinds["robust"] >= 7
    for kind in ("broken", "flaky", "empty_passes", "equivalent_hunk"):
        assert kinds[kind] == 1, kind
    assert len(hows) >= 4
    assert hows["harness_hole"] >= 1
    assert kinds["over_strict"] >= 2


@pytest.mark.parametrize("instance_id", IDS)
def test_label_entry(instance_id):
    entry = LABELS[instance_id]
    assert entry["label"] in corpus.LABEL_KINDS
    assert entry["valid"] is (entry["label"] not in ("broken", "flaky"))
    assert entry["note"]
    if entry["label"] == "hackable":
        assert entry["how"] in corpus.HOW_KINDS
        assert entry["known_exploit"].startswith("diff --git a/")
        assert entry["held_back_test_patch"].startswith("diff --git a/")
        assert entry["held_back_tests"]
        assert entry["known_exploit"] != _task(instance_id)["patch"]
    if entry["label"] == "equivalent_hunk":
        assert 0 <= entry["droppable_hunk"] < len(corpus.hunks(_task(instance_id)["patch"]))
    if entry["label"] == "over_strict":
        assert entry["pins"] in corpus.PIN_KINDS
        assert entry["rewrite"] in corpus.REWRITE_KINDS
        assert entry["correct_variant"].startswith("diff --git a/")
        assert entry["correct_variant"] != _task(instance_id)["patch"]
        assert set(entry["pinning_tests"]) <= set(json.loads(_task(instance_id)["FAIL_TO_PASS"]))
        assert entry["probe_script"].strip()


def test_robust_golds_are_more_than_one_line():
    for instance_id, entry in LABELS.items():
        if entry["label"] == "robust":
            assert len(corpus.added_lines(_task(instance_id)["patch"])) >= 2, instance_id


# --- base commits -------------------------------------------------------------------------------


@pytest.mark.parametrize("lib", LIBRARIES)
def test_base_commit_reproduces(lib):
    commit = corpus.base_commit(corpus.REPOS / lib)
    assert len(commit) == 40
    assert {task["base_commit"] for task in TASKS if corpus.library_of(task) == lib} == {commit}


def test_base_commit_is_the_documented_shell_recipe(tmp_path):
    lib = LIBRARIES[0]
    copy = tmp_path / lib
    shutil.copytree(
        corpus.REPOS / lib, copy, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
    )
    recipe = (
        "git init -q -b main && git add -A && "
        "GIT_AUTHOR_DATE='2026-01-01T00:00:00+0000' GIT_COMMITTER_DATE='2026-01-01T00:00:00+0000' "
        "git -c user.name=hackaudit -c user.email=examples@hackaudit.invalid "
        "-c commit.gpgsign=false commit -q -m base && git rev-parse HEAD"
    )
    result = subprocess.run(
        ["bash", "-c", recipe],
        cwd=copy,
        env=corpus._git_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == corpus.base_commit(corpus.REPOS / lib)


def test_base_commit_ignores_caches(tmp_path):
    lib = LIBRARIES[0]
    copy = tmp_path / lib
    shutil.copytree(corpus.REPOS / lib, copy)
    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (copy / ".pytest_cache").mkdir(exist_ok=True)
    (copy / ".pytest_cache" / "README.md").write_text("cache")
    assert corpus.base_commit(copy) == corpus.base_commit(corpus.REPOS / lib)


# --- patch helpers ------------------------------------------------------------------------------

_TWO_HUNKS = """\
diff --git a/m.py b/m.py
index 1111111..2222222 100644
--- a/m.py
+++ b/m.py
@@ -1,3 +1,4 @@
 a = 1
+b = 2
 c = 3
 d = 4
@@ -10,3 +11,3 @@ def f():
 x = 1
-y = 2
+y = 3
 z = 4
"""


def test_drop_hunk_renumbers_the_rest():
    dropped = corpus.drop_hunk(_TWO_HUNKS, 0)
    assert "+b = 2" not in dropped
    assert "@@ -10,3 +10,3 @@ def f():" in dropped
    assert len(corpus.hunks(dropped)) == 1


def test_added_lines_leave_out_docstring_lines_by_their_number_in_the_patched_file():
    assert [t for _h, _i, t in corpus.added_lines(_TWO_HUNKS, {"m.py": {2}})] == ["y = 3"]
    assert [t for _h, _i, t in corpus.added_lines(_TWO_HUNKS, {"m.py": {12}})] == ["b = 2"]


def test_drop_added_line_recounts():
    (hunk_index, line_index, text), *_ = corpus.added_lines(_TWO_HUNKS)
    assert text == "b = 2"
    dropped = corpus.drop_added_line(_TWO_HUNKS, hunk_index, line_index)
    assert "@@ -1,3 +1,3 @@" in dropped
    assert "@@ -10,3 +10,3 @@ def f():" in dropped


def test_replace_added_line_keeps_the_counts():
    (hunk_index, line_index, _text), *_ = corpus.added_lines(_TWO_HUNKS)
    replaced = corpus.replace_added_line(_TWO_HUNKS, hunk_index, line_index, "pass")
    assert "+pass\n" in replaced
    assert "+b = 2" not in replaced
    assert "@@ -1,3 +1,4 @@" in replaced
    assert "@@ -10,3 +11,3 @@ def f():" in replaced


def test_line_mutants_of_a_guard():
    assert corpus.line_mutants("        if piece is not None:") == [
        "        if True:",
        "        if False:",
        "        if piece is None:",
    ]
    assert corpus.line_mutants("    elif start >= end:") == [
        "    elif True:",
        "    elif False:",
        "    elif start < end:",
    ]


def test_line_mutants_of_a_statement():
    assert corpus.line_mutants("    pieces.append(piece)") == ["    pass"]
    assert corpus.line_mutants("    ok = key not in seen and n <= 3") == [
        "    pass",
        "    ok = key in seen and n <= 3",
        "    ok = key not in seen and n > 3",
    ]


def test_line_mutants_leave_loops_strings_and_open_lines_alone():
    assert corpus.line_mutants("    names = [n for n in found if n]") == ["    pass"]
    assert corpus.line_mutants("    return '<' + x") == ["    pass"]
    assert corpus.line_mutants("    call(") == []
    assert corpus.line_mutants("    pass") == []


_GOLD_SOURCE = '''\
def room(slug, limit):
    """The room left."""
    suffix = "-2"
    stem = slug[: limit - len(suffix)]
    log(stem)
    note(suffix)
    return stem + suffix
'''


@pytest.mark.parametrize(
    ("rewrite", "old", "new"),
    [
        ("docstring", '"""The room left."""', '"""How much room is left."""'),
        ("rename_locals", "suffix", "tail"),
        (
            "reorder_statements",
            "    log(stem)\n    note(suffix)",
            "    note(suffix)\n    log(stem)",
        ),
    ],
)
def test_a_rewrite_of_its_kind_is_recognised(rewrite, old, new):
    variant = _GOLD_SOURCE.replace(old, new)
    assert corpus.rewrite_problem(rewrite, _GOLD_SOURCE, variant) is None
    others = [kind for kind in corpus.REWRITE_KINDS if kind != rewrite]
    assert all(corpus.rewrite_problem(kind, _GOLD_SOURCE, variant) for kind in others)


@pytest.mark.parametrize(
    ("rewrite", "old", "new", "problem"),
    [
        ("docstring", "- len(suffix)", "- 2", "more than docstrings"),
        ("rename_locals", "limit", "cap", "more than names"),  # a parameter
        ("rename_locals", "log(", "print(", "not locals"),  # a global
        ("rename_locals", "limit - len", "limit + len", "more than names"),
        (
            "rename_locals",
            "    return stem + suffix",
            "    return suffix + suffix",
            "inconsistently",
        ),
        ("reorder_statements", "    log(stem)\n", "    log(suffix)\n", "order of lines"),
        ("docstring", "return", "return(", "does not parse"),
    ],
)
def test_a_change_beyond_the_rewrite_is_refused(rewrite, old, new, problem):
    variant = _GOLD_SOURCE.replace(old, new)
    assert problem in corpus.rewrite_problem(rewrite, _GOLD_SOURCE, variant)


def test_lint_wants_the_over_strict_evidence():
    entry = {"label": "over_strict", "valid": True, "note": "n", "pins": "docstring_text"}
    problems = corpus._lint_label("x__x-1", entry)
    for name in ("rewrite", "correct_variant", "pinning_tests", "probe_script"):
        assert any(name in problem for problem in problems), name
    robust = {"label": "robust", "valid": True, "note": "n", "correct_variant": "diff"}
    assert corpus._lint_label("x__x-1", robust) == [
        "x__x-1: only over_strict labels carry pins, rewrite, correct_variant, pinning_tests, "
        "probe_script"
    ]


def test_docstring_lines_are_not_code():
    source = 'def f():\n    """Doc\n    more."""\n    return 1\n'
    assert corpus.docstring_lines(source) == {2, 3}


def test_log_parsers():
    pytest_log = (
        "PASSED tests/test_a.py::test_x\n"
        "FAILED tests/test_a.py::TestK::test_y[1-2] - AssertionError: boom\n"
        "ERROR tests/test_a.py::test_z - RuntimeError\n"
    )
    assert corpus.parse_pytest_log(pytest_log) == {
        "tests/test_a.py::test_x": "PASSED",
        "tests/test_a.py::TestK::test_y[1-2]": "FAILED",
        "tests/test_a.py::test_z": "ERROR",
    }
    unittest_log = (
        "test_a (tests.test_m.C.test_a) ... ok\n"
        "test_b (tests.test_m.C.test_b) ... FAIL\n"
        "test_c (tests.test_m.C.test_c) ... skipped 'later'\n"
    )
    assert corpus.parse_unittest_log(unittest_log) == {
        "test_a (tests.test_m.C.test_a)": "PASSED",
        "test_b (tests.test_m.C.test_b)": "FAILED",
        "test_c (tests.test_m.C.test_c)": "SKIPPED",
    }


# --- the end-to-end check (slow) ----------------------------------------------------------------


@pytest.fixture(scope="module")
def warm_cache():
    with corpus.bytecode_cache():
        yield


@pytest.mark.slow
@pytest.mark.parametrize("instance_id", IDS)
def test_check_task(instance_id, warm_cache):
    """Every claim of the row and the label holds in a fresh copy of the library.

    For the flaky task the check runs gold until both a passing and a failing run have
    been seen; for the broken task it requires gold to fail a FAIL_TO_PASS test.
    """
    outcome = corpus.check_task(_task(instance_id), LABELS[instance_id])
    assert outcome.ok, "\n".join(outcome.lines)


# --- shapes of weakness seen on real tasks ------------------------------------------------------


def test_the_real_task_shapes_are_each_present():
    """combinat holds one hackable task per shape seen on SWE-bench Verified tasks.

    A generator handing out one mutable object (graded item by item, held back as a
    list), a printer graded on one printed form (held back: a neighbouring input), and a
    check needed in two constructor paths (graded on one, held back on the other).
    """
    shapes = {
        "combinat__combinat-1": ("combinat/partitions.py", "list(partitions("),
        "combinat__combinat-2": ("combinat/poly.py", "str(Poly([0, -2, 1]))"),
        "combinat__combinat-3": ("combinat/permutation.py", "Permutation([[0, 1], [1, 2]])"),
    }
    for instance_id, (source, held_back_call) in shapes.items():
        entry = LABELS[instance_id]
        assert entry["label"] == "hackable", instance_id
        assert corpus.touched_files(entry["known_exploit"]) == [source], instance_id
        assert held_back_call in entry["held_back_test_patch"], instance_id
        assert held_back_call not in _task(instance_id)["test_patch"], instance_id
    assert len(corpus.hunks(_task("combinat__combinat-3")["patch"])) == 2
    assert len(corpus.hunks(LABELS["combinat__combinat-3"]["known_exploit"])) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ("variant_drops_the_redirect", "no reorder_statements rewrite"),
        ("wrong_pinning_test", "not exactly the pinning tests"),
        ("probe_without_the_fix", "probes nothing"),
    ],
)
def test_check_refuses_an_over_strict_label_that_does_not_hold(change, problem, warm_cache):
    instance_id = "slugkit__slugkit-3"
    label = dict(LABELS[instance_id])
    if change == "variant_drops_the_redirect":
        label["correct_variant"] = (
            label["correct_variant"]
            .replace("+        self.redirects.add(old, new)\n", "")
            .replace("@@ -58,7 +58,14 @@", "@@ -58,7 +58,13 @@")
        )
    elif change == "wrong_pinning_test":
        label["pinning_tests"] = [json.loads(_task(instance_id)["FAIL_TO_PASS"])[0]]
    else:
        label["probe_script"] = "import slugkit\nprint(slugkit.__version__)\n"
    outcome = corpus.check_task(_task(instance_id), label, quick=True)
    assert not outcome.ok
    assert problem in outcome.lines[-1]
