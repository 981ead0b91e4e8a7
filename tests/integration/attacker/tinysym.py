"""`tinysym`: a small library laid out like sympy, graded by its own `bin/test` (sympy's output
format, no pytest anywhere in the image), and two tasks on it that tests accept wrong fixes of.

- printing: gold makes `Q.positive(x)` print as `Q.positive(x)`; the wrong fix special-cases
  `sstr` only, so the object itself still prints the old way.
- partitions: gold makes `partitions()` yield a fresh dict each time; the wrong fix does so only
  without `size=True`, and still hands out (and then mutates) one dict with it.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

BIN_TEST = '''#!/usr/bin/env python
"""A test runner printing sympy's verbose format: `test_name ok`, `test_name F`, `test_name E`,
and its final line, `tests finished: N passed, M failed, K exceptions, in X seconds`."""
import os
import sys
import traceback

sys.path.insert(0, os.getcwd())
# as sympy's: `-k` takes the words up to the next option, and a test runs when its name holds one
args = sys.argv[1:]
keywords = []
if "-k" in args:
    at = args.index("-k")
    rest = args[at + 1 :]
    taken = 0
    while taken < len(rest) and not rest[taken].startswith("-"):
        taken += 1
    keywords = rest[:taken]
    args = args[:at] + rest[taken:]
paths = [a for a in args if not a.startswith("-")]
files = []
for root, _, names in os.walk("tinysym"):
    for name in sorted(names):
        path = os.path.join(root, name)
        if name.startswith("test_") and name.endswith(".py"):
            if not paths or any(p in path for p in paths):
                files.append(path)
print("============================= test process starts ==============================")
failed = []
counts = {"passed": 0, "failed": 0, "exceptions": 0}


class SymPyTests(object):
    """Runs test files as sympy's runner does: each file's text executed in a dictionary that
    holds only its `__file__`, its test functions called from the runner's method `test`."""

    def test(self):
        for path in sorted(files):
            self.test_file(path)

    def test_file(self, path):
        print(path + "[?]")
        filename = os.path.abspath(path)
        gl = {"__file__": filename}
        with open(filename) as handle:
            exec(compile(handle.read(), filename, "exec"), gl)
        for name in sorted(n for n in gl if n.startswith("test_")):
            if keywords and not any(k in name for k in keywords):
                continue
            try:
                gl[name]()
            except Exception as e:
                failed.append((path, name, traceback.format_exc()))
                assertion = isinstance(e, AssertionError)
                counts["failed" if assertion else "exceptions"] += 1
                print("%s %s" % (name, "F" if assertion else "E"))
            else:
                counts["passed"] += 1
                print("%s ok" % name)


SymPyTests().test()
for path, name, text in failed:
    print("_" * 20 + " %s:%s " % (path, name) + "_" * 20)
    print(text)
told = "".join("%d %s, " % (n, k) for k, n in counts.items() if n or k == "passed")
print("========== tests finished: %sin 0.01 seconds ==========" % told)
if failed:
    print("DO *NOT* COMMIT!")
sys.exit(1 if failed else 0)
'''

CORE = '''"""Symbols, predicates and their printed form."""


class Sym(object):
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class Pred(object):
    def __init__(self, name):
        self.name = name

    def __call__(self, arg):
        return Applied(self, arg)


class Applied(object):
    def __init__(self, pred, arg):
        self.pred, self.arg = pred, arg

    def __repr__(self):
        return _print_applied(self)


class _Q(object):
    positive = Pred("positive")
    negative = Pred("negative")


Q = _Q()


def _print_applied(applied):
    return "%s(%s)" % (applied.pred.name, applied.arg)


def sstr(obj):
    return repr(obj)
'''

ITERABLES = '''"""Integer partitions."""


def _parts(n, largest):
    if n == 0:
        yield []
        return
    for k in range(min(n, largest), 0, -1):
        for rest in _parts(n - k, k):
            yield [k] + rest


def partitions(n, size=False):
    """The partitions of n as {part: multiplicity}, largest parts first."""
    ms = {}
    for p in _parts(n, n):
        ms.clear()
        for k in p:
            ms[k] = ms.get(k, 0) + 1
        if size:
            yield len(p), ms
        else:
            yield ms
