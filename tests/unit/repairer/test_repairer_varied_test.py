"""The regression test a replayed variant asks for: the graded test itself, renamed, on the one
literal the variant changed, with its own check (nothing about gold's output is guessed)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from hackaudit.repairer.domain import test_patch as tp
from hackaudit.repairer.domain import varied_test
from hackaudit.repairer.service_layer.augmenters import Context, OfflineAugmenter, Target
from hackaudit.shared.contracts import (
    Candidate,
    GateReason,
    ProbeDifference,
    ProposedTest,
    Provenance,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    TestStatus,
)
from tests.scripted_sandbox import ScriptedSandbox, added_tests

from .conftest import example_task

TEST_PATCH = (
    "diff --git a/tests/test_run.py b/tests/test_run.py\n"
    "--- a/tests/test_run.py\n"
    "+++ b/tests/test_run.py\n"
    "@@ -10,4 +10,13 @@ class TestRun:\n"
    "     def test_before(self):\n"
    "         pass\n"
    " \n"
    "+    def test_ignore_current_dir(self) -> None:\n"
    '+        """Paths are normalised before they are matched."""\n'
    "+        with _cwd():\n"
    '+            os.chdir(join(HERE, "data"))\n'
    "+            self._runtest(\n"
    '+                [".", "--recursive=y", "--ignore-paths=^ignored/.*"],\n'
    "+                code=0,\n"
    "+            )\n"
    "+\n"
    "     def test_after(self):\n"
)
CUT_PATCH = TEST_PATCH.rsplit("+\n", 1)[0].replace("@@ -10,3 +10,11 @@", "@@ -10,3 +10,10 @@")


def _difference(expression: str, gold: str = "variant returns None") -> ProbeDifference:
    return ProbeDifference(
        origin="replay",
        expression=expression,
        test="tests/test_run.py::TestRun.test_ignore_current_dir",
        gold=gold,
        candidate="variant raises AssertionError",
    )


EXPRESSION = (
    'self._runtest( [".", "--recursive=y", "--ignore-paths=^ignored/.*"], code=0, )'[:57]
    + "...  [literal '.' -> './.']"
)


def test_the_changed_literal_is_read_back_from_the_observation() -> None:
    change = varied_test.literal_change(_difference(EXPRESSION))
    assert change is not None and (change.old, change.new, change.holds) == (".", "./.", True)
    assert change.head.startswith('self._runtest( [".",')
    # gold raising on the variant, or no literal note: nothing to copy
    assert varied_test.literal_change(_difference(EXPRESSION, "variant raises KeyError")) is None
    assert varied_test.literal_change(_difference("self._runtest()")) is None
    # the helper's own check failing under gold: a copy that expects it to fail
    fails = varied_test.literal_change(
        _difference(EXPRESSION, "variant check fails").model_copy(
            update={"candidate": "variant returns None"}
        )
    )
    assert fails is not None and not fails.holds


def test_the_copy_is_the_test_on_the_new_literal_renamed_without_its_docstring() -> None:
    patch = tp.parse(TEST_PATCH)
    source = varied_test.test_source(patch, "tests/test_run.py", "test_ignore_current_dir")
    assert source is not None and source.startswith("def test_ignore_current_dir(self)")
    change = varied_test.literal_change(_difference(EXPRESSION))
    assert change is not None
    copied = varied_test.varied_copy(source, change, "test_ignore_dot_slash")
    assert copied is not None
    function = ast.parse(copied).body[0]
    assert isinstance(function, ast.FunctionDef) and function.name == "test_ignore_dot_slash"
    assert "'./.'" in copied and '[".",' not in copied
    assert '"data"' in copied  # the other calls' literals are left alone
    assert "normalised" not in copied
    # apart from the literal, the name and the docstring, the copy is the test itself
    original = ast.parse(source).body[0]
    assert isinstance(original, ast.FunctionDef)
    original.body, original.name = original.body[1:], "x"
    back = ast.parse(copied.replace("'./.'", '"."')).body[0]
    assert isinstance(back, ast.FunctionDef)
    back.name = "x"
    assert ast.dump(back) == ast.dump(original)


def test_a_test_the_patch_does_not_show_whole_is_not_copied() -> None:
    cut = tp.parse(CUT_PATCH)  # the hunk ends inside the test
    assert varied_test.test_source(cut, "tests/test_run.py", "test_ignore_current_dir") is None
    patch = tp.parse(TEST_PATCH)
    assert varied_test.test_source(patch, "tests/other.py", "test_ignore_current_dir") is None


# --- the checked call with one list item left out --------------------------------------------


def _source() -> str:
    patch = tp.parse(TEST_PATCH)
    source = varied_test.test_source(patch, "tests/test_run.py", "test_ignore_current_dir")
    assert source is not None
    return source


def _change() -> varied_test.LiteralChange:
    change = varied_test.literal_change(_difference(EXPRESSION))
    assert change is not None
    return change


HEAD = _change().head


def test_each_item_of_the_checked_calls_list_is_left_out_in_turn() -> None:
    found = varied_test.ablations(_source(), HEAD)
    assert [a.dropped for a in found] == [".", "--recursive=y", "--ignore-paths=^ignored/.*"]
    assert found[2].call == "self._runtest(['.', '--recursive=y'], code=0)"
    # a call that is not a statement of its own (its value is used) is not a checked call
    assert varied_test.ablations("def test_x(self):\n    y = f([1, 2])\n", "f(") == []


def test_the_probes_are_the_test_with_its_call_replaced_both_ways() -> None:
    probes = varied_test.ablation_probes(_source(), HEAD, "test_probe")
    assert [(name, holds) for name, _, holds, _ in probes] == [
        ("test_probe_a0h", True), ("test_probe_a0f", False),
        ("test_probe_a1h", True), ("test_probe_a1f", False),
        ("test_probe_a2h", True), ("test_probe_a2f", False),
    ]  # fmt: skip
    name, _, _, text = probes[5]
    function = ast.parse(text).body[0]
    assert isinstance(function, ast.FunctionDef) and function.name == name
    # still inside the test's own set-up, the original call gone
    with_block = function.body[0]
    assert isinstance(with_block, ast.With)
    replaced = with_block.body[-1]
    assert isinstance(replaced, ast.Try)
    assert '"data"' in text and "--ignore-paths" not in ast.unparse(replaced.body[0])


def _run_probe(text: str, exit_code: int) -> str:
    """Run a probe whose `_runtest` reports `exit_code`: 'passed' or the exception's type."""
    namespace: dict[str, object] = {}
    exec(  # the probe's source is the project's own output here, not a candidate's
        "import contextlib, os\n"
        "def _cwd():\n    return contextlib.nullcontext()\n"
        "HERE = '.'\n"
        "def join(*a):\n    return '.'\n",
        namespace,
    )
    namespace["os"] = type("os", (), {"chdir": staticmethod(lambda p: None)})
    exec(text, namespace)

    class Run:
        def _runtest(self, args: list[str], code: int) -> None:
            assert exit_code == code

    fn = next(v for k, v in namespace.items() if k.startswith("test_probe"))
    try:
        fn(Run())  # type: ignore[operator]
    except Exception as exc:
        return type(exc).__name__
    return "passed"


