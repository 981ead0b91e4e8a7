"""The issue's own examples as probes: read from the problem statement, written as a module the
replay runs, really run under this interpreter's unittest and read back through the sandbox's
unittest log parser — a wrong fix the tests accept differs from gold on the issue's examples and
on the values beside the items of a list the tests pass; an equivalent one differs nowhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hackaudit.attacker.domain.confirm import issue_examples, probes, replay
from hackaudit.sandbox.domain.log_parsers.unittest import parse_unittest
from hackaudit.shared.contracts import RunResult, RunStatus, Task

TEST_FILE = "pkg/tests/test_mod.py"

STATEMENT = """show() prints negative coefficients with a plus, parts() reuses its dict

```python
>>> from pkg.mod import parts, show, build
>>> list(parts(3))
[{'rest': 0}, {'rest': 0}, {'rest': 0}]
>>> print(show([1, -2]))
+1 +-2
>>> build([[0, 1],
...        [1, 2]])
[0, 1, 1, 2]
```

The same without a session:

```py
it = parts(2)
first = next(it)
first
```

```
Traceback (most recent call last):
ValueError
```
"""

GOLD_MOD = """
def parts(n):
    ms = {}
    for k in range(n, 0, -1):
        ms.clear()
        ms.update({k: 1, "rest": n - k})
        yield dict(ms)


def show(coeffs):
    return " ".join("-%d" % -c if c < 0 else "+%d" % c for c in coeffs)


def build(form):
    nested = bool(form) and isinstance(form[0], list)
    flat = [v for cycle in form for v in cycle] if nested else list(form)
    if len(set(flat)) != len(flat):
        raise ValueError(form)
    return flat
"""

# Each wrong the way the tests cannot see: one refilled dict, the minus for -1 only, the check
# applied to the flat form only.
WRONG_MOD = (
    GOLD_MOD.replace("        yield dict(ms)", "        yield globals().setdefault('_b', ms)")
    .replace('"-%d" % -c if c < 0', '"-%d" % -c if c == -1')
    .replace("    if len(set(flat)) != len(flat):",
             "    if not nested and len(set(flat)) != len(flat):")
)  # fmt: skip

EQUIVALENT_MOD = GOLD_MOD.replace(
    '"-%d" % -c if c < 0 else "+%d" % c', '("-" if c < 0 else "+") + str(abs(c))'
).replace("        yield dict(ms)", "        yield {**ms}")

TESTS = """
from pkg.mod import build, parts, show


def test_show():
    assert show([1, -1]) == "+1 -1"


def test_build():
    assert build([0, 1]) == [0, 1]
