"""Mutants beyond gold's own lines: the functions gold changes, the lines its FAIL_TO_PASS tests
run there, each mutant a diff from the base that applies, and a small gold patch that gets its
full budget from them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.confirm import coverage_map
from hackaudit.attacker.domain.generate.strategies import beyond_gold
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.reading import diffs
from hackaudit.attacker.service_layer.attack import run_attack
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    Candidate,
    Coverage,
    CoverageResult,
    FileCoverage,
    RunPurpose,
    RunRequested,
    RunResult,
    RunStatus,
    Task,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox
from tests.unit.attacker.conftest import diff_of, git, make_repo

PATH = "pkg/amounts.py"
BASE = '''"""Amounts as text."""


def label(kind):
    return kind.title()


def show(value, places=2, sign=False):
    """The amount with `places` decimals; `sign` puts a plus before a positive one."""
    text = f"{abs(value):.{places}f}"
    if value < 0:
        text = "-" + text
    elif sign and value > 0:
        text = "+" + text
    return text


class Ledger:
    def total(self, values):
        return sum(values)
'''
# Gold's fix: two added lines (the value read as a number, the text stripped), in a task graded
# by sympy's runner, where most harness variants cannot act: the offline candidates run short.
GOLD_TEXT = BASE.replace(
    '    text = f"{abs(value):.{places}f}"',
    '    value = float(value)\n    text = f"{abs(value):.{places}f}"',
).replace("    return text\n", "    text = text.strip()\n    return text\n")
GOLD_LINES = (10, 16)
F2P = ["test_show"]


def _number(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if fragment in line)


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, Task]:
    repo = make_repo(tmp_path / "amounts", {PATH: BASE})
    gold = diff_of(repo, {PATH: GOLD_TEXT}, ["pkg"])
    task = Task(
        instance_id="amounts-1",
        repo="x/amounts",
        base_commit=git(repo, "rev-parse", "HEAD").stdout.strip(),
        patch=gold,
        test_patch="",
        FAIL_TO_PASS=F2P,
        PASS_TO_PASS=["test_label"],
        log_parser="sympy",
    )
    return repo, task


def _show_lines() -> list[int]:
    """The statements of `show` after gold (what coverage.py reports as executed)."""
    first = _number(GOLD_TEXT, "def show(")
    return [n for n in range(first, first + 10) if n != first + 1]  # the docstring apart


def measured(executed: dict[int, tuple[int, ...]] | None = None) -> CoverageResult:
    """Gold's coverage of the graded tests: `test_show` (0) runs `show`, `test_label` (1) runs
    `label`; import-time lines fall under "" (2)."""
    label = _number(GOLD_TEXT, "return kind.title()")
    lines = executed if executed is not None else dict.fromkeys(_show_lines(), (0,))
    lines = {**lines, label: (1,), 4: (2,)}
    return CoverageResult(
        tests=("pkg.tests.test_amounts.test_show", "pkg.tests.test_amounts.test_label", ""),
        files={PATH: FileCoverage(executed=lines)},
        per_test=True,
        sources={PATH: GOLD_TEXT},
    )


# --- the pure parts ----------------------------------------------------------------------------


def test_the_functions_gold_changes_are_found_innermost_first() -> None:
    found = beyond_gold.changed_functions(GOLD_TEXT, GOLD_LINES)
    assert [(f.name, f.first) for f in found] == [("show", _number(GOLD_TEXT, "def show("))]
    method = _number(GOLD_TEXT, "return sum(values)")
    (total,) = beyond_gold.changed_functions(GOLD_TEXT, [method])
    assert total.name == "Ledger.total" and total.holds(method)
    assert beyond_gold.changed_functions(GOLD_TEXT, [1]) == ()  # the module docstring
    assert beyond_gold.changed_functions("def broken(:\n", [1]) == ()


def test_gold_lines_are_its_added_lines_and_reversing_them_gives_the_base(small) -> None:
    _, task = small
    (f,) = diffs.read(task.gold_diff).files
    assert beyond_gold.gold_lines(f) == GOLD_LINES
    assert beyond_gold.base_text(GOLD_TEXT, f) == BASE
    assert beyond_gold.base_text(BASE, f) is None  # not gold's text: the hunk is not there


def test_only_lines_under_fail_to_pass_tests_count() -> None:
    cover = measured()
    executed = beyond_gold.executed_lines(cover, PATH, F2P)
    assert executed == set(_show_lines())  # not `label` (a PASS_TO_PASS test), not imports
    assert beyond_gold.executed_lines(cover, "pkg/other.py", F2P) == set()
    # FAIL_TO_PASS named as pytest, unittest or Django name it: the test function decides.
    for named in (
        "pkg/tests/test_amounts.py::test_show[1-2]",
        "test_show (pkg.tests.test_amounts.AmountTests.test_show)",
    ):
        assert beyond_gold.executed_lines(cover, PATH, [named]) == executed
    # When no test name matches FAIL_TO_PASS, any test's lines count; without test names, all.
    assert _number(GOLD_TEXT, "kind.title") in beyond_gold.executed_lines(cover, PATH, ["t_x"])
    flat = cover.model_copy(update={"per_test": False})
    assert 4 in beyond_gold.executed_lines(flat, PATH, F2P)


def test_targets_are_the_executed_lines_of_the_functions_beyond_golds_nearest_first() -> None:
    functions = beyond_gold.changed_functions(GOLD_TEXT, GOLD_LINES)
    executed = {*_show_lines(), _number(GOLD_TEXT, "kind.title"), 1}
    targets = beyond_gold.target_lines(functions, GOLD_LINES, executed)
    assert set(targets) == set(_show_lines()) - set(GOLD_LINES)
    assert targets[0] in (11, 15, 17)  # next to a gold line
    distances = [min(abs(n - g) for g in GOLD_LINES) for n in targets]
    assert distances == sorted(distances)


def test_text_diff_applies_and_keeps_a_missing_final_newline(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\ny = 2\nz = 3"})
    diff = diffs.emit_patch(
        diffs.Patch(files=(diffs.between("a.py", "x = 1\ny = 2\nz = 3", "x = 1\ny = 5\nz = 3"),))
    )
    assert git(repo, "apply", "--check", "-", stdin=diff).returncode == 0, diff
    assert "-y = 2\n+y = 5" in diff
    assert diffs.between("a.py", "same\n", "same\n").hunks == ()


# --- the mutants -------------------------------------------------------------------------------


def test_each_mutant_is_gold_plus_one_changed_line_and_applies_to_the_base(small) -> None:
    repo, task = small
    found = beyond_gold.mutants(task, measured())
    assert len(found) >= 15
    assert found == beyond_gold.mutants(task, measured())  # deterministic
    assert len({c.content_hash for c in found}) == len(found)
    gold_hash = Candidate(instance_id=task.instance_id, diff=task.patch).content_hash
    targets = set(_show_lines()) - set(GOLD_LINES)
    touched: set[int] = set()
    for c in found:
        assert c.content_hash != gold_hash
        assert c.provenance.strategy == beyond_gold.NAME and "(show)" in c.provenance.detail
        check = git(repo, "apply", "--check", "-", stdin=c.diff)
        assert check.returncode == 0, (c.provenance.detail, check.stderr, c.diff)
        assert git(repo, "apply", "-", stdin=c.diff).returncode == 0
        after = (repo / PATH).read_text()
        git(repo, "checkout", "-q", "--", ".")
        assert "    value = float(value)" in after and "    text = text.strip()" in after
        changed = [
            n
            for n, (a, b) in enumerate(
                zip(GOLD_TEXT.split("\n"), after.split("\n"), strict=True), 1
            )
            if a != b
        ]
        assert len(changed) == 1 and changed[0] in targets, c.provenance.detail
        touched.add(changed[0])
    assert len(touched) >= 4  # one mutant of every line before a second of any


def test_nothing_without_the_files_text_or_an_executed_line(small) -> None:
    _, task = small
    assert beyond_gold.mutants(task, measured().model_copy(update={"sources": {}})) == []
    only_gold = dict.fromkeys(GOLD_LINES, (0,))
    assert beyond_gold.mutants(task, measured(only_gold)) == []
    no_source = RunResult(status=RunStatus.COMPLETED, coverage=CoverageResult())
    assert beyond_gold.from_runs(task, (no_source,)) == []
    assert beyond_gold.why_none((no_source,)) == "gold's coverage run returned no file text"


def test_golds_one_coverage_run_measures_the_changed_files_whole_with_their_text(small) -> None:
    """One run of the graded tests serves the map of gold's change and these mutants: the whole
    files with their text, gold's changed lines kept first when the report is cut to size."""
    _, task = small
    hunks = coverage_map.changed_hunks(task.gold_diff.applied())
    run = coverage_map.invocation(hunks, beyond_gold.source_files(task))
    changed = tuple(n for h in hunks for n in h.lines)
    assert run == Coverage(files=(PATH,), first={PATH: changed}, with_source=True)
    assert not run.lines, "no line filter: the lines around gold's are measured too"


