"""The HTML report a curator opens: escaped, with the dataset figures right, every score component
beside what it was computed from, and the over-strict evidence; the same files from the store's
latest audits as from an audit's own results."""

from __future__ import annotations

import html
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hackaudit.cli.report import write_report
from hackaudit.cli.report_figures import Z_95, eqs_bins, histogram_svg, wilson_interval
from hackaudit.cli.report_html import render_html
from hackaudit.cli.report_store import latest_per_task
from tests.reportdata import HOSTILE, RENAMED, sample_states


def _page() -> str:
    return render_html(latest_per_task(sample_states()), missing_stages=[], problems=[HOSTILE])


def _article(page: str, instance_id: str) -> str:
    found = re.search(
        rf'<article id="task-\d+"><h3>{re.escape(instance_id)} .*?</article>', page, re.S
    )
    assert found, instance_id
    return found.group(0)


def test_text_from_tasks_patches_and_evidence_is_escaped() -> None:
    page = _page()
    assert "<script>" not in page
    assert "<img" not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page  # the reason
    assert "+# &lt;script&gt;" in page  # a line of an exploit's diff
    assert "probe printed &lt;script&gt;" in page  # evidence
    assert "<li>&lt;script&gt;" in page  # an input problem


def score_equation_roots(x: int, n: int, z: float) -> tuple[float, float]:
    """The Wilson bounds as the roots p of the score test's equation n(x/n − p)² = z²·p(1 − p),
    i.e. (n + z²)p² − (2x + z²)p + x²/n = 0, by the quadratic formula."""
    a, b, c = n + z * z, -(2 * x + z * z), x * x / n
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


@pytest.mark.parametrize(
    ("successes", "trials"), [(0, 10), (5, 10), (10, 10), (21, 28), (1, 1), (3, 1000)]
)
@pytest.mark.parametrize("z", [Z_95, 1.0, 2.5758293035489004])
def test_wilson_interval_solves_the_score_equation(successes: int, trials: int, z: float) -> None:
    expected = score_equation_roots(successes, trials, z)
    assert wilson_interval(successes, trials, z) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [  # Newcombe (1998), Statistics in Medicine 17:857, table II, method 3 (score, no correction)
        (81, 263, (0.2553, 0.3662)),
        (15, 148, (0.0624, 0.1605)),
        (0, 20, (0.0, 0.1611)),
        (1, 29, (0.0061, 0.1718)),
    ],
)
def test_wilson_interval_as_published(
    successes: int, trials: int, expected: tuple[float, float]
) -> None:
    assert wilson_interval(successes, trials) == pytest.approx(expected, abs=5e-5)


def test_wilson_interval_without_trials_and_impossible_counts() -> None:
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="3 successes out of 2"):
        wilson_interval(3, 2)


def test_the_hackable_share_is_shown_with_its_interval() -> None:
    # hackable flags of the latest audits: calc-2 and calc-6 yes, calc-1 and calc-3 no
    share = re.search(r'<div class="card" id="hackable-share">(.*?)</div></div>', _page(), re.S)
    assert share
    assert "2 of 4 tasks" in share.group(1)
    low, high = wilson_interval(2, 4) or (0.0, 0.0)
    assert f"{low:.0%}–{high:.0%}" in share.group(1)


def test_histogram_bins() -> None:
    values = [0.0, 0.05, 0.1, 0.69, 0.7, 0.7, 0.999, 1.0, -0.2, 1.3]
    assert eqs_bins(values) == [3, 1, 0, 0, 0, 0, 1, 2, 0, 3]
    assert eqs_bins([], bins=4) == [0, 0, 0, 0]
    svg = histogram_svg(values)
    counts = [int(n) for n in re.findall(r'data-count="(\d+)"', svg)]
    assert counts == [3, 1, 0, 0, 0, 0, 1, 2, 0, 3]
    heights = [float(h) for h in re.findall(r'height="([\d.]+)" class="bar"', svg)]
    assert heights == pytest.approx([180.0, 60.0, 0, 0, 0, 0, 60.0, 120.0, 0, 180.0])


def test_verdict_counts_and_figures_cover_the_latest_audits() -> None:
    page = _page()
    counts = dict(re.findall(r'data-verdict="(\w+)">.*?<div class="big">(\d+)</div>', page))
    # the unfinished audit is ERROR, as in every other file of the report
    assert counts == {"KEEP": "1", "FIX": "1", "DROP": "2", "ERROR": "2"}
    assert page.count('class="dot"') == 4  # tasks with both V and H
    assert "an older audit" not in page  # calc-1's earlier audit is not reported


