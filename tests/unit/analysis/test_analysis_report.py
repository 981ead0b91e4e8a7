"""The HTML report, the JSON results and the forest plot render from one result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from hackaudit.analysis.inputs import load_resolved
from hackaudit.analysis.labels import load_flags, load_strata
from hackaudit.analysis.plot import save_forest
from hackaudit.analysis.report import render_html
from hackaudit.analysis.results import MetaAnalysis, Settings, Sources, to_json
from hackaudit.analysis.service import run_meta_analysis
from hackaudit.analysis.submissions import Submission, SubmissionSet

if TYPE_CHECKING:
    from tests.unit.analysis.conftest import TinyInputs


def _result(tiny: TinyInputs, rename: str | None = None) -> MetaAnalysis:
    loaded = load_resolved(tiny.matrix_csv)
    if rename is not None:
        first = loaded.submissions[0]
        renamed = Submission(first.submission_id, first.resolved, name=rename, date=first.date)
        loaded = SubmissionSet(
            loaded.source, (renamed, *loaded.submissions[1:]), loaded.excluded, loaded.task_ids
        )
    return run_meta_analysis(
        loaded,
        load_flags(tiny.flags_json),
        load_strata(tiny.strata_csv),
        Settings(permutations=10, seed=1),
        Sources("r", "f", "s"),
    )


def test_html_escapes_names_from_input_files(tiny: TinyInputs) -> None:
    html = render_html(_result(tiny, rename="<script>alert(1)</script>"), "<svg></svg>")
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "<svg></svg>" in html


def test_json_holds_the_headline_numbers(tiny: TinyInputs) -> None:
    result = _result(tiny)
    data = json.loads(to_json(result))
    assert data["pooled"]["random"]["value"] == result.pooled.random.value
    assert data["pooled"]["i2"] == result.pooled.i2
    assert data["sign"]["p_one_sided"] == result.sign.p_one_sided
    assert data["permutation"]["p_value"] == result.permutation.p_value
    assert data["settings"]["method"] == "dl"
    assert data["studies"][0]["date"] == "2024-01-01"


def test_forest_plot_files_are_written(tiny: TinyInputs, tmp_path: Path) -> None:
    png, svg = save_forest(_result(tiny), tmp_path)
    assert png.read_bytes().startswith(b"\x89PNG")
    assert "<svg" in svg.read_text(encoding="utf-8")