# --- the attack --------------------------------------------------------------------------------


def _answers_coverage(sources: bool):
    def rule(request: RunRequested) -> RunResult | None:
        run = request.invocation
        if not isinstance(run, Coverage):
            return None
        # A sandbox that does not return the files' text measures all the same.
        cover = measured() if sources else measured().model_copy(update={"sources": {}})
        return RunResult(status=RunStatus.COMPLETED, coverage=cover, duration_s=2.0)

    return rule


def _request(task: Task) -> AttackRequested:
    options = AuditOptions(candidates_per_round=5, rounds=3)
    return AttackRequested(correlation_id="audit-a", task=task, options=options)


async def test_a_two_line_gold_patch_gets_its_full_budget(small) -> None:
    _, task = small
    before = await run_attack(
        _request(task),
        ScriptedSandbox([_answers_coverage(sources=False)]),
        None,
        InMemoryStateStore(RoundState),
    )
    assert len(before.outcomes) < 15
    assert before.budget_note.startswith(f"only {len(before.outcomes)} distinct")
    assert "no mutant beyond gold's lines: gold's coverage run returned no file text" in (
        before.budget_note
    )

    sandbox = ScriptedSandbox([_answers_coverage(sources=True)])
    after = await run_attack(_request(task), sandbox, None, InMemoryStateStore(RoundState))
    assert len(after.outcomes) == 15 and after.budget_note == ""
    beyond = [o for o in after.outcomes if o.candidate.provenance.strategy == beyond_gold.NAME]
    assert len(beyond) == 15 - len(before.outcomes)
    # The others keep their places: the mutants fill only the slots they leave.
    assert [o.candidate.content_hash for o in after.outcomes][: len(before.outcomes)] == [
        o.candidate.content_hash for o in before.outcomes
    ]
    # One coverage run of gold serves the map and the mutants.
    coverage_runs = [r for r in sandbox.requests if isinstance(r.invocation, Coverage)]
    assert len(coverage_runs) == 1 and coverage_runs[0].purpose is RunPurpose.PROBE
    # The mutants join only once a round could not be filled: not in the rounds that could.
    assert not any(o.candidate.provenance.strategy == beyond_gold.NAME for o in after.outcomes[:10])