def test_a_copy_can_expect_the_check_to_fail_on_the_new_literal() -> None:
    """Gold's check fails on the variant and an exploit meets it: the copy expects the failure."""
    fails = varied_test.LiteralChange(HEAD, "--ignore-paths=^ignored/.*", "", holds=False)
    copied = varied_test.varied_copy(_source(), fails, "test_fails")
    assert copied is not None
    text = copied.replace("def test_fails", "def test_probe_fails")
    assert _run_probe(text, 20) == "passed"  # gold: code 20, the check `code=0` fails
    assert _run_probe(text, 0) == "AssertionError"  # an exploit that meets the check


def test_exactly_one_probe_of_a_pair_passes_when_the_check_is_an_assertion() -> None:
    for _, _, holds, text in varied_test.ablation_probes(_source(), HEAD, "test_probe")[4:]:
        # gold's code without the ignore option is 20: the check `code=0` fails
        assert _run_probe(text, 20) == ("AssertionError" if holds else "passed")
        assert _run_probe(text, 0) == ("passed" if holds else "AssertionError")


def test_pinned_results_follow_the_varied_call_inside_its_set_up() -> None:
    found = varied_test.ablations(_source(), HEAD)
    after = varied_test.pin_lines([(found[0], True), (found[2], False)])
    copied = varied_test.varied_copy(_source(), _change(), "test_wide", after)
    assert copied is not None
    function = ast.parse(copied).body[0]
    assert isinstance(function, ast.FunctionDef)
    with_block = function.body[0]
    assert isinstance(with_block, ast.With)
    calls = [ast.unparse(s) for s in with_block.body]
    assert calls[1].startswith("self._runtest(['./.', '--recursive=y'")  # the varied call first
    assert calls[2] == "self._runtest(['--recursive=y', '--ignore-paths=^ignored/.*'], code=0)"
    assert isinstance(with_block.body[3], ast.Try)
    assert "the check held without '--ignore-paths=^ignored/.*'" in copied


