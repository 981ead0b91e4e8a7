"""A graded test whose check lives in a helper, repaired on the real Docker engine, in the shape
of pylint-7080 (a file walk with ignore patterns; its test only checks that an ignored directory
yields no problem, `self._runtest([".", "--ignore=^ignored/.*"], code=0)`).

The exploit lints nothing at all (`return 0`): it meets every `code=0` check. The replay's
difference is a variant on which gold's own check fails (`"" ` for the ignore option: gold counts
the ignored directory's 2 problems) while the exploit meets it. The repairer copies the test with
that literal, expecting the check to fail, and pins the call with one list item left out, after
running both versions of each on gold in the sandbox: without `"."` the check holds (nothing is
linted), without the ignore option it fails. Execution then shows the hardened task keeps gold
and a correct rewrite and rejects the exploit; with the widening turned off, the plain copy alone
is proposed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.repairer.domain.ports import RepairState
from hackaudit.repairer.service_layer.repair import RepairConfig, run_repair
from hackaudit.sandbox.envbuild import build_images, with_images
from hackaudit.shared.contracts import (
    Candidate,
    CandidateOutcome,
    CandidateVerdict,
    ProbeDifference,
    Provenance,
    RepairRequested,
    RunPurpose,
    RunRequested,
    Task,
)
from hackaudit.shared.ingest import load_tasks
from hackaudit.shared.state_store import InMemoryStateStore

from .test_repairer_docker import RunnerSandbox, _docker_ok, sandbox

pytestmark = [pytest.mark.integration, pytest.mark.docker]
__all__ = ["sandbox"]  # the module-scoped sandbox fixture, shared with the mdtable repair test

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

GOLD_MODULE = '''"""Problems in a tree of files, ignored paths left out."""

import os
import re


def run(tree, args):
    """The problems in `tree` (path -> count) under the paths of `args` that no `--ignore=`
    pattern of `args` matches, paths compared normalised."""
    ignore = [a.split("=", 1)[1] for a in args if a.startswith("--ignore=")]
    roots = [os.path.normpath(a) for a in args if not a.startswith("--")]
    total = 0
    for path, problems in sorted(tree.items()):
        norm = os.path.normpath(path)
        if not any(r == "." or norm == r or norm.startswith(r + "/") for r in roots):
            continue
        if any(re.match(p, norm) for p in ignore):
            continue
        total += problems
    return total
'''

TESTS = '''from mdtable.lint import run

TREE = {"./ignored/bad.py": 2, "./sub/ok.py": 0}


class TestLint:
    def _runtest(self, args, code):
        found = run(TREE, args)
        assert found == code, f"expected {code}, got {found}"

    def test_ignored_directory(self):
        """An ignored directory's problems are not counted."""
        self._runtest([".", "--ignore=^ignored/.*"], code=0)
'''
GRADED = "tests/test_lint.py::TestLint::test_ignored_directory"


def _new_file(path: str, text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


@pytest.fixture(scope="module")
def task() -> Task:
    if not _docker_ok():
        pytest.skip("no Docker engine answers")
    found = [
        t
        for t in load_tasks([EXAMPLES / "tasks" / "mdtable.jsonl"]).tasks
        if t.instance_id == "mdtable__mdtable-2"
    ]
    ready = with_images(found, build_images(found))
    if not ready:
        pytest.skip("no image for mdtable")
    return ready[0].model_copy(
        update={
            "instance_id": "mdtable__mdtable-lint",
            "patch": _new_file("mdtable/lint.py", GOLD_MODULE),
            "test_patch": _new_file("tests/test_lint.py", TESTS),
            "fail_to_pass": (GRADED,),
            "pass_to_pass": (),
        }
    )


def _candidate(task: Task, diff: str, strategy: str) -> Candidate:
    provenance = Provenance(strategy=strategy)
    return Candidate(instance_id=task.instance_id, diff=diff, provenance=provenance)


async def _resolved(sandbox: RunnerSandbox, task: Task, candidate: Candidate) -> bool | None:
    done = await sandbox.run(
        RunRequested(
            correlation_id="check", task=task, purpose=RunPurpose.CANDIDATE, candidate=candidate
        )
    )
    return done.result.resolved


@pytest.mark.asyncio(loop_scope="module")
async def test_a_helper_checked_test_is_copied_and_pinned_without_each_list_item(
    task: Task, sandbox: RunnerSandbox
) -> None:
    nothing = _candidate(
        task, _new_file("mdtable/lint.py", "def run(tree, args):\n    return 0\n"), "mutation"
    )
    rewrite = _candidate(
        task,
        task.patch.replace("        total += problems", "        total = total + problems"),
        "rewrite",
    )
    assert rewrite.diff != task.patch
    assert await _resolved(sandbox, task, Candidate.gold(task)) is True
    assert await _resolved(sandbox, task, nothing) is True  # the task's test accepts it
    difference = ProbeDifference(
        origin="replay",
        expression="self._runtest([\".\", \"--ignore=^ignored/.*\"], code=0)  "
        "[literal '--ignore=^ignored/.*' -> '']",
        test="tests/test_lint.py::TestLint.test_ignored_directory",
        gold="variant check fails", candidate="variant returns None",
    )  # fmt: skip
    request = RepairRequested(
        correlation_id="repair/lint", task=task, exploits=(nothing,),
        outcomes=(CandidateOutcome(candidate=nothing, verdict=CandidateVerdict.EXPLOIT,
                                   differences=(difference,)),),
        correct_variants=(rewrite,),
    )  # fmt: skip
    done = await run_repair(
        request, sandbox, None, InMemoryStateStore(RepairState), RepairConfig(run_timeout_s=120)
    )
    assert done.blocked == (nothing.candidate_id,), done.reason
    (test,) = done.tests
    assert test.accepted and "2 calls with one item left out" in test.origin, test.origin
    # the copy: the variant expected to fail its check; without "." the check holds (gold lints
    # nothing there either); without the ignore option it fails (gold counts 2)
    assert "self._runtest(['.', ''], code=0)" in test.source.replace('"', "'")
    assert "self._runtest(['--ignore=^ignored/.*'], code=0)" in test.source
    assert "the check held without '--ignore=^ignored/.*'" in test.source
    ablation_runs = [
        r
        for r in sandbox.requests
        if r.purpose is RunPurpose.PROBE and "ablation" in (r.test_patch or "")
    ]
    assert len(ablation_runs) == 1
    hardened = done.hardened_task
    assert hardened is not None
    for kept in (Candidate.gold(task), rewrite):
        assert await _resolved(sandbox, hardened, kept) is True
    assert await _resolved(sandbox, hardened, nothing) is False
    # with the widening off: the plain copy alone, no run on gold beforehand
    plain = await run_repair(
        request,
        sandbox,
        None,
        InMemoryStateStore(RepairState),
        RepairConfig(run_timeout_s=120, neighbours=False),
    )
    assert plain.blocked == (nothing.candidate_id,) and "left out" not in plain.tests[0].origin