def test_each_component_is_shown_with_what_it_was_computed_from() -> None:
    page = _page()
    strict = _article(page, "calc__calc-3")
    v = re.search(r'data-component="V">(.*?)</tr>', strict, re.S)
    assert v
    assert "TPR 0.50, TNR 1.00" in v.group(1)
    assert "C+ 2 counted (0 left out)" in v.group(1)
    assert "C− 2 counted (1 left out)" in v.group(1)
    assert "rejects 1 correct variant" in v.group(1)
    h = re.search(r'data-component="H">(.*?)</tr>', strict, re.S)
    assert h and "0 exploit(s) / 1 confirmed-incorrect candidates evaluated" in h.group(1)
    f1 = re.search(r'data-component="F1">(.*?)</tr>', strict, re.S)
    assert f1 and "left out: no judge" in f1.group(1)
    keep = _article(page, "calc__calc-1")
    d = re.search(r'data-component="D">(.*?)</tr>', keep, re.S)
    assert d and "0.640" in d.group(1) and "resolved matrix leaderboard.csv" in d.group(1)
    assert "Policy:</b> EQS &gt; 0.7 KEEP" in keep
    fix = _article(page, "calc__calc-2")
    assert "1 exploit(s) / 2 confirmed-incorrect candidates evaluated" in fix  # harness not counted


def test_over_strict_evidence_is_shown_and_written(tmp_path: Path) -> None:
    items = latest_per_task(sample_states())
    write_report(tmp_path, items, missing_stages=[])
    page = (tmp_path / "report.html").read_text()
    section = re.search(r'<details class="over-strict" open>(.*?)</details></details>', page, re.S)
    assert section, "no over-strict section"
    assert "rename-locals" in section.group(1)
    assert "asserts the source text" in section.group(1)
    assert '<span class="add">+    return max(low, min(x, high))</span>' in section.group(1)
    rows = {
        r["instance_id"]: r for r in json.loads((tmp_path / "report.json").read_text())["tasks"]
    }
    (listed,) = rows["calc__calc-3"]["over_strict"]
    assert listed["kind"] == "rename-locals"
    assert (tmp_path / listed["diff"]).read_text() == RENAMED
    assert listed["diff"] in section.group(1)
    assert rows["calc__calc-3"]["discrimination"]["rejected_correct"] == [listed["candidate"]]
    assert rows["calc__calc-2"]["over_strict"] == []
    assert rows["calc__calc-1"]["reference"]["members"] == {
        "correct/accepted": 2, "incorrect/left_out": 1, "incorrect/rejected": 2,
    }  # fmt: skip
    assert "over-strict: rejects 1 correct variant" in (tmp_path / "report.md").read_text()