# --- the augmenter: gold decides which version is pinned, once; the plain copy is the fallback -


World = tuple[ScriptedSandbox, OfflineAugmenter, Callable[..., Context]]


def _augmenter_world() -> World:
    task = example_task("mdtable__mdtable-2").model_copy(
        update={
            "test_patch": TEST_PATCH,
            "fail_to_pass": ("tests/test_run.py::TestRun::test_ignore_current_dir",),
            "pass_to_pass": (),
        }
    )
    exploit = Candidate(
        instance_id=task.instance_id, diff="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
        provenance=Provenance(strategy="mutation"),
    )  # fmt: skip
    # Gold without "." fails the check (both versions crash: nothing pinned), without
    # "--recursive=y" the check holds, without the ignore option it fails.
    passing = {"a0": None, "a1": "h", "a2": "f"}

    def rule(request: RunRequested) -> RunResult | None:
        if request.purpose is not RunPurpose.PROBE:
            return None
        patch = added_tests(request)
        if "test_hackaudit_capture" in patch:
            return RunResult(status=RunStatus.COMPLETED, tests={})  # nothing captured
        names = re.findall(r"def (test_hackaudit_ablation_\w+)\(", patch)
        tests = {
            f"tests/test_run.py::TestRun::{n}": (
                TestStatus.PASSED if passing[n[-3:-1]] == n[-1] else TestStatus.FAILED
            )
            for n in names
        }
        return RunResult(status=RunStatus.COMPLETED, resolved=False, tests=tests)

    sandbox = ScriptedSandbox([rule])
    target = Target(exploit, "", (_difference(EXPRESSION),))
    augmenter = OfflineAugmenter(sandbox.run, [target], task=task)

    def ctx(tried: tuple[ProposedTest, ...] | list[ProposedTest] = ()) -> Context:
        return Context(task, tp.parse(TEST_PATCH), target, tuple(tried), 1, frozenset())

    return sandbox, augmenter, ctx


async def test_the_widened_copy_pins_only_what_gold_showed_and_the_plain_one_follows() -> None:
    sandbox, augmenter, ctx = _augmenter_world()
    wide = await augmenter.propose(ctx())
    assert wide is not None and "2 calls with one item left out" in wide.origin
    body = ast.unparse(ast.parse(wide.source))
    assert "self._runtest(['.', '--ignore-paths=^ignored/.*'], code=0)" in body
    assert "the check held without '--ignore-paths=^ignored/.*'" in body
    assert "['--recursive=y', '--ignore-paths" not in body  # gold crashed both ways: not pinned
    ablation_runs = [
        r for r in sandbox.requests
        if r.purpose is RunPurpose.PROBE and "ablation" in (r.test_patch or "")
    ]  # fmt: skip
    assert len(ablation_runs) == 1 and ablation_runs[0].repeats == 3

    def tried(reason: GateReason) -> ProposedTest:
        return ProposedTest(name=wide.name, file="tests/test_run.py", exploit=ctx().target.id,
                            augmenter="offline", rejection=reason)  # fmt: skip

    # rejected on gold: the pins may be at fault, so the plain copy comes next
    plain = await augmenter.propose(ctx([tried(GateReason.FAILS_ON_GOLD)]))
    assert plain is not None and plain.name != wide.name
    assert "left out" not in plain.origin and "try:" not in plain.source
    assert "'./.'" in plain.source
    # not blocking: the plain copy would not block either
    _, again, ctx2 = _augmenter_world()
    first = await again.propose(ctx2())
    assert first is not None
    rejected = ProposedTest(name=first.name, file="tests/test_run.py", exploit=ctx2().target.id,
                            augmenter="offline", rejection=GateReason.DOES_NOT_BLOCK)  # fmt: skip
    assert await again.propose(ctx2([rejected])) is None
