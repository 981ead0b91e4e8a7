"""Gold's change taken only for the object the tests build, and the replay that tells it apart.

The graded test builds one grid from literals and checks a method through it. The special case
makes gold's changed statement for objects equal to that grid only, the base statement for every
other: the test passes it. The replay runs the test again with the grid built one number beside,
where gold and the special case part; an equivalent rewrite of gold parts from gold nowhere. The
probe really runs under this interpreter's unittest and is read back through the sandbox's own
log parser."""

from __future__ import annotations

from pathlib import Path

from hackaudit.attacker.domain.confirm.replay import ReplayTarget
from hackaudit.attacker.domain.generate.strategies import special_casing, tested_objects
from hackaudit.attacker.domain.reading import diffs, test_expressions
from hackaudit.shared.contracts import RunResult, Task

from .probe_rig import replay_differences, replay_run

BASE = [
    "class Grid:",
    "    def __init__(self, rows):",
    "        self.rows = rows",
    "",
    "    def __eq__(self, other):",
    "        return isinstance(other, Grid) and self.rows == other.rows",
    "",
    "    __hash__ = None",
    "",
    "    def width(self):",
    "        rows = self.rows",
    "        return len(rows)",
]
GOLD_LINE = "        return len(rows[0])"


def _gold_diff() -> str:
    head = [
        "diff --git a/pkg/grid.py b/pkg/grid.py",
        "--- a/pkg/grid.py",
        "+++ b/pkg/grid.py",
        f"@@ -1,{len(BASE)} +1,{len(BASE)} @@",
    ]
    body = [" " + line for line in BASE[:-1]] + ["-" + BASE[-1], "+" + GOLD_LINE]
    return "\n".join([*head, *body, ""])


TEST_FILE = "pkg/tests/test_grid.py"
TESTS = """from pkg.grid import Grid


def test_width():
    A = Grid([[1, 2, 3], [4, 5, 6]])
    assert A.width() == 3
"""
TEST_PATCH = "\n".join(
    [
        f"diff --git a/{TEST_FILE} b/{TEST_FILE}",
        "new file mode 100644",
        "--- /dev/null",
        f"+++ b/{TEST_FILE}",
        f"@@ -0,0 +1,{len(TESTS.splitlines())} @@",
        *("+" + line for line in TESTS.splitlines()),
        "",
    ]
)
TARGET = ReplayTarget(TEST_FILE, "pkg.tests.test_grid", ("test_width",))


def _task() -> Task:
    return Task(
        instance_id="grid-1", repo="x/y", base_commit="HEAD", patch=_gold_diff(),
        test_patch=TEST_PATCH, FAIL_TO_PASS=["pkg/tests/test_grid.py::test_width"],
    )  # fmt: skip


def _special_case_module() -> str:
    task = _task()
    gold = special_casing.parse_gold(task)
    assert gold is not None
    (candidate,) = tested_objects.tested_objects(task, gold)
    assert "objects the tests build" in candidate.provenance.detail
    (hunk,) = diffs.read(candidate.diff).files[0].hunks
    return "\n".join(hunk.new_side()) + "\n"


def _module(source: str) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "grid"}
    exec(compile(source, "grid.py", "exec"), namespace)
    return namespace


def test_the_special_case_answers_gold_for_the_tested_grid_only() -> None:
    grid = _module(_special_case_module())["Grid"]
    assert grid([[1, 2, 3], [4, 5, 6]]).width() == 3  # type: ignore[operator]  # gold's answer
    assert grid([[1, 2, 3, 4], [4, 5, 6, 7]]).width() == 2  # type: ignore[operator]  # base's


def test_a_change_that_is_no_whole_statement_is_left_alone() -> None:
    task = _task().model_copy(
        update={"patch": _gold_diff().replace("+" + GOLD_LINE, "+        return len(\n+")}
    )
    gold = special_casing.parse_gold(task)
    assert gold is None or tested_objects.tested_objects(task, gold) == []


def _run(tmp: Path, module: str) -> RunResult:
    files = {"pkg/__init__.py": "", "pkg/grid.py": module, "pkg/tests/__init__.py": ""}
    return replay_run(tmp, {**files, TEST_FILE: TESTS}, TARGET)


GOLD_MODULE = "\n".join([*BASE[:-1], GOLD_LINE, ""])
EQUIVALENT_MODULE = GOLD_MODULE.replace("len(rows[0])", "len(next(iter(rows)))")


def test_the_grid_built_one_number_beside_tells_the_special_case_from_gold(
    tmp_path: Path,
) -> None:
    gold = _run(tmp_path / "gold", GOLD_MODULE)
    special = _run(tmp_path / "special", _special_case_module())
    found = replay_differences(TARGET, gold, special)
    assert any("[A built with 1 -> 2]" in expression for expression, _, _ in found), found


def test_gold_and_its_equivalent_rewrite_agree_on_the_grid_beside(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MODULE)
    rewrite = _run(tmp_path / "rewrite", EQUIVALENT_MODULE)
    assert replay_differences(TARGET, gold, rewrite) == set()


def test_tests_checking_several_examples_get_no_such_special_case() -> None:
    two = TESTS + "    B = Grid([[7, 8]])\n    assert B.width() == 2\n"
    patch = TEST_PATCH.replace(
        TESTS.splitlines()[-1], TESTS.splitlines()[-1] + "\n+" + "\n+".join(two.splitlines()[-2:])
    )
    patch = patch.replace(f"+1,{len(TESTS.splitlines())} @@", f"+1,{len(two.splitlines())} @@")
    task = _task().model_copy(update={"test_patch": patch})
    gold = special_casing.parse_gold(task)
    assert gold is not None
    assert len(tested_objects.examples(test_expressions.extract(task.test_diff))) == 2
    assert tested_objects.tested_objects(task, gold) == []
