"""The Verified selection of the real corpus (examples/real): which tasks are built and why the
others are not, computed from the shared data, and the command line that writes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT / "examples" / "real"
sys.path.insert(0, str(REAL))

from realcorpus.reserved import RESERVED  # noqa: E402
from realcorpus.select import choose, verified_selection  # noqa: E402
from realcorpus.sources import SharedData, TestLists  # noqa: E402

SHARED = Path("/work/shared/data/swebench-verified")


def _data() -> SharedData:
    data = SharedData()
    rows = {
        "sympy__sympy-100": ("sympy/sympy", "1.1"),
        "sympy__sympy-101": ("sympy/sympy", "1.1"),
        "astropy__astropy-200": ("astropy/astropy", "1.3"),
        "astropy__astropy-201": ("astropy/astropy", "5.1"),
        "django__django-300": ("django/django", "4.0"),
    }
    for instance_id, (repo, version) in rows.items():
        data.metadata[instance_id] = {"id": instance_id, "repo": repo, "version": version}
    data.specs = {
        "sympy/sympy": {"1.1": {"python": "3.9"}},
        "astropy/astropy": {"1.3": {"python": "3.6"}, "5.1": {"python": "3.9"}},
        "django/django": {"4.0": {"python": "3.11"}},
    }
    data.lists["sympy__sympy-100"] = TestLists(["test_a"], ["test_b"])
    data.lists["sympy__sympy-101"] = TestLists([], ["test_b"])  # lists without F2P: not used
    data.flagged.add("sympy__sympy-101")
    return data


@pytest.mark.parametrize(
    ("instance_id", "selected", "lists", "why"),
    [
        ("sympy__sympy-100", True, "utboost", "UTBoost's re-collected lists"),
        ("sympy__sympy-101", True, "classified", "classified by running"),
        ("astropy__astropy-201", True, "classified", "astropy/astropy 5.1 on Python 3.9"),
        ("astropy__astropy-200", False, "", "astropy/astropy 1.3 needs Python 3.6"),
        ("django__django-300", False, "", "no mirror of django/django here"),
    ],
)
def test_each_task_is_chosen_or_left_out_with_its_reason(
    instance_id: str, selected: bool, lists: str, why: str
) -> None:
    choice = choose(_data(), instance_id)

    assert (choice.selected, choice.lists) == (selected, lists)
    assert why in choice.why


def test_the_selection_lists_tasks_left_out_and_counts_per_repository() -> None:
    selection = verified_selection(_data())

    assert [t["instance_id"] for t in selection["tasks"]] == [
        "astropy__astropy-201",
        "sympy__sympy-100",
        "sympy__sympy-101",
    ]
    assert [t["utboost_weak"] for t in selection["tasks"]] == [False, False, True]
    assert {t["instance_id"] for t in selection["left_out"]} == {
        "astropy__astropy-200",
        "django__django-300",
    }
    assert selection["counts"]["selected"] == {"astropy/astropy": 1, "sympy/sympy": 2}


def test_sphinx_3_tasks_hold_docutils_back_and_later_ones_do_not() -> None:
    data = _data()
    data.specs["sphinx-doc/sphinx"] = {"3.5": {"python": "3.9"}, "5.0": {"python": "3.9"}}
    for number, version in ((400, "3.5"), (401, "5.0")):
        instance_id = f"sphinx-doc__sphinx-{number}"
        data.metadata[instance_id] = {"repo": "sphinx-doc/sphinx", "version": version}

    tasks = {t["instance_id"]: t for t in verified_selection(data)["tasks"]}

    assert tasks["sphinx-doc__sphinx-400"]["pins"] == ["docutils<0.18"]
    assert "pinned: docutils<0.18" in tasks["sphinx-doc__sphinx-400"]["why"]
    assert "pins" not in tasks["sphinx-doc__sphinx-401"]


def test_a_reserved_task_is_never_selected_even_if_the_data_holds_it() -> None:
    data = _data()
    reserved = sorted(RESERVED)[0]
    data.metadata[reserved] = {"id": reserved, "repo": "sympy/sympy", "version": "1.1"}

    selection = verified_selection(data)

    ids = [t["instance_id"] for t in selection["tasks"] + selection["left_out"]]
    assert reserved not in ids


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared SWE-bench Verified data is absent")
def test_the_committed_verified_selection_is_what_the_data_gives(tmp_path: Path) -> None:
    out = tmp_path / "selection.json"
    done = subprocess.run(
        [sys.executable, str(REAL / "build_corpus.py"), "select", "--verified", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    made = json.loads(out.read_text())
    assert made == json.loads((REAL / "verified-selection.json").read_text())
    assert made["counts"]["selected"] == {
        "astropy/astropy": 18,
        "mwaskom/seaborn": 2,
        "psf/requests": 8,
        "pylint-dev/pylint": 10,
        "pytest-dev/pytest": 19,
        "sphinx-doc/sphinx": 44,
        "sympy/sympy": 63,
    }
    assert not RESERVED & {t["instance_id"] for t in made["tasks"] + made["left_out"]}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["select"], "select computes the Verified selection only: give --verified"),
        (["derive"], "derive needs --repos DIR"),
        (["derive", "--repos", "/nonexistent", "--selection", "{missing}"], "--selection"),
        (["derive", "--repos", "/nonexistent", "--selection", "{not_json}"], "--selection"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    not_json = tmp_path / "sel.json"
    not_json.write_text('{"tasks": [{"id": 1}]}')
    filled = [a.format(missing=tmp_path / "none.json", not_json=not_json) for a in args]

    done = subprocess.run(
        [sys.executable, str(REAL / "build_corpus.py"), *filled],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