async def test_the_note_counts_the_mutants_beyond_gold_when_still_short(small) -> None:
    _, task = small
    options = AuditOptions(candidates_per_round=10, rounds=20)
    request = AttackRequested(correlation_id="audit-b", task=task, options=options)
    done = await run_attack(
        request,
        ScriptedSandbox([_answers_coverage(sources=True)]),
        None,
        InMemoryStateStore(RoundState),
    )
    beyond = sum(o.candidate.provenance.strategy == beyond_gold.NAME for o in done.outcomes)
    assert beyond > 0 and len(done.outcomes) < 200
    assert (
        f"{beyond} of them mutate lines beyond gold's that the FAIL_TO_PASS tests execute"
        in done.budget_note
    )


def test_the_run_is_asked_for_once_and_only_when_a_round_falls_short(small) -> None:
    _, task = small
    state = orch.new_state(_request(task))
    assert orch.wants_beyond_gold(state, 4) and not orch.wants_beyond_gold(state, 5)
    measured_once = state.model_copy(update={"beyond_gold": True})
    assert not orch.wants_beyond_gold(measured_once, 0)


async def test_a_task_with_no_other_candidate_is_filled_from_beyond_gold(small) -> None:
    """The held-out case: no offline family has a candidate (here: none is given), so the
    first round already asks for gold's files, and every slot is a mutant beyond gold's lines."""
    _, task = small
    sandbox = ScriptedSandbox([_answers_coverage(sources=True)])
    done = await run_attack(
        _request(task), sandbox, None, InMemoryStateStore(RoundState), offline=()
    )
    assert len(done.outcomes) == 15 and done.budget_note == ""
    assert {o.candidate.provenance.strategy for o in done.outcomes} == {beyond_gold.NAME}
    assert {o.candidate.provenance.round for o in done.outcomes} == {1, 2, 3}
