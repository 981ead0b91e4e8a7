"""The rewrite kinds that change what a test may read but not what the code computes: a docstring
worded with one more sentence, and two calls on different objects swapped.

Each rewrite is really applied to a git repository at the base commit and the module executed:
it must compute what gold computes, while its docstring (or the order its collaborators see
their calls) differs — the detail an over-strict test pins.
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
from pathlib import Path
from types import ModuleType

from hackaudit.attacker.domain.generate import behaviour
from hackaudit.attacker.domain.pool import rewrites
from hackaudit.attacker.domain.reading import diffs

from .conftest import diff_of, git, make_repo

BASE = {
    "pkg/__init__.py": "",
    "pkg/reg.py": '''"""A registry of names."""


def short(name):
    """The name."""
    return name


class Registry:
    def __init__(self, store, log):
        self.store = store
        self.log = log

    def rename(self, old, new):
        """Rename ``old``."""
        self.store.discard(old)
        self.store.add(new)
        return new
''',
}

GOLD = '''"""A registry of names."""


def short(name):
    """The name, cut to three characters."""
    return name[:3]


class Registry:
    def __init__(self, store, log):
        self.store = store
        self.log = log

    def rename(self, old, new):
        """Rename ``old``, keeping a record.

        The record says which name became which.
        """
        self.store.discard(old)
        self.log.append((old, new))
        self.store.add(new)
        return new
'''


def _repo(tmp_path: Path) -> tuple[Path, str]:
    root = make_repo(tmp_path / "repo", BASE)
    return root, diff_of(root, {"pkg/reg.py": GOLD}, ["pkg"])


def _applied(root: Path, diff: str, where: Path) -> ModuleType:
    subprocess.run(["cp", "-r", str(root), str(where)], check=True)
    done = git(where, "apply", "-", stdin=diff)
    assert done.returncode == 0, done.stderr
    path = where / "pkg" / "reg.py"
    spec = importlib.util.spec_from_file_location(f"reg_{where.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Recorder:
    """A set that writes every call it sees into a shared journal."""

    def __init__(self, name: str, journal: list[str]) -> None:
        self.name, self.journal, self.items = name, journal, {"a"}

    def discard(self, x: str) -> None:
        self.journal.append(f"{self.name}.discard")
        self.items.discard(x)

    def add(self, x: str) -> None:
        self.journal.append(f"{self.name}.add")
        self.items.add(x)

    def append(self, x: object) -> None:
        self.journal.append(f"{self.name}.append")


def _run(module: ModuleType) -> tuple[object, set[str], list[str]]:
    journal: list[str] = []
    store = _Recorder("store", journal)
    result = module.Registry(store, _Recorder("log", journal)).rename("a", "b")
    return (result, module.short("abcdef")), store.items, journal


def test_docstring_kind_rewords_a_docstring_gold_writes(tmp_path: Path) -> None:
    root, gold = _repo(tmp_path)
    made = rewrites.rewrite(diffs.parse_patch(gold), rewrites.DOCSTRING)
    assert made is not None
    diffs.parse_patch(made.diff)
    assert rewrites.text_only(gold, made.diff)
    before = _applied(root, gold, tmp_path / "gold")
    after = _applied(root, made.diff, tmp_path / "docstring")
    assert _run(after) == _run(before)
    # The first docstring gold writes is the one-line `short`'s: one sentence more, inside it.
    assert (
        inspect.getdoc(after.short)
        == f"The name, cut to three characters. {rewrites.ADDED_SENTENCE}"
    )
    assert inspect.getdoc(after.Registry.rename) == inspect.getdoc(before.Registry.rename)


def test_docstring_closing_on_its_own_line_gets_a_line_of_prose() -> None:
    gold = "\n".join(
        [
            "diff --git a/m.py b/m.py",
            "--- a/m.py",
            "+++ b/m.py",
            "@@ -1,3 +1,6 @@",
            " def f(x):",
            '-    """Old."""',
            '+    """New summary.',
            "+",
            "+    More text.",
            '+    """',
            "     return x",
            "",
        ]
    )
    made = rewrites.rewrite(diffs.parse_patch(gold), rewrites.DOCSTRING)
    assert made is not None
    assert f'+    More text.\n+    {rewrites.ADDED_SENTENCE}\n+    """\n' in made.diff
    assert not behaviour.changes_behaviour(gold, made.diff)


def test_docstring_kind_leaves_docstrings_gold_does_not_touch() -> None:
    gold = "\n".join(
        [
            "diff --git a/m.py b/m.py",
            "--- a/m.py",
            "+++ b/m.py",
            "@@ -1,3 +1,3 @@",
            " def f(x):",
            '     """Unchanged."""',
            "-    return x",
            "+    return -x",
            "",
        ]
    )
    assert rewrites.rewrite(diffs.parse_patch(gold), rewrites.DOCSTRING) is None


def test_docstring_kind_skips_a_hunk_cut_inside_a_docstring() -> None:
    # The hunk opens inside a docstring: the prose and its closing quotes are not a statement.
    gold = "\n".join(
        [
            "diff --git a/m.py b/m.py",
            "--- a/m.py",
            "+++ b/m.py",
            "@@ -4,3 +4,4 @@ def f(x):",
            "     earlier prose",
            "+    added prose",
            '     """',
            "     return x",
            "",
        ]
    )
    assert rewrites.rewrite(diffs.parse_patch(gold), rewrites.DOCSTRING) is None


def test_reorder_swaps_calls_on_different_objects(tmp_path: Path) -> None:
    root, gold = _repo(tmp_path)
    made = rewrites.rewrite(diffs.parse_patch(gold), rewrites.REORDER)
    assert made is not None
    assert "self.store.discard(old)" in made.detail and "self.log.append" in made.detail
    assert not rewrites.text_only(gold, made.diff)  # a swap is only a claim: probes decide
    before = _run(_applied(root, gold, tmp_path / "gold"))
    after = _run(_applied(root, made.diff, tmp_path / "reorder"))
    # The same result and the same state; only the order the collaborators were called in moved.
    assert after[:2] == before[:2]
    assert before[2] == ["store.discard", "log.append", "store.add"]
    assert after[2] == ["log.append", "store.discard", "store.add"]


def _reorder_of(first: str, second: str) -> rewrites.Rewrite | None:
    gold = "\n".join(
        [
            "diff --git a/m.py b/m.py",
            "--- a/m.py",
            "+++ b/m.py",
            "@@ -1,3 +1,4 @@",
            " def f(self, a, x):",
            f"     {first}",
            f"+    {second}",
            "     return a",
            "",
        ]
    )
    return rewrites.rewrite(diffs.parse_patch(gold), rewrites.REORDER)


def test_reorder_leaves_calls_that_may_touch_the_same_object() -> None:
    assert _reorder_of("self.store.discard(x)", "self.redirects.add(x, a)") is not None
    assert _reorder_of("a.b.m(x)", "a.c.n(x)") is not None
    # The same receiver, one receiver reached through the other, or passed to the other call.
    assert _reorder_of("a.append(x)", "a.sort()") is None
    assert _reorder_of("self.flush()", "self.store.add(x)") is None
    assert _reorder_of("a.append(x)", "x.sort()") is None
    # Not a method call on an object: a plain function, a receiver computed by a call, a walrus.
    assert _reorder_of("print(x)", "a.sort()") is None
    assert _reorder_of("get(a).add(x)", "a.sort()") is None
    assert _reorder_of("a.add(y := x)", "self.store.add(x)") is None