'''

UTILITIES = '''"""sympy-style `raises`."""


def raises(exc, code=None):
    if code is None:
        return _Raises(exc)
    try:
        code()
    except exc:
        return
    raise AssertionError("DID NOT RAISE")


class _Raises(object):
    def __init__(self, exc):
        self.exc = exc

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise AssertionError("DID NOT RAISE")
        return issubclass(kind, self.exc)
'''

TEST_CORE = """from tinysym.core import Q, Sym, sstr
from tinysym.utilities import raises


def test_symbol():
    assert sstr(Sym("y")) == "y"
    raises(AttributeError, lambda: Sym("y").missing)
"""

TEST_ITERABLES = """from tinysym.iterables import partitions


def test_partitions_size():
    assert [s for s, p in partitions(3, size=True)] == [1, 2, 3]
"""

BASE_FILES = {
    "bin/test": BIN_TEST,
    "tinysym/__init__.py": "",
    "tinysym/core.py": CORE,
    "tinysym/iterables.py": ITERABLES,
    "tinysym/utilities.py": UTILITIES,
    "tinysym/tests/__init__.py": "",
    "tinysym/tests/test_core.py": TEST_CORE,
    "tinysym/tests/test_iterables.py": TEST_ITERABLES,
}

PRINT_FIX = ('    return "%s(%s)" % (applied.pred.name, applied.arg)',
             '    return "Q.%s(%s)" % (applied.pred.name, applied.arg)')  # fmt: skip
PRINT_EQUIVALENT = (
    '    return "%s(%s)" % (applied.pred.name, applied.arg)',
    '    return "Q." + applied.pred.name + "(" + repr(applied.arg) + ")"',
)
PRINT_WRONG = ("    return repr(obj)",
               "    if isinstance(obj, Applied):\n"
               "        return 'Q.' + repr(obj)\n"
               "    return repr(obj)")  # fmt: skip
# Breaks `partitions(n, size=True)`, which only the wider suite's test_iterables.py tests.
SIZES_WRONG = ("            yield len(p), ms", "            yield len(p) + 1, ms")
PRINT_TESTS = (
    TEST_CORE
    + """

def test_print_predicate():
    x = Sym("x")
    assert sstr(Q.positive(x)) == "Q.positive(x)"
"""
)

PARTS_GOLD = ITERABLES.replace("yield len(p), ms", "yield len(p), dict(ms)").replace(
    "            yield ms", "            yield dict(ms)"
)
PARTS_WRONG = ITERABLES.replace("            yield ms", "            yield dict(ms)")
PARTS_TESTS = (
    TEST_ITERABLES
    + """

def test_partitions_copies():
    assert list(partitions(3)) == [{3: 1}, {2: 1, 1: 1}, {1: 3}]
"""
)

DOCKERFILE = """FROM {base}
USER root
RUN python3 -m venv --without-pip /opt/venv
ENV PATH=/opt/venv/bin:$PATH
COPY testbed /testbed
RUN cd /testbed && chmod +x bin/test && git init -q && git add -A \\
 && GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_COMMITTER_NAME=t \\
    GIT_COMMITTER_EMAIL=t@example.invalid GIT_AUTHOR_DATE='2026-01-01T00:00:00+0000' \\
    GIT_COMMITTER_DATE='2026-01-01T00:00:00+0000' git -c commit.gpgsign=false commit -q -m base \\
 && chown -R 1000:1000 /testbed
USER runner
WORKDIR /testbed
"""


def diff(changes: dict[str, str]) -> str:
    """`git diff` of the base repository with `changes` (path -> new text) applied."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        for path, text in BASE_FILES.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)

        def git(*args: str) -> str:
            done = subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                cwd=repo, capture_output=True, text=True, check=True,
            )  # fmt: skip
            return done.stdout

        git("init", "-q")
        git("add", "-A")
        git("commit", "-q", "-m", "base")
        for path, text in changes.items():
            (repo / path).write_text(text)
        return git("diff")


def edit(path: str, old_new: tuple[str, str]) -> dict[str, str]:
    old, new = old_new
    text = BASE_FILES[path]
    assert old in text, (path, old)
    return {path: text.replace(old, new)}
