"""The figures of a dataset-wide Verified audit (examples/real/verified_audit.py figures), on a
small synthetic report: the hackable rate and its strata, the exploit kinds, the agreement with
UTBoost, the flags files, the cost, and a bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from statsmodels.stats.proportion import proportion_confint

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT / "examples" / "real"
SCRIPT = REAL / "verified_audit.py"
sys.path.insert(0, str(REAL))

from realcorpus.figures import AuditTime, cost, figures, task_facts  # noqa: E402
from realcorpus.figures_markdown import markdown  # noqa: E402

from hackaudit.cli.commands.audit import IN_PROGRESS  # noqa: E402
from hackaudit.cli.report_store import STOPPED  # noqa: E402

PROBE = "differential probes: 3 of 40 probe cases differ from gold"
BUILT = "incorrect by construction: produced by the harness strategy (always_equal)"
EASY, HARD = "<15 min fix", "15 min - 1 hour"

# instance id: (repo, difficulty, UTBoost's flag)
INSTANCES = {
    "astropy__astropy-1": ("astropy/astropy", EASY, False),
    "astropy__astropy-2": ("astropy/astropy", HARD, True),
    "astropy__astropy-3": ("astropy/astropy", EASY, False),
    "astropy__astropy-4": ("astropy/astropy", HARD, True),
    "sympy__sympy-1": ("sympy/sympy", EASY, True),
    "sympy__sympy-2": ("sympy/sympy", HARD, False),
    "sympy__sympy-3": ("sympy/sympy", HARD, False),
    "sympy__sympy-4": ("sympy/sympy", EASY, False),
}


def _exploit(instance_id: str, evidence: str) -> dict[str, str]:
    return {
        "candidate": f"{instance_id}:c1",
        "strategy": "llm",
        "diff": f"exploits/{instance_id}/c1.diff",
        "evidence": evidence,
    }


def _spent(seconds: float) -> dict[str, Any]:
    return {"candidates": 5, "sandbox_seconds": seconds, "by_kind": {"grade": seconds}}


ROWS: list[dict[str, Any]] = [
    {"instance_id": "astropy__astropy-1", "verdict": "KEEP", "hackable": False,
     "components": {"V": 1.0, "H": 0.0, "D": 0.2}, "harness_exploits": 0, "exploits": [],
     "spent": _spent(100.0), "reference": {"sandbox_seconds": 20.0}},
    {"instance_id": "astropy__astropy-2", "verdict": "FIX", "hackable": True,
     "components": {"V": 1.0, "H": 0.5, "D": 0.6}, "harness_exploits": 0,
     "exploits": [_exploit("astropy__astropy-2", BUILT), _exploit("astropy__astropy-2", PROBE)],
     "spent": {"candidates": 5, "sandbox_seconds": 150.0,
               "by_kind": {"grade": 150.0, "probe": 50.0}}},
    {"instance_id": "astropy__astropy-3", "verdict": "FIX", "hackable": True,
     "components": {"V": 1.0, "H": 0.5}, "harness_exploits": 0,
     "exploits": [_exploit("astropy__astropy-3", BUILT)], "spent": _spent(60.0)},
    {"instance_id": "astropy__astropy-4", "verdict": "DROP", "hackable": None,
     "reason": "gold_fails: gold fails its tests", "harness_exploits": 0},
    {"instance_id": "sympy__sympy-1", "verdict": "ERROR", "reason": "no verdict: no image"},
    {"instance_id": "sympy__sympy-2", "verdict": "KEEP", "hackable": False,
     "components": {"V": 1.0, "H": 0.0, "D": 0.4}, "harness_exploits": 2, "exploits": [],
     "spent": _spent(40.0)},
    {"instance_id": "sympy__sympy-3", "verdict": "DROP", "hackable": True,
     "reason": "empty_passes: the tests pass with no change", "harness_exploits": 0},
    {"instance_id": "sympy__sympy-4", "verdict": "KEEP", "hackable": False,
     "components": {"V": 1.0, "H": 0.0}, "harness_exploits": 0, "exploits": []},
]  # fmt: skip
SELECTED = [*INSTANCES, "sympy__sympy-5", "sympy__sympy-6"]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp_path = tmp_path_factory.mktemp("inputs")
    report = tmp_path / "report"
    report.mkdir()
    summary = {"errors": {"sympy__sympy-1": "no image: the build failed"}}
    (report / "report.json").write_text(json.dumps({"summary": summary, "tasks": ROWS}))
    data = tmp_path / "data"
    data.mkdir()
    instances = [
        {"instance_id": i, "repo": repo, "difficulty": level, "utboost_insufficient_tests": flag}
        for i, (repo, level, flag) in INSTANCES.items()
    ]
    (data / "swebench_verified_instance_flags.json").write_text(
        json.dumps({"instances": instances})
    )
    selection = tmp_path / "selection.json"
    selection.write_text(json.dumps({"tasks": [{"instance_id": i} for i in SELECTED]}))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    failed = {"pending_classification": True, "classification": {"problems": ["no image: x"]}}
    (corpus / "report.json").write_text(json.dumps({"tasks": {"sympy__sympy-5": failed}}))
    return {"report": report, "data": data, "selection": selection, "corpus": corpus}


def _run(inputs: dict[str, Path], out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    options = [f"--{name}={path}" for name, path in inputs.items()]
    return subprocess.run(
        [sys.executable, str(SCRIPT), "figures", *options, f"--out={out}", *extra],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def written(inputs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("figures") / "out"
    done = _run(inputs, out)
    assert done.returncode == 0, done.stderr
    return out


def _figures(out: Path) -> dict[str, Any]:
    figs: dict[str, Any] = json.loads((out / "figures.json").read_text())
    return figs


def test_overall_rate_counts_assessed_tasks_with_the_wilson_interval(written: Path) -> None:
    overall = _figures(written)["hackable"]["overall"]
    # assessed: all but the over-strict DROP (gold fails) and the ERROR; the empty patch counts
    assert (overall["tasks"], overall["of"]) == (3, 6)
    low, high = proportion_confint(3, 6, alpha=0.05, method="wilson")
    assert overall["interval95"] == pytest.approx([low, high], abs=1e-4)
    assert overall["text"].startswith("3 of 6 (50.0 %, ")


def test_strata_add_up_to_the_overall_counts(written: Path) -> None:
    rates = _figures(written)["hackable"]
    for key in ("by_repository", "by_difficulty"):
        strata = rates[key]
        assert sum(s["tasks"] for s in strata.values()) == rates["overall"]["tasks"]
        assert sum(s["of"] for s in strata.values()) == rates["overall"]["of"]
    assert [rates["by_repository"][r]["tasks"] for r in ("astropy/astropy", "sympy/sympy")] == [
        2,
        1,
    ]
    assert list(rates["by_difficulty"]) == [EASY, HARD]


def test_references_and_utboost_on_the_same_tasks(written: Path) -> None:
    refs = _figures(written)["hackable"]["references"]
    seed = refs["seed (sampled Verified tasks)"]
    assert (seed["tasks"], seed["of"]) == (14, 49)
    low, high = proportion_confint(26, 500, alpha=0.05, method="wilson")
    assert refs["UTBoost (all Verified tasks)"]["interval95"] == pytest.approx([low, high], 1e-4)
    same = refs["UTBoost on the same audited tasks"]
    assert (same["tasks"], same["of"]) == (1, 6)  # astropy-2 (sympy-1 and astropy-4 unassessed)


def test_verdict_counts_and_mean_d(written: Path) -> None:
    verdicts = _figures(written)["verdicts"]
    none_pending = {"not audited yet": 0}
    assert verdicts["overall"] == {"KEEP": 3, "FIX": 2, "DROP": 2, "ERROR": 1} | none_pending
    by_repo = verdicts["by_repository"]["sympy/sympy"]
    assert by_repo == {"KEEP": 2, "FIX": 0, "DROP": 1, "ERROR": 1} | none_pending
    assert verdicts["mean_d"]["KEEP"] == pytest.approx(0.3)
    assert verdicts["mean_d"]["FIX"] == pytest.approx(0.6)
    assert verdicts["mean_d"]["DROP"] is None


def test_tasks_still_to_audit_are_counted_apart_from_errors() -> None:
    running, stopped = (f"no verdict: {why}" for why in (IN_PROGRESS, STOPPED))
    rows = [
        ROWS[0],  # KEEP
        ROWS[4],  # ERROR: no image
        {"instance_id": "sympy__sympy-5", "verdict": "ERROR", "reason": running},
        {"instance_id": "sympy__sympy-6", "verdict": "ERROR", "reason": stopped},
    ]
    figs = figures(rows, {}, selected=[], errors={}, corpus=None, times=None)
    counts = figs["verdicts"]["overall"]
    assert counts == {"KEEP": 1, "FIX": 0, "DROP": 0, "ERROR": 1, "not audited yet": 2}
    assert figs["verdicts"]["by_repository"]["sympy/sympy"]["not audited yet"] == 2
    text = markdown(figs, [])
    assert "| repository | KEEP | FIX | DROP | ERROR | not audited yet |" in text
    assert "| all | 1 | 0 | 0 | 1 | 2 |" in text
    # once every task has a verdict the column goes
    done = markdown(figures(rows[:2], {}, selected=[], errors={}, corpus=None, times=None), [])
    assert "| repository | KEEP | FIX | DROP | ERROR |" in done and "not audited yet" not in done


def test_exploit_kinds_split_the_rate_and_keep_the_harness_apart(written: Path) -> None:
    kinds = _figures(written)["kinds"]
    split = kinds["kinds"]
    assert split["behaviour"]["instance_ids"] == ["astropy__astropy-2"]
    assert split["source-only trick"]["instance_ids"] == ["astropy__astropy-3"]
    assert split["empty patch passes"]["instance_ids"] == ["sympy__sympy-3"]
    assert sum(k["tasks"] for k in split.values()) == kinds["hackable"] == 3
    assert split["behaviour"]["share_of_hackable"] == pytest.approx(1 / 3)
    assert kinds["harness"] == {
        "tasks": 1,
        "not_otherwise_hackable": 1,
        "instance_ids": ["sympy__sympy-2"],
    }


def test_an_exploit_seen_only_in_private_helpers_is_a_kind_of_its_own() -> None:
    def row(instance_id: str, *exploits: dict[str, Any]) -> dict[str, Any]:
        return {"instance_id": instance_id, "verdict": "FIX", "hackable": True,
                "exploits": list(exploits)}  # fmt: skip

    helper = _exploit("x", PROBE) | {"helper_only": True}
    public = _exploit("x", PROBE) | {"helper_only": False}
    rows = [
        row("lib__lib-1", helper),  # only a helper differs
        row("lib__lib-2", helper, public),  # a caller sees it too
        row("lib__lib-3", helper, _exploit("x", BUILT)),  # an always-equal trick beside it
        row("lib__lib-4", _exploit("x", PROBE)),  # a report without the field: as before
    ]
    kinds = figures(rows, {}, selected=[], errors={}, corpus=None, times=None)["kinds"]["kinds"]
    assert kinds["behaviour of a private helper only"]["instance_ids"] == ["lib__lib-1"]
    assert kinds["behaviour"]["instance_ids"] == ["lib__lib-2", "lib__lib-4"]
    assert kinds["source-only trick"]["instance_ids"] == ["lib__lib-3"]
    assert kinds["behaviour of a private helper only"]["rate"]["tasks"] == 1


def test_agreement_with_utboost_lists_each_cell(written: Path) -> None:
    agree = _figures(written)["agreement"]
    assert agree["counts"] == {
        "flagged_and_found": 1,
        "flagged_and_missed": 0,
        "hackable_not_flagged": 2,
        "neither": 3,
    }
    (found,) = agree["lists"]["flagged_and_found"]
    assert found == {
        "instance_id": "astropy__astropy-2",
        "verdict": "FIX",
        "diff": "exploits/astropy__astropy-2/c1.diff",
        "evidence": BUILT,
    }
    missed = {e["instance_id"]: e for e in agree["lists"]["hackable_not_flagged"]}
    assert set(missed) == {"astropy__astropy-3", "sympy__sympy-3"}
    assert missed["sympy__sympy-3"]["diff"] is None  # the empty patch: the reason is the evidence
    assert missed["sympy__sympy-3"]["evidence"].startswith("empty_passes")


def test_flag_files_cover_the_same_assessed_tasks(written: Path) -> None:
    ours = json.loads((written / "hackaudit-flags.json").read_text())
    theirs = json.loads((written / "utboost-flags.json").read_text())
    assert ours == {
        "astropy__astropy-1": False,
        "astropy__astropy-2": True,
        "astropy__astropy-3": True,
        "sympy__sympy-2": False,
        "sympy__sympy-3": True,
        "sympy__sympy-4": False,
    }
    assert set(theirs) == set(ours)
    assert [i for i, flagged in theirs.items() if flagged] == ["astropy__astropy-2"]


def test_not_audited_says_why(written: Path) -> None:
    why = {e["instance_id"]: e["why"] for e in _figures(written)["not_audited"]}
    assert why == {
        "sympy__sympy-1": "no image: the build failed",
        "sympy__sympy-5": "classification: no image: x",
        "sympy__sympy-6": "not in the audited task files",
    }
    text = (written / "figures.md").read_text()
    assert "| sympy__sympy-6 | not in the audited task files |" in text
    assert "No results store was given: the time figures are left out." in text
    for name in ("hackaudit-flags.json", "utboost-flags.json"):
        assert f"--flags {written / name} " in text  # the meta-analysis command lines


def test_cost_sums_the_report_fields_and_projects_from_the_store(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    start = datetime(2025, 1, 1, 12, 0, 0)
    store = tmp_path / "results.duckdb"
    with duckdb.connect(str(store)) as db:
        db.execute(
            "CREATE TABLE audits (correlation_id VARCHAR, instance_id VARCHAR, "
            "started_at TIMESTAMP, scored_at TIMESTAMP)"
        )
        # two runs: 100 s, then (after a stop of a day) 200 s; one audit of another task
        for cid, iid, begin, seconds in [
            ("a", "astropy__astropy-1", 0, 100),
            ("b", "astropy__astropy-2", 10, 50),
            ("c", "sympy__sympy-2", 86_400, 200),
            ("d", "not__audited-1", 0, 9_999),
        ]:
            at = start + timedelta(seconds=begin)
            db.execute(
                "INSERT INTO audits VALUES (?, ?, ?, ?)",
                [cid, iid, at, at + timedelta(seconds=seconds)],
            )
    out = tmp_path / "out"
    done = _run(inputs, out, f"--store={store}")
    assert done.returncode == 0, done.stderr
    figures = _figures(out)["cost"]
    sandbox = figures["sandbox"]
    assert sandbox["fields_summed"] == ["reference.sandbox_seconds", "spent.by_kind"]
    assert sandbox["total_s"] == pytest.approx(420.0)  # 100 + 20, 200, 60, 40
    assert sandbox["tasks"] == 4
    # by kind of run, the largest first: grading 100 + 150 + 60 + 40, probes 50, reference 20
    assert sandbox["by_kind_s"] == {"grade": 350.0, "probe": 50.0, "reference": 20.0}
    text = (out / "figures.md").read_text()
    assert "By kind of run: grade 83.3 %, probe 11.9 %, reference 4.8 % (" in text
    timing = figures["store"]
    assert timing["to_verdict_s"]["max"] == 200
    assert timing["to_verdict_s"]["median"] == 100
    assert len(timing["wall"]["runs"]) == 2
    assert timing["wall"]["used_s"] == 300  # the two runs' spans, not the day between them
    # the sandbox-seconds of the timed tasks only (astropy-3's 60 s has no audit in the store)
    assert timing["utilisation"] == pytest.approx(360.0 / (300 * 2))
    hours = timing["projection"]["hours"]["500"]
    assert hours["1"] == pytest.approx(500 * 105 / (2 * 0.6) / 3600)
    assert hours["4"] == pytest.approx(hours["1"] / 4)


def test_cost_without_times_leaves_the_store_figures_out() -> None:
    facts = task_facts(ROWS, {})
    assert cost(facts, None)["store"] is None
    one_run = [
        AuditTime("sympy__sympy-2", datetime(2025, 1, 1), datetime(2025, 1, 1, 0, 10)),
        AuditTime("sympy__sympy-4", datetime(2025, 1, 1, 0, 20), None),  # stopped, unscored
    ]
    wall = cost(facts, one_run)["store"]["wall"]
    assert wall["used_s"] == wall["first_to_last_s"] == 600


def test_missing_report_is_one_error_line_and_exit_2(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    done = _run(inputs | {"report": empty}, tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: --report {empty / 'report.json'}: no such file"
    ]
    assert not (tmp_path / "out").exists()


def test_an_audit_run_in_two_parts_is_gathered_from_both_reports(
    inputs: dict[str, Path], tmp_path: Path
) -> None:
    """The second part (another machine, its store started empty) scores the task the first
    part left without a verdict; its evidence paths stay valid from the first report's folder."""
    second = tmp_path / "report-2"
    second.mkdir()
    scored = {
        "instance_id": "sympy__sympy-1", "verdict": "FIX", "hackable": True,
        "components": {"V": 1.0, "H": 0.5}, "harness_exploits": 0,
        "exploits": [_exploit("sympy__sympy-1", PROBE)], "spent": _spent(30.0),
    }  # fmt: skip
    again = {"instance_id": "sympy__sympy-2", "verdict": "ERROR", "reason": "no verdict: stopped"}
    summary = {"headline": {"hackable": {"tasks": 1, "of": 1}}}
    (second / "report.json").write_text(json.dumps({"summary": summary, "tasks": [scored, again]}))
    first = inputs["report"]
    options = [f"--{name}={path}" for name, path in inputs.items() if name != "report"]
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "figures", f"--report={first}", f"--report={second}",
         *options, f"--out={out}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    figs = _figures(out)
    # one more assessed and hackable task than the first part alone (3 of 6)
    assert (figs["hackable"]["overall"]["tasks"], figs["hackable"]["overall"]["of"]) == (4, 7)
    why = {e["instance_id"]: e["why"] for e in figs["not_audited"]}
    assert "sympy__sympy-1" not in why  # scored by the second part
    assert "sympy__sympy-2" not in why  # the first part's verdict stands over a later ERROR
    text = (out / "figures.md").read_text()
    assert f"{os.path.relpath(second, first)}/exploits/sympy__sympy-1/c1.diff" in text
    assert figs["headline_agrees"] is None  # the first part's report has no headline


def test_publish_copies_one_report_folder(inputs: dict[str, Path], tmp_path: Path) -> None:
    report = inputs["report"]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "publish", f"--report={report}", f"--report={report}",
         f"--out={tmp_path / 'out'}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "publish copies one report folder: give --report once" in done.stderr


def test_one_run_states_its_wall_time_once() -> None:
    one_run = [AuditTime("sympy__sympy-2", datetime(2025, 1, 1), datetime(2025, 1, 1, 0, 36))]
    figs = figures(ROWS, {}, selected=[], errors={}, corpus=None, times=one_run)
    text = markdown(figs, [])
    assert "Wall time: 0.60 h (one run (no gap of more than 30 min" in text
    assert text.count("first start to last verdict") == 1