"""

GOLD_PATCH = (
    "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
    "@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"
)
TEST_PATCH = (
    f"diff --git a/{TEST_FILE} b/{TEST_FILE}\nnew file mode 100644\n--- /dev/null\n"
    f"+++ b/{TEST_FILE}\n@@ -0,0 +1,{len(TESTS.splitlines())} @@\n"
    + "".join(f"+{line}\n" for line in TESTS.splitlines())
)


def _task(statement: str = STATEMENT) -> Task:
    return Task.model_validate(
        {
            "instance_id": "pkg-7",
            "repo": "example/pkg",
            "base_commit": "0" * 40,
            "patch": GOLD_PATCH,
            "test_patch": TEST_PATCH,
            "problem_statement": statement,
            "FAIL_TO_PASS": ["test_show"],
            "PASS_TO_PASS": ["test_build"],
        }
    )


def test_sessions_and_python_blocks_are_read_in_order() -> None:
    shown = [issue_examples.ast.unparse(s) for s in issue_examples.statements(STATEMENT)]
    assert shown == [
        "from pkg.mod import parts, show, build",
        "list(parts(3))",
        "print(show([1, -2]))",
        "build([[0, 1], [1, 2]])",
    ]  # a statement with sessions takes them; outputs and tracebacks are never code
    blocks_only = STATEMENT.replace(">>> ", "").replace("...        ", "")
    found = [issue_examples.ast.unparse(s) for s in issue_examples.statements(blocks_only)]
    assert found[-3:] == ["it = parts(2)", "first = next(it)", "first"]
    assert "Traceback" not in " ".join(found)


def test_the_module_observes_each_example_once_and_survives_each() -> None:
    source = issue_examples.module_source(_task())
    assert source is not None
    assert "    from pkg import *" in source and "    from pkg.mod import *" in source
    assert "        assert str(show([1, -2]))" in source
    assert "        assert list(parts(3))" in source
    assert source.count("    try:") == source.count("    except Exception:")
    block = issue_examples.module_source(_task("```python\nit = iter([1])\nx = 5\nnext(it)\n```"))
    assert block is not None
    # `it` is used later: not observed on its own (that would drain it); `x` is not: observed
    assert "assert it\n" not in block and "        assert x" in block
    assert issue_examples.module_source(_task("Nothing to run here.\n```\n$ make\n```")) is None


def test_the_issue_is_replayed_after_the_tests_and_shipped_in_the_probe_run() -> None:
    found = replay.targets(_task())
    assert [t.path for t in found] == [TEST_FILE, issue_examples.ISSUE_PATH]
    probe = probes.invocation([], _task(), found)
    assert probe.test == probes.PROBE_PATH
    assert set(probe.files) == {probes.PROBE_PATH, issue_examples.ISSUE_PATH}
    assert probe.files[issue_examples.ISSUE_PATH] == issue_examples.module_source(_task())
    only_tests = replay.targets(_task(), with_issue=False)
    assert set(probes.invocation([], _task(), only_tests).files) == {probes.PROBE_PATH}
    assert replay.targets(_task(), with_issue=False)[-1].path == TEST_FILE
    assert replay.targets(_task("no examples"))[-1].path == TEST_FILE


def _run(tmp: Path, mod: str) -> RunResult:
    task = _task()
    found = replay.targets(task)
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": mod,
        "pkg/tests/__init__.py": "",
        TEST_FILE: TESTS,
        issue_examples.ISSUE_PATH: issue_examples.module_source(task) or "",
        probes.PROBE_PATH: probes.source([], replay.source(task, found)),
    }
    for path, text in files.items():
        (tmp / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp / path).write_text(text)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "test_hackaudit_probe"],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return RunResult(status=RunStatus.COMPLETED, tests=parse_unittest(done.stderr))


def test_a_wrong_fix_differs_on_the_issues_examples_an_equivalent_one_nowhere(tmp_path) -> None:
    found = replay.targets(_task())
    gold = _run(tmp_path / "gold", GOLD_MOD)
    _, wrong = replay.differences(found, [gold, gold], _run(tmp_path / "wrong", WRONG_MOD))
    where = {(d.test, d.expression) for d in wrong}
    issue = f"{issue_examples.ISSUE_PATH}::{issue_examples.FUNCTION}"
    assert (issue, "list(parts(3))") in where
    assert (issue, "str(show([1, -2]))") in where
    assert (issue, "build([[0, 1], [1, 2]])") in where
    # the graded test's list item -1 varied to -2: the minus applied to -1 only shows there
    assert (f"{TEST_FILE}::test_show", "show([1, -1])  [literal 1 -> 2]") in where
    compared, same = replay.differences(
        found, [gold, gold], _run(tmp_path / "equivalent", EQUIVALENT_MOD)
    )
    assert compared > 5 and same == []


IPYTHON = """Powers are not evaluated

```
In [1]: from pkg import *
        from pkg.mod import show as sh
        a = 3

In [2]: sh([a,
            -a])
Out[2]: '+3 +-3'

In [3]: parts(2)
```
"""


def test_ipython_cells_are_examples_and_star_imports_go_to_the_module_head() -> None:
    found = [issue_examples.ast.unparse(s) for s in issue_examples.statements(IPYTHON)]
    assert found == [
        "from pkg import *",
        "from pkg.mod import show as sh",
        "a = 3",
        "sh([a, -a])",
        "parts(2)",
    ]
    source = issue_examples.module_source(_task(IPYTHON))
    assert source is not None
    compile(source, issue_examples.ISSUE_PATH, "exec")  # `import *` is refused inside a function
    head, _, body = source.partition(f"def {issue_examples.FUNCTION}")
    assert head.count("    from pkg import *") == 1 and "import *" not in body
