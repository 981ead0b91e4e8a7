"""The figures of `figures.py` as Markdown tables, ready to be included in
docs/verified-audit.md. Pure: a dict in, text out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hackaudit.cli.report_summary import VERDICTS
from realcorpus.figures import PENDING


def _cell(value: object) -> str:
    return str(value).replace("|", "/").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def _number(value: float | None, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}".replace("%", " %")


def markdown(figs: Mapping[str, Any], commands: Sequence[str]) -> str:
    lines = [f"# Figures of the audit ({figs['tasks']} tasks in the report)", ""]
    lines += _rates(figs)
    lines += _verdicts(figs["verdicts"])
    lines += _kinds(figs["kinds"])
    lines += _agreement(figs["agreement"], commands)
    lines += _cost(figs["cost"])
    lines += _not_audited(figs["not_audited"])
    return "\n".join(lines).rstrip() + "\n"


def _rates(figs: Mapping[str, Any]) -> list[str]:
    rates = figs["hackable"]
    lines = [
        "## Hackable as audited",
        "",
        "k of n assessed tasks (share, 95 % Wilson interval). A task is assessed when its first "
        "verdict says whether it is hackable (not when gold fails, is flaky, or the task could "
        "not be audited), as in the report's headline.",
        "",
    ]
    if figs.get("headline_agrees") is False:
        lines += ["**The report's headline counts a different k of n: check the report.**", ""]
    rows = [("all audited tasks", rates["overall"]["text"])]
    rows += [(name, s["text"]) for name, s in rates["references"].items()]
    lines += _table(["tasks", "hackable"], rows)
    lines += _table(
        ["repository", "hackable"], [(r, s["text"]) for r, s in rates["by_repository"].items()]
    )
    lines += _table(
        ["difficulty", "hackable"], [(d, s["text"]) for d, s in rates["by_difficulty"].items()]
    )
    return lines


def _verdicts(verdicts: Mapping[str, Any]) -> list[str]:
    # the tasks still to audit get a column of their own, while there are any
    shown = [*VERDICTS, *((PENDING,) if verdicts["overall"].get(PENDING) else ())]
    rows = [("all", *(verdicts["overall"][v] for v in shown))]
    rows += [(repo, *(c[v] for v in shown)) for repo, c in verdicts["by_repository"].items()]
    lines = ["## Verdicts as audited", "", *_table(["repository", *shown], rows)]
    mean_d = verdicts["mean_d"]
    if any(value is not None for value in mean_d.values()):
        lines += _table(["verdict", "mean D"], [(v, _number(mean_d[v], 3)) for v in VERDICTS])
    else:
        lines += ["No verdict has a D component (no Pass@1 was given).", ""]
    return lines


def _kinds(kinds: Mapping[str, Any]) -> list[str]:
    rows = [
        (kind, k["tasks"], k["rate"]["text"], _percent(k["share_of_hackable"]))
        for kind, k in kinds["kinds"].items()
    ]
    harness = kinds["harness"]
    return [
        "## What decided each hackable task",
        "",
        "behaviour: an exploit shown wrong by what the code's callers see (differential "
        "probes of public calls or replayed tests, the wider test suite, held-back tests); "
        "source-only trick: exploits incorrect by construction; behaviour of a private helper "
        "only: the differences are all in private helpers the probes call directly, wrong only "
        "if a caller ever gives the helper such an input (weaker evidence: check by hand); "
        "empty patch: the tests pass with no change. Each task counts once, under the first of "
        "these its exploits show.",
        "",
        *_table(["kind", "tasks", "rate (of assessed)", "share of the hackable"], rows),
        f"Harness tampering (reported apart, not counted as hackable): {harness['tasks']} "
        f"task(s), {harness['not_otherwise_hackable']} of them not otherwise hackable.",
        "",
    ]


def _agreement(agree: Mapping[str, Any], commands: Sequence[str]) -> list[str]:
    counts = agree["counts"]
    lines = [
        "## Agreement with UTBoost",
        "",
        f"On the {agree['tasks']} audited, assessed tasks UTBoost's flags cover.",
        "",
        *_table(
            ["", "hackable", "not hackable"],
            [
                ("UTBoost flagged", counts["flagged_and_found"], counts["flagged_and_missed"]),
                ("not flagged", counts["hackable_not_flagged"], counts["neither"]),
            ],
        ),
    ]
    titles = {
        "flagged_and_found": "Flagged by UTBoost, found hackable",
        "flagged_and_missed": "Flagged by UTBoost, not found hackable",
        "hackable_not_flagged": "Hackable, not flagged by UTBoost",
    }
    for name, title in titles.items():
        entries = agree["lists"][name]
        lines += [f"### {title} ({len(entries)})", ""]
        if not entries:
            lines += ["None.", ""]
            continue
        lines += _table(
            ["task", "verdict", "first exploit", "evidence"],
            [
                (e["instance_id"], e["verdict"], e.get("diff") or "–", e.get("evidence", "–"))
                for e in entries
            ],
        )
    lines += ["The weak-test effect on Pass@1 with each set of flags:", "", "```bash"]
    return [*lines, *commands, "```", ""]


def _cost(cost: Mapping[str, Any]) -> list[str]:
    sandbox = cost["sandbox"]
    fields = ", ".join(sandbox["fields_summed"]) or "none"
    lines = [
        "## Cost",
        "",
        f"Sandbox-seconds per task, from the report ({sandbox['tasks']} tasks; fields summed: "
        f"{fields}; the sanity runs are in no report field): mean "
        f"{_number(sandbox['mean_per_task_s'])} s, median {_number(sandbox['median_per_task_s'])}"
        f" s, total {_number(sandbox['total_s'])} s.",
        "",
    ]
    by_kind = sandbox.get("by_kind_s") or {}
    if sandbox["total_s"]:
        shares = ", ".join(
            f"{kind} {_percent(seconds / sandbox['total_s'])}" for kind, seconds in by_kind.items()
        )
        lines += [
            f"By kind of run: {shares} (grade: the candidates graded; probe and suite: the "
            "checks of accepted candidates against gold; coverage: gold's coverage of its "
            "change; reference: the reference pool for V).",
            "",
        ]
    store = cost["store"]
    if store is None:
        return [*lines, "No results store was given: the time figures are left out.", ""]
    to_verdict, wall = store["to_verdict_s"], store["wall"]
    lines += _table(
        ["time to a verdict", "tasks", "median", "p90", "max"],
        [
            (
                "seconds",
                to_verdict["tasks"],
                _number(to_verdict["median"]),
                _number(to_verdict["p90"]),
                _number(to_verdict["max"]),
            )
        ],
    )
    span = f"first start to last verdict: {_number(_hours(wall['first_to_last_s']), 2)} h"
    rule = f"{wall['rule']}; {span}" if len(wall["runs"]) > 1 else wall["rule"]
    lines += [f"Wall time: {_number(_hours(wall['used_s']), 2)} h ({rule}).", ""]
    per_100 = store["per_100_tasks"]
    if per_100 is None:
        return [*lines, "Too little was measured for a projection.", ""]
    lines += [
        f"Per 100 tasks: {per_100['sandbox_hours']:.2f} sandbox-hours, "
        f"{per_100['wall_hours']:.2f} wall-hours; measured slot utilisation "
        f"{store['utilisation']:.2f}.",
        "",
        f"Projection: {store['projection']['model']}.",
        "",
    ]
    hours = store["projection"]["hours"]
    workers = list(next(iter(hours.values())))
    rows = [
        (
            tasks,
            _number(store["projection"]["sandbox_hours"][tasks], 1),
            *(_number(hours[tasks][n], 1) for n in workers),
        )
        for tasks in hours
    ]
    return lines + _table(
        ["tasks", "sandbox-hours", *(f"wall h, {n} worker(s)" for n in workers)], rows
    )


def _hours(seconds: float | None) -> float | None:
    return None if seconds is None else seconds / 3600


def _not_audited(entries: Sequence[Mapping[str, str]]) -> list[str]:
    lines = [f"## Selected but not audited ({len(entries)})", ""]
    if not entries:
        return [*lines, "None.", ""]
    return lines + _table(["task", "why"], [(e["instance_id"], e["why"]) for e in entries])
