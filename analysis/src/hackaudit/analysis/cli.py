"""The ``meta-analysis`` command: read inputs, run the analysis, print tables, write artifacts.

``register(app)`` mounts the command on any typer application (the main ``hackaudit`` CLI does
so). Without ``--resolved``, ``--flags`` or ``--strata`` the shared SWE-bench Verified data is used
(see ``shared_data``): the leaderboard submissions whose resolved ids match their published count,
UTBoost's weak-test flags and the human difficulty labels.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from hackaudit.analysis.errors import AnalysisError
from hackaudit.analysis.inputs import load_resolved
from hackaudit.analysis.labels import (
    DEFAULT_FLAG_FIELD,
    DEFAULT_STRATUM_FIELD,
    load_flags,
    load_strata,
)
from hackaudit.analysis.options import MAX_PERMUTATIONS, TauMethod
from hackaudit.analysis.shared_data import (
    ENV_VAR,
    INSTANCE_FLAGS_FILE,
    SUBMISSIONS_FILE,
    default_file,
)

if TYPE_CHECKING:
    from hackaudit.analysis.results import MetaAnalysis

DEFAULT_OUT = Path(".hackaudit") / "meta-analysis"
PIPE_WIDTH = 120
"""Console width when the output is not a terminal (pipes, files, tests)."""


def register(app: typer.Typer) -> None:
    """Add the ``meta-analysis`` command to ``app``."""
    app.command("meta-analysis")(meta_analysis)


def meta_analysis(
    resolved: Annotated[
        Path | None,
        typer.Option(
            help="Resolved lists: a 0/1 matrix CSV, a JSON file or an experiments folder "
            f"(default: {SUBMISSIONS_FILE} from the shared data)."
        ),
    ] = None,
    flags: Annotated[
        Path | None,
        typer.Option(
            help="Task flags: JSON/CSV mapping instance_id -> bool, or hackaudit's results "
            "store (.hackaudit/results.duckdb: hackable tasks are flagged) "
            f"(default: UTBoost flags from {INSTANCE_FLAGS_FILE})."
        ),
    ] = None,
    flag_field: Annotated[
        str, typer.Option(help="Flag column/field in records JSON or CSV.")
    ] = DEFAULT_FLAG_FIELD,
    strata: Annotated[
        Path | None,
        typer.Option(
            help="Task strata: JSON/CSV mapping instance_id -> label "
            f"(default: human difficulty from {INSTANCE_FLAGS_FILE})."
        ),
    ] = None,
    strata_field: Annotated[
        str, typer.Option(help="Stratum column/field in records JSON or CSV.")
    ] = DEFAULT_STRATUM_FIELD,
    split: Annotated[
        str, typer.Option(help="Split folder under evaluation/ for an experiments folder.")
    ] = "verified",
    exclude: Annotated[
        list[str] | None, typer.Option(help="Submission id to leave out (repeatable).")
    ] = None,
    method: Annotated[
        TauMethod, typer.Option(case_sensitive=False, help="τ² estimator.")
    ] = TauMethod.DL,
    permutations: Annotated[
        int,
        typer.Option(min=1, max=MAX_PERMUTATIONS, help="Flag permutations for the p-value."),
    ] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the permutations.")] = 0,
    min_per_arm: Annotated[
        int,
        typer.Option(min=1, help="Flagged and robust tasks a stratum needs to contribute."),
    ] = 2,
    out: Annotated[
        Path, typer.Option(help="Folder for forest.png, forest.svg, report.html, results.json.")
    ] = DEFAULT_OUT,
    show_submissions: Annotated[
        bool, typer.Option(help="Also print the per-submission table.")
    ] = False,
) -> None:
    """Meta-analysis of the weak-test effect on resolved rates across submissions."""
    # The statistics stack loads here, not at import, so the rest of the CLI starts fast.
    from hackaudit.analysis.console import print_report
    from hackaudit.analysis.results import Settings, Sources
    from hackaudit.analysis.service import run_meta_analysis

    console = Console(
        width=None if sys.stdout.isatty() else PIPE_WIDTH, markup=False, highlight=False
    )
    try:
        resolved_path = resolved or _shared_default(SUBMISSIONS_FILE, "--resolved")
        flags_path = flags or _shared_default(INSTANCE_FLAGS_FILE, "--flags")
        strata_path = strata or _shared_default(INSTANCE_FLAGS_FILE, "--strata")
        result = run_meta_analysis(
            load_resolved(resolved_path, split, exclude or ()),
            load_flags(flags_path, flag_field),
            load_strata(strata_path, strata_field),
            Settings(method, permutations, seed, min_per_arm),
            Sources(
                str(resolved_path),
                f"{flags_path} [{flag_field}]",
                f"{strata_path} [{strata_field}]",
            ),
        )
    except AnalysisError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from error
    print_report(console, result, show_studies=show_submissions)
    for path in write_artifacts(result, out):
        console.print(f"wrote {path}")


def _shared_default(name: str, option: str) -> Path:
    found = default_file(Path.cwd(), os.environ, name)
    if found is None:
        raise AnalysisError(
            f"{option} not given and the shared data ({name}) was not found; "
            f"set {ENV_VAR} or pass {option}"
        )
    return found


def write_artifacts(result: MetaAnalysis, out: Path) -> list[Path]:
    """Write the forest plot (PNG, SVG), the HTML report and results.json into ``out``."""
    from hackaudit.analysis.plot import save_forest
    from hackaudit.analysis.report import render_html
    from hackaudit.analysis.results import to_json

    out.mkdir(parents=True, exist_ok=True)
    png, svg = save_forest(result, out)
    html = out / "report.html"
    html.write_text(render_html(result, svg.read_text(encoding="utf-8")), encoding="utf-8")
    results = out / "results.json"
    results.write_text(to_json(result), encoding="utf-8")
    return [png, svg, html, results]