def test_the_pools_cost_is_reported_beside_its_budget_and_the_attacks(tmp_path: Path) -> None:
    write_report(tmp_path, latest_per_task(sample_states()), missing_stages=[])
    rows = {
        r["instance_id"]: r for r in json.loads((tmp_path / "report.json").read_text())["tasks"]
    }
    pool = rows["calc__calc-1"]["reference"]
    assert pool["sandbox_seconds"] == 41.0
    assert pool["budget_seconds"] == 60.0 and pool["attack_sandbox_seconds"] == 60.0
    said = "reference pool 41 sandbox-s of its budget of 60 (the attack's own: 60)"
    assert said in (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    summary = re.search(r'<details class="reference-pool"><summary>(.*?)</summary>', page, re.S)
    assert summary and said in html.unescape(summary.group(1))


def test_exploits_link_their_diff_files(tmp_path: Path) -> None:
    write_report(tmp_path, latest_per_task(sample_states()), missing_stages=[])
    page = (tmp_path / "report.html").read_text()
    links = re.findall(r'<a href="((?:exploits|unconfirmed|over_strict)/[^"]+)">', page)
    assert len(links) == 5  # calc-2: exploit, harness, unconfirmed; calc-3: over-strict; calc-6
    for link in links:
        assert (tmp_path / link).is_file(), link


def test_the_latest_scored_audit_of_each_task_is_reported() -> None:
    items = {i.instance_id: i for i in latest_per_task(sample_states())}
    assert list(items) == sorted(items)
    assert items["calc__calc-1"].scored is not None
    assert items["calc__calc-1"].scored.correlation_id == "a1b2c3d4/calc__calc-1"
    assert items["calc__calc-5"].scored is None  # not finished: listed, without a verdict
    older_later = [*sample_states()[1:2], sample_states()[0]]  # the older audit saved last
    (only,) = latest_per_task(older_later)
    assert only.scored is not None and only.scored.reason == "an older audit"


def test_f1_is_shown_with_the_judge_agreement_it_came_from() -> None:
    from hackaudit.cli.report import TaskReport
    from hackaudit.shared.contracts import JudgeAgreement, TaskScored, Verdict

    def scored(instance_id: str, judge: JudgeAgreement, f1: float | None) -> TaskReport:
        components = {"V": 1.0, "H": 0.0} | ({"F1": f1} if f1 is not None else {})
        s = TaskScored(
            correlation_id=f"a/{instance_id}", instance_id=instance_id, verdict=Verdict.KEEP,
            eqs=0.9, components=components, judge=judge,
        )  # fmt: skip
        return TaskReport(instance_id, s, None)

    agreed = JudgeAgreement(
        f1=0.8, true_positive=2, false_positive=1, false_negative=0, true_negative=3, abstained=1
    )
    spent = JudgeAgreement(left_out="budget spent")
    page = render_html(
        [scored("a__a-1", agreed, 0.8), scored("b__b-1", spent, None)],
        missing_stages=[],
        problems=[],
    )
    f1 = re.findall(r'data-component="F1">(.*?)</tr>', page, re.S)
    assert "0.800" in f1[0] and "6 candidate(s): TP 2, FP 1, FN 0, TN 3; 1 abstained" in f1[0]
    assert "left out: budget spent" in f1[1]


def test_every_judge_sample_rationale_is_in_the_report(tmp_path: Path) -> None:
    from hackaudit.cli.report import TaskReport
    from hackaudit.shared.contracts import (
        AttackCompleted,
        JudgeAgreement,
        JudgeLabel,
        JudgeSample,
        JudgeUsage,
        JudgeVerdict,
        TaskScored,
        Verdict,
    )

    sample = JudgeSample(
        label=JudgeLabel.INCORRECT,
        premises=("the issue asks for <copies>",),
        trace="yields the shared dict",
        conclusion="wrong",
    )
    verdict = JudgeVerdict(
        candidate_id="c__c-1:abc",
        samples=(JudgeLabel.INCORRECT,) * 3,
        label=JudgeLabel.INCORRECT,
        details=(sample,) * 3,
    )
    judge = JudgeAgreement(
        f1=1.0, true_negative=1, execution={"c__c-1:abc": False}, verdicts=(verdict,),
        usage=JudgeUsage(backend="anthropic", model="m", calls=3, input_tokens=900),
    )  # fmt: skip
    scored = TaskScored(
        correlation_id="a/c__c-1", instance_id="c__c-1", verdict=Verdict.KEEP, eqs=0.9,
        components={"V": 1.0, "H": 0.0, "F1": 1.0}, judge=judge,
    )  # fmt: skip
    attack = AttackCompleted(correlation_id="a/c__c-1", instance_id="c__c-1")
    write_report(tmp_path, [TaskReport("c__c-1", scored, attack)], missing_stages=[])

    row = json.loads((tmp_path / "report.json").read_text())["tasks"][0]
    assert row["judge"]["f1"] == 1.0 and row["judge"]["rationales"] == "judge/c__c-1.json"
    stored = json.loads((tmp_path / "judge" / "c__c-1.json").read_text())
    assert [s["trace"] for s in stored["verdicts"][0]["details"]] == ["yields the shared dict"] * 3
    page = (tmp_path / "report.html").read_text()
    assert "judge incorrect" in page and "execution not correct" in page
    assert "the issue asks for &lt;copies&gt;" in page and "unpriced" in page


def test_a_repaired_task_is_reported_with_its_first_verdict_and_the_repair(tmp_path: Path) -> None:
    from hackaudit.shared.contracts import (
        AttackCompleted,
        GateReason,
        GoldCoverage,
        HunkCoverage,
        JudgeLabel,
        JudgeVerdict,
        ProposedTest,
        RepairCompleted,
        Verdict,
    )
    from tests.reportdata import state

    first = next(s for s in sample_states() if s.task.instance_id == "calc__calc-2")
    assert first.scored is not None and first.scored.exploits
    exploit = first.scored.exploits[0]
    kept = ProposedTest(
        name="test_hackaudit_big", file="tests/test_calc.py", exploit=exploit,
        augmenter="offline", source="def test_hackaudit_big():\n    assert f(100) == 7\n",
        accepted=True, blocks=(exploit,),
        judge=JudgeVerdict(candidate_id=exploit, label=JudgeLabel.BLOCKS,
                           samples=(JudgeLabel.BLOCKS,) * 3),
    )  # fmt: skip
    thrown = ProposedTest(
        name="test_hackaudit_wrong", file="tests/test_calc.py", exploit=exploit,
        augmenter="offline", rejection=GateReason.FAILS_ON_GOLD,
        judge=JudgeVerdict(candidate_id=exploit, label=JudgeLabel.BLOCKS,
                           samples=(JudgeLabel.BLOCKS, JudgeLabel.BLOCKS,
                                    JudgeLabel.DOES_NOT_BLOCK)),
    )  # fmt: skip
    repair = RepairCompleted(
        correlation_id=first.correlation_id, instance_id="calc__calc-2",
        hardened_task=first.task, blocked=(exploit,), tests=(thrown, kept), iterations=1,
        sandbox_seconds=12.0, gate_rejections={"fails_on_gold": 1},
        unblocked=("calc__calc-2:other",), reason="nothing to assert on for this one",
    )  # fmt: skip

    def covered(executed: dict[int, tuple[str, ...]]) -> AttackCompleted:
        assert first.attack is not None
        hunk = HunkCoverage(path="calc.py", start=3, lines=(3, 4, 5, 6), executed=executed)
        coverage = GoldCoverage(
            measured=True, hunks=(hunk,), changed_lines=4, executed_lines=len(executed)
        )
        return first.attack.model_copy(update={"gold_coverage": coverage})

    first = first.model_copy(update={"repair": repair, "attack": covered({3: ("t",), 4: ("t",)})})
    again = state("calc__calc-2", Verdict.KEEP, audit="a1b2c3d4/calc__calc-2/repaired", eqs=0.95)
    again = again.model_copy(
        update={
            "repaired_from": first.correlation_id,
            "previous_verdict": "FIX",
            "attack": covered(dict.fromkeys((3, 4, 5, 6), ("t",))),
        }
    )
    (item,) = [i for i in latest_per_task([first, again]) if i.instance_id == "calc__calc-2"]
    assert item.scored is not None and item.scored.verdict is Verdict.KEEP
    write_report(tmp_path, [item], missing_stages=[])

    row = json.loads((tmp_path / "report.json").read_text())["tasks"][0]
    assert row["verdict"] == "KEEP" and row["before_repair"]["verdict"] == "FIX"
    (targeted,) = row["before_repair"]["exploits"]
    assert (tmp_path / targeted["diff"]).exists()
    assert row["repair"]["blocked"] == 1 and row["repair"]["tests_kept"] == 1
    assert row["repair"]["gate_rejections"] == {"fails_on_gold": 1}
    gained = "graded tests execute 2 of 4 lines gold changes before repair, 4 of 4 after"
    assert row["repair"]["coverage"] == gained
    assert row["before_repair"]["gold_coverage"].startswith("graded tests execute 2 of 4 lines")
    # Each proposed test: the gates' result and the judge's verdict beside it.
    wrong, big = row["repair"]["tests"]
    assert (wrong["rejection"], wrong["judge"]["label"]) == ("fails_on_gold", "blocks")
    assert wrong["judge"]["samples"] == ["blocks", "blocks", "does_not_block"]
    assert big["accepted"] and big["judge"]["label"] == "blocks"
    summary = json.loads((tmp_path / "report.json").read_text())["summary"]
    judged = summary["repair_judge"]
    assert (judged["gold_gate_let_through"], judged["gold_gate_judged"]) == (1, 1)
    page = (tmp_path / "report.html").read_text()
    assert "Repaired:" in page and "test_hackaudit_big" in page
    assert "Not blocked:</b> calc__calc-2:other — nothing to assert on for this one" in page
    assert "judge: blocks the exploit?" in page and "blocks, blocks, does_not_block" in page
    assert "Exploits the repair targeted" in page
    assert f"Coverage:</b> {gained}" in page


SCRIPT = '<script>alert(1)</script> "quoted" & co'
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; &#34;quoted&#34; &amp; co"


def test_a_task_id_reason_diff_line_and_judge_rationale_are_escaped() -> None:
    from hackaudit.cli.report import TaskReport
    from hackaudit.shared.contracts import (
        AttackCompleted,
        CandidateVerdict,
        JudgeAgreement,
        JudgeLabel,
        JudgeSample,
        JudgeVerdict,
        TaskScored,
        Verdict,
    )
    from tests.reportdata import EXPLOIT, outcome

    task_id = f"calc__calc-7{SCRIPT}"
    exploit = outcome(task_id, f"{EXPLOIT}+# {SCRIPT}\n", CandidateVerdict.EXPLOIT)
    rationale = JudgeSample(
        label=JudgeLabel.INCORRECT, premises=(f"premise {SCRIPT}",), trace=f"trace {SCRIPT}",
        conclusion=f"conclusion {SCRIPT}",
    )  # fmt: skip
    judge = JudgeAgreement(
        f1=1.0, true_negative=1, execution={exploit.candidate.candidate_id: False},
        verdicts=(JudgeVerdict(candidate_id=exploit.candidate.candidate_id,
                               samples=(JudgeLabel.INCORRECT,), label=JudgeLabel.INCORRECT,
                               details=(rationale,)),),
    )  # fmt: skip
    scored = TaskScored(
        correlation_id=f"a/{task_id}", instance_id=task_id, verdict=Verdict.FIX, eqs=0.5,
        components={"V": 1.0, "H": 1.0, "F1": 1.0}, reason=f"reason {SCRIPT}", judge=judge,
    )  # fmt: skip
    attack = AttackCompleted(
        correlation_id=f"a/{task_id}", instance_id=task_id, outcomes=(exploit,)
    )
    page = render_html([TaskReport(task_id, scored, attack)], missing_stages=[], problems=[])

    assert "<script" not in page and '"quoted"' not in page and "& co" not in page
    assert f'<a href="#task-0">calc__calc-7{ESCAPED}</a>' in page  # the verdict table
    assert f'<article id="task-0"><h3>calc__calc-7{ESCAPED} <span' in page
    assert f'<p class="reason">reason {ESCAPED}</p>' in page
    assert f'<span class="add">+# {ESCAPED}</span>' in page  # the exploit's diff line
    assert f'<a href="exploits/calc__calc-7{ESCAPED}/' in page  # its diff file, in an attribute
    assert f"<li>premise {ESCAPED}</li>" in page
    assert f"<p><b>trace</b> trace {ESCAPED}</p>" in page
    assert f"<p><b>conclusion</b> conclusion {ESCAPED}</p>" in page


def test_an_installed_package_renders_the_page_from_any_folder(tmp_path: Path) -> None:
    """The templates are package data, found through the package wherever it is installed, not
    through the working folder: a `templates/` folder there is not read."""
    decoy = tmp_path / "templates"
    decoy.mkdir()
    for name in ("report.html.j2", "_task.html.j2", "_macros.html.j2", "report.css"):
        (decoy / name).write_text("DECOY", encoding="utf-8")
    program = (
        "import importlib.resources, sys\n"
        "from pathlib import Path\n"
        "from hackaudit.cli import report_html\n"
        "from hackaudit.cli.report import write_report\n"
        "from hackaudit.cli.report_store import latest_per_task\n"
        "from tests.reportdata import sample_states\n"
        "write_report(Path('out'), latest_per_task(sample_states()), missing_stages=[])\n"
        "print(report_html._templates().get_template('report.html.j2').filename)\n"
        "print(importlib.resources.files('hackaudit.cli') / 'templates')\n"
    )
    root = Path(__file__).resolve().parents[3]  # for `tests.reportdata`
    path = os.pathsep.join([*sys.path, str(root)])
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, env=os.environ | {"PYTHONPATH": path},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    template, folder = done.stdout.splitlines()
    assert Path(template) == Path(folder) / "report.html.j2"
    assert not Path(template).is_relative_to(tmp_path)
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "DECOY" not in page
    assert page.startswith("<!DOCTYPE html>") and page.count("<article id=") == 6
    assert "<script" not in page and 'src="http' not in page and "url(" not in page
