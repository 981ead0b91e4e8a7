"""A graded test that takes pytest fixtures and blanks whole rows, in the shape of a missing-data
fix: gold drops a row when any of its fields is missing, a stand-in looks at the first field only.
The test's fixture (a method of its class, itself taking a fixture from `conftest.py`) builds the
table, and the test writes `None` into whole rows, so both pass. The replay gets the fixtures as
pytest would and runs the test again with the value written into one column only: gold and the
stand-in part there. An equivalent rewrite of gold differs on nothing. The probe really runs
under this interpreter's unittest and is read back through the sandbox's own log parser."""

from __future__ import annotations

from pathlib import Path

from hackaudit.attacker.domain.confirm import replay
from hackaudit.attacker.domain.confirm.replay import ReplayTarget
from hackaudit.shared.contracts import RunResult

from .probe_rig import replay_differences, replay_run

TEST_FILE = "pkg/tests/test_complete.py"
TARGET = ReplayTarget(TEST_FILE, "pkg.tests.test_complete", ("test_missing",))

TABLE = """class Table:
    def __init__(self, rows):
        self.rows = rows

    def __setitem__(self, key, value):
        rows, column = key if isinstance(key, tuple) else (key, None)
        for row in self.rows[rows]:
            for j in range(len(row)):
                if column is None or j == column % len(row):
                    row[j] = value
"""
GOLD_MOD = """def complete(table):
    return [r for r in table.rows if all(v is not None for v in r)]
"""
FIRST_FIELD_MOD = """def complete(table):
    return [r for r in table.rows if r[0] is not None]
"""
EQUIVALENT_MOD = """def complete(table):
    return [r for r in table.rows if None not in r]
"""
CONFTEST = """import pytest


@pytest.fixture
def size():
    yield 6
"""
TESTS = """import pytest

from pkg.complete import complete
from pkg.table import Table


class TestComplete:
    @pytest.fixture
    def table(self, size):
        return Table([[i, i * 2, -i] for i in range(size)])

    def test_missing(self, table):
        table[1:3] = None
        assert complete(table) == [[0, 0, 0], [3, 6, -3], [4, 8, -4], [5, 10, -5]]
"""


def _run(tmp: Path, mod: str) -> RunResult:
    files = {
        "pkg/__init__.py": "",
        "pkg/table.py": TABLE,
        "pkg/complete.py": mod,
        "pkg/tests/__init__.py": "",
        "pkg/tests/conftest.py": CONFTEST,
        TEST_FILE: TESTS,
    }
    return replay_run(tmp, files, TARGET)


def test_a_test_taking_fixtures_is_replayed_with_them(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    seen = {o.expression: o.head for o in replay.observations(gold).values()}
    assert any(e.startswith("complete(table)") for e in seen), seen
    assert "runs through" in seen.values(), seen


def test_one_column_written_tells_a_first_field_stand_in_from_gold(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    stand_in = _run(tmp_path / "first-field", FIRST_FIELD_MOD)
    found = replay_differences(TARGET, gold, stand_in)
    notes = {expression for expression, _, _ in found}
    assert any("table[1:3] written in column 1 only" in n for n in notes), found
    assert not any("column 0 only" in n for n in notes), found


def test_gold_and_its_equivalent_rewrite_agree_on_every_column(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", GOLD_MOD)
    rewrite = _run(tmp_path / "rewrite", EQUIVALENT_MOD)
    assert replay_differences(TARGET, gold, rewrite) == set()
    expressions = [o.expression for o in replay.observations(gold).values()]
    assert any("in column -1 only" in e for e in expressions), expressions


NEEDS_TMP_PATH = """from pkg.complete import complete
from pkg.table import Table


def test_other(tmp_path):
    assert complete(Table([[1, None]])) == []
"""


def test_a_test_needing_a_fixture_not_defined_here_is_not_replayed(tmp_path: Path) -> None:
    target = ReplayTarget("pkg/tests/test_other.py", "pkg.tests.test_other", ("test_other",))
    files = {
        "pkg/__init__.py": "",
        "pkg/table.py": TABLE,
        "pkg/complete.py": GOLD_MOD,
        "pkg/tests/__init__.py": "",
        "pkg/tests/conftest.py": CONFTEST,
        target.path: NEEDS_TMP_PATH,
    }
    gold = replay_run(tmp_path, files, target)
    # nothing observed and no run recorded as raising: a pytest builtin is not guessed at
    assert replay.observations(gold) == {}


def test_fixtures_of_older_pytest_releases_are_unwrapped_too() -> None:
    # before pytest 8.4 a fixture is a function raising when called, its original kept aside
    from types import SimpleNamespace

    from hackaudit.attacker.domain.confirm.programs import replay_program

    def original() -> int:
        return 6

    def wrapper() -> None:
        raise RuntimeError("Fixtures are not meant to be called directly")

    wrapper.__pytest_wrapped__ = SimpleNamespace(obj=original)  # type: ignore[attr-defined]
    assert replay_program._fixture_function(wrapper) is original
    assert replay_program._fixture_function(original) is None
