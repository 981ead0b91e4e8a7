"""`hackaudit tasks check` reads task files as `audit` does and runs nothing; `--instance-ids`
chooses the tasks every task-reading command goes on with."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hackaudit.cli.main import app

GOOD = Path(__file__).resolve().parents[1] / "ingest" / "fixtures" / "good"
BAD = Path(__file__).resolve().parents[1] / "ingest" / "fixtures" / "bad"


def rows() -> list[dict[str, object]]:
    return list(json.loads((GOOD / "swebench_list.json").read_text()))


def check(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(app, ["tasks", "check", *args], env={"COLUMNS": "300"})
    assert "Traceback" not in done.output
    return done.exit_code, done.output


def test_all_valid_exits_0_and_says_the_rows_per_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows()))
    code, out = check(str(path))
    assert code == 0, out
    n = len(rows())
    assert f"{path}: {n} row(s) read, {n} valid, 0 rejected" in out
    assert f"{n} valid task(s), 0 rejected" in out


def test_rejected_rows_are_one_line_each_and_exit_3_with_the_same_json(tmp_path: Path) -> None:
    good = rows()
    broken = dict(good[0], instance_id="calc__calc-9", FAIL_TO_PASS="[]")
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*good, broken]) + "{oops\n")

    code, out = check(str(path))

    assert code == 3, out
    n = len(good)
    assert f"{path}: {n + 2} row(s) read, {n} valid, 2 rejected" in out  # the bad line too
    assert f"rejected: {path}:line {n + 1} [calc__calc-9] FAIL_TO_PASS:" in out
    assert f"rejected: {path}:line {n + 2}: not valid JSON" in out

    code, out = check(str(path), "--json")
    assert code == 3
    document = json.loads(out)
    [file] = document["files"]
    assert (file["file"], file["rows_read"], file["valid"]) == (str(path), n + 2, n)
    first, second = file["rejected"]
    assert first == {  # as dataset/rejected.jsonl holds it
        "file": str(path),
        "line": n + 1,
        "instance_id": "calc__calc-9",
        "field": "FAIL_TO_PASS",
        "reason": first["reason"],
    }
    assert "empty" in first["reason"]
    assert (second["line"], second["instance_id"]) == (n + 2, None)
    assert (document["valid"], document["rejected"], document["exit_code"]) == (n, 2, 3)


def test_no_valid_task_exits_2(tmp_path: Path) -> None:
    code, out = check(str(BAD / "patch--missing.json"))
    assert code == 2, out
    assert "0 valid task(s), 1 rejected" in out
    code, out = check(str(tmp_path / "absent.jsonl"), "--json")
    assert code == 2
    [problem] = json.loads(out)["other_problems"]
    assert problem["reason"] == "no such file or folder"


def test_instance_ids_as_a_comma_list_or_repeated_and_unknown_ones_are_named(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(rows()))
    ids = [str(r["instance_id"]) for r in rows()]
    for given in (["--instance-ids", f"{ids[0]},{ids[1]}"],
                  ["--instance-ids", ids[0], "--instance-ids", ids[1]]):  # fmt: skip
        code, out = check(str(path), *given)
        assert code == 0, out
        assert f"{path}: 2 row(s) read, 2 valid, 0 rejected" in out
    code, out = check(str(path), "--instance-ids", f"{ids[0]},nope__nope-1,zz__zz-2")
    assert code == 2
    assert (
        out.strip() == "error: --instance-ids: not in any task file given: nope__nope-1, zz__zz-2"
    )


def test_every_task_reading_command_refuses_ids_no_file_holds(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(rows()))
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({"instance_id": rows()[0]["instance_id"], "model_patch": ""}))
    for command in (
        ["tasks", "validate", str(path)],
        ["tasks", "grade", str(path), "--predictions", str(predictions)],
        ["eval", "attacker", str(path)],
        ["eval", "repair", str(path)],
    ):
        done = CliRunner().invoke(app, [*command, "--instance-ids", "nope__nope-1"])
        assert done.exit_code == 2, (command, done.output)
        assert "--instance-ids: not in any task file given: nope__nope-1" in done.output
        assert "Traceback" not in done.output
