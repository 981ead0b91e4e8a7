"""The meta-analysis command on small synthetic inputs, through a throwaway typer app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import typer
from typer.testing import CliRunner

from hackaudit.analysis.cli import register

if TYPE_CHECKING:
    from tests.unit.analysis.conftest import TinyInputs


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.callback()
    def root() -> None:
        """Test root so the command keeps its name."""

    return app


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(_app(), ["meta-analysis", *args])
    return result.exit_code, result.output


def _base(tiny: TinyInputs, out: Path) -> list[str]:
    return [
        "--resolved",
        str(tiny.matrix_csv),
        "--flags",
        str(tiny.flags_json),
        "--strata",
        str(tiny.strata_csv),
        "--permutations",
        "30",
        "--seed",
        "5",
        "--out",
        str(out),
    ]


def test_command_prints_the_headline_and_writes_all_artifacts(
    tiny: TinyInputs, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, output = _invoke(_base(tiny, out))
    assert code == 0, output
    for text in ("random effects (DL)", "I²", "sign test", "stratified permutation p", "By era"):
        assert text in output
    assert "rare" in output and "skipped: 1 flagged task(s), fewer than 2" in output
    assert sorted(p.name for p in out.iterdir()) == [
        "forest.png",
        "forest.svg",
        "report.html",
        "results.json",
    ]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["pooled"]["k"] == 6
    assert results["permutation"]["permutations"] == 30
    assert [s["label"] for s in results["strata"] if s["used"]] == ["easy", "hard"]


def test_same_seed_same_permutation_p(tiny: TinyInputs, tmp_path: Path) -> None:
    _invoke(_base(tiny, tmp_path / "a"))
    _invoke(_base(tiny, tmp_path / "b"))
    first, second = (
        json.loads((tmp_path / d / "results.json").read_text(encoding="utf-8"))["permutation"]
        for d in ("a", "b")
    )
    assert first == second


@pytest.mark.parametrize("layout", ["submissions_json", "mapping_json", "experiments"])
def test_every_resolved_layout_runs(tiny: TinyInputs, tmp_path: Path, layout: str) -> None:
    args = _base(tiny, tmp_path / "out")
    args[1] = str(getattr(tiny, layout))
    code, output = _invoke(args)
    assert code == 0, output


def test_reml_and_records_flags(tiny: TinyInputs, tmp_path: Path) -> None:
    args = [*_base(tiny, tmp_path / "out"), "--method", "reml", "--show-submissions"]
    args[3] = str(tiny.records_json)
    args[5] = str(tiny.records_json)
    code, output = _invoke(args)
    assert code == 0, output
    assert "random effects (REML)" in output
    assert "Per submission" in output


def test_min_per_arm_one_lets_the_rare_stratum_contribute(tiny: TinyInputs, tmp_path: Path) -> None:
    code, _ = _invoke([*_base(tiny, tmp_path / "out"), "--min-per-arm", "1"])
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert code == 0
    assert [s["label"] for s in results["strata"] if s["used"]] == ["easy", "hard", "rare"]


def test_bad_flags_file_exits_with_an_error_naming_it(tiny: TinyInputs, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"easy-0": "sometimes"}', encoding="utf-8")
    args = _base(tiny, tmp_path / "out")
    args[3] = str(bad)
    code, output = _invoke(args)
    assert code == 2
    assert str(bad) in output and "easy-0" in output


def test_missing_shared_data_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HACKAUDIT_SHARED_DATA", str(tmp_path / "nowhere"))
    code, output = _invoke(["--out", str(tmp_path / "out")])
    assert code == 2
    assert "--resolved not given" in output and "HACKAUDIT_SHARED_DATA" in output


@pytest.mark.parametrize(
    "bad", [["--permutations", "0"], ["--method", "ml"], ["--min-per-arm", "0"]]
)
def test_option_bounds(tiny: TinyInputs, tmp_path: Path, bad: list[str]) -> None:
    code, _ = _invoke([*_base(tiny, tmp_path / "out"), *bad])
    assert code == 2
