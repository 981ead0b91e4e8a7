"""Gold's semantics-preserving rewrites (C+ of the reference pool), really applied and executed.

Each kind must yield a diff that parses, applies at the base commit with `git apply`, leaves a
module that compiles, and computes what gold computes; a kind with no site in gold yields
nothing rather than a guess.
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from hackaudit.attacker.domain.generate import behaviour
from hackaudit.attacker.domain.pool import rewrites
from hackaudit.attacker.domain.reading import diffs

from .conftest import diff_of, git, make_repo

BASE = {
    "pkg/__init__.py": "",
    "pkg/calc.py": '''"""Small calculations."""

import math


def classify(n):
    return "small"


def total(items):
    return 0


def keep(x):
    return x
''',
}

GOLD = '''"""Small calculations."""

import math
import re


def classify(n):
    if n > 10:
        label = "big"
    else:
        label = "small"
    return label.upper()


def total(items):
    """Twice the sum of ``items``, plus how many there are."""
    count = len(items)
    acc = sum(items)
    return acc * 2 + count


def keep(x):
    return x
'''


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = make_repo(tmp_path_factory.mktemp("rewrites") / "repo", BASE)
    return root, diff_of(root, {"pkg/calc.py": GOLD}, ["pkg"])


def _applied(root: Path, diff: str, where: Path) -> ModuleType:
    """The module left by `diff` applied to a fresh copy of the base repository."""
    subprocess.run(["cp", "-r", str(root), str(where)], check=True)
    done = git(where, "apply", "-", stdin=diff)
    assert done.returncode == 0, done.stderr
    path = where / "pkg" / "calc.py"
    compile(path.read_text(), str(path), "exec")
    spec = importlib.util.spec_from_file_location(f"calc_{where.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _behaviour(module: ModuleType) -> list[object]:
    return [
        *(module.classify(n) for n in range(-3, 25)),
        *(module.total(items) for items in ([], [1], [2, 5, 9], list(range(30)))),
    ]


@pytest.mark.parametrize("kind", rewrites.KINDS)
def test_each_kind_applies_parses_and_behaves_as_gold(
    kind: str, repo: tuple[Path, str], tmp_path: Path
) -> None:
    root, gold = repo
    made = rewrites.rewrite(diffs.parse_patch(gold), kind)
    assert made is not None, f"{kind} found no site in gold"
    diffs.parse_patch(made.diff)  # strict: well-formed hunk headers
    assert made.diff != gold
    expected = _behaviour(_applied(root, gold, tmp_path / "gold"))
    assert _behaviour(_applied(root, made.diff, tmp_path / kind)) == expected
    # Only the comment and docstring kinds are equal to gold by construction; the others need
    # probes.
    assert rewrites.text_only(gold, made.diff) is (kind in rewrites.TEXT_KINDS)


def test_rewrites_act_where_gold_adds_code(repo: tuple[Path, str]) -> None:
    _, gold = repo
    made = {r.kind: r for r in rewrites.rewrites(gold)}
    assert set(made) == set(rewrites.KINDS)
    assert "label -> label_value" in made[rewrites.RENAME].detail
    assert "if not (n > 10):" in made[rewrites.INVERT].diff
    assert "import re\n+import math" in made[rewrites.REORDER].diff or (
        "import math" in made[rewrites.REORDER].detail
    )
    # The untouched function is never rewritten.
    for r in made.values():
        assert "+def keep" not in r.diff and "-def keep" not in r.diff
        assert "return x" not in "".join(x for x in r.diff.splitlines() if x[:1] in "+-")


def test_a_kind_with_no_site_is_skipped(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", BASE)
    negated = BASE["pkg/calc.py"].replace("return x", "return -x")
    gold = diff_of(root, {"pkg/calc.py": negated}, ["pkg"])
    kinds = {r.kind for r in rewrites.rewrites(gold)}
    # One `return -x` line: no if/else to invert, no pair of statements, no local to rename.
    assert rewrites.INVERT not in kinds
    assert rewrites.REORDER not in kinds
    assert rewrites.RENAME not in kinds
    assert rewrites.COMMENT in kinds


def test_a_local_used_beyond_the_fragment_is_not_renamed() -> None:
    # The function goes on past the hunk and nothing shows where `found` is last used.
    gold = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -10,3 +10,4 @@ def f(xs):
     a = 1
     b = 2
+    found = xs[0]
     c = 3
"""
    assert rewrites.rewrite(diffs.parse_patch(gold), rewrites.RENAME) is None


def test_keyword_arguments_and_attributes_keep_their_names() -> None:
    gold = "\n".join(
        [
            "diff --git a/m.py b/m.py",
            "--- a/m.py",
            "+++ b/m.py",
            "@@ -1,5 +1,6 @@",
            " def f(day):",
            "-    return day",
            "+    month = day.month + 1",
            "+    return day.replace(month=month)",
            " ",
            " ",
            " def g():",
        ]
    )
    made = rewrites.rewrite(diffs.parse_patch(gold), rewrites.RENAME)
    assert made is not None
    assert "+    month_value = day.month + 1" in made.diff
    assert "+    return day.replace(month=month_value)" in made.diff


def test_comment_rewrite_is_equal_by_construction(repo: tuple[Path, str]) -> None:
    _, gold = repo
    made = rewrites.rewrite(diffs.parse_patch(gold), rewrites.COMMENT)
    assert made is not None
    assert not behaviour.changes_behaviour(gold, made.diff)
