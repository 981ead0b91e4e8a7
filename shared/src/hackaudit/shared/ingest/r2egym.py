"""Reads R2E-Gym rows, which state the gold change as whole files before and after, into task rows.

Accepted fields of an R2E-Gym row (the dataset's own names):

- `parsed_commit_content` (JSON text or object): the commit, with `old_commit_hash` (becomes
  `base_commit`) and `file_diffs`, each carrying `header.file.path`, `old_file_content`,
  `new_file_content`, and optionally `minus_file.path` / `plus_file.path` (`/dev/null` marks a
  created or deleted file; an empty `old_file_content` also marks a created file) and
  `is_binary_file`. Binary files cannot be carried by a text diff: such a row is refused.
- `execution_result_content` (JSON text or object): `test_file_names` and `test_file_codes`, the
  hidden tests R2E-Gym grades with. They are added by `test_patch` as new files under `r2e_tests/`.
- `expected_output_json` (JSON text or object): test name -> status after the gold change, with
  names in R2E-Gym's form (`TestClass.test_method`, file part dropped). Each name is turned back
  into a pytest node id (`r2e_tests/test_1.py::TestClass::test_method`) by finding the one hidden
  test file that defines it; a name no file (or more than one file) defines refuses the row.
- `repo_name` (becomes `repo`), `docker_image` or `image_name` (becomes `image`),
  `commit_hash` (the gold commit; names the task), `problem_statement`, optional `instance_id`.

How the rest maps:

- `patch` = the commit's changes to non-test files; `test_patch` = the commit's changes to test
  files, then the hidden tests. A path is a test path when every service would call it a test
  file or test configuration (`hackaudit.shared.anatomy.roles.is_test_path`).
- Tests expected to pass go to FAIL_TO_PASS (R2E-Gym does not say which of them already pass
  before the change; both lists must pass for a patch to be resolved, so grading is unchanged).
  A row that states `FAIL_TO_PASS` / `PASS_TO_PASS` itself keeps its own lists.
- Tests R2E-Gym expects to *fail* are dropped: its verifier also demands they keep failing, a
  check the task contract cannot express.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from hackaudit.shared.anatomy import is_test_path
from hackaudit.shared.ingest.file_mapping import FileChange, UnsafePath, checked_path, unified_diff
from hackaudit.shared.ingest.row_error import RowError

HIDDEN_TESTS_DIR = "r2e_tests"
_NULL = "/dev/null"


def is_r2egym_row(row: Mapping[str, Any]) -> bool:
    return "parsed_commit_content" in row


def r2egym_instance_id(
    row: Mapping[str, Any], commit: Mapping[str, Any] | None = None
) -> str | None:
    """The row's own `instance_id`, else `<repo>__<repo>-<gold commit>`."""
    given = row.get("instance_id")
    if isinstance(given, str) and given:
        return given
    repo = row.get("repo_name") or row.get("repo")
    commit_hash = row.get("commit_hash") or (commit or {}).get("new_commit_hash")
    if not isinstance(repo, str) or not isinstance(commit_hash, str):
        return None
    return f"{repo}__{repo}-{commit_hash}"


def r2egym_to_swebench(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row in SWE-bench form, ready for `Task` validation; RowError names the bad field."""
    commit = _json_field(row, "parsed_commit_content")
    if not isinstance(commit, dict):
        raise RowError("parsed_commit_content", "must be a JSON object")
    base_commit = commit.get("old_commit_hash")
    code_changes, test_changes = _split_changes(commit.get("file_diffs"))
    hidden = _hidden_tests(row)
    out: dict[str, Any] = {
        key: value
        for key, value in row.items()
        if key not in ("parsed_commit_content", "execution_result_content", "prompt")
    }
    repo = row.get("repo_name") or row.get("repo")
    out["instance_id"] = r2egym_instance_id(row, commit)
    out["repo"] = repo
    out["base_commit"] = base_commit
    out.setdefault("image", row.get("docker_image") or row.get("image_name"))
    out["patch"] = unified_diff(code_changes)
    out["test_patch"] = unified_diff(
        test_changes + [FileChange(path, None, code) for path, code in hidden.items()]
    )
    if "FAIL_TO_PASS" not in row:
        out["FAIL_TO_PASS"] = _passing_node_ids(row, hidden)
        out.setdefault("PASS_TO_PASS", [])
    return out


def _json_field(row: Mapping[str, Any], field: str) -> Any:
    value = row.get(field)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise RowError(field, f"is not valid JSON: {exc.msg}") from exc
    return value


def _split_changes(file_diffs: Any) -> tuple[list[FileChange], list[FileChange]]:
    field = "parsed_commit_content.file_diffs"
    if not isinstance(file_diffs, list):
        raise RowError(field, "must be a list")
    code: list[FileChange] = []
    tests: list[FileChange] = []
    for index, entry in enumerate(file_diffs):
        where = f"{field}[{index}]"
        if not isinstance(entry, dict):
            raise RowError(where, "must be an object")
        path = _entry_path(entry, where)
        if entry.get("is_binary_file"):
            raise RowError(where, f"{path} is a binary file, which a text diff cannot carry")
        change = FileChange(path, _old_side(entry), _new_side(entry))
        (tests if is_test_path(path) else code).append(change)
    return code, tests


def _entry_path(entry: Mapping[str, Any], where: str) -> str:
    header = entry.get("header")
    file_info = header.get("file") if isinstance(header, dict) else None
    path = file_info.get("path") if isinstance(file_info, dict) else None
    if not isinstance(path, str):
        raise RowError(f"{where}.header.file.path", "is missing")
    try:
        return checked_path(path)
    except UnsafePath as exc:
        raise RowError(f"{where}.header.file.path", str(exc)) from exc


def _marker(entry: Mapping[str, Any], key: str) -> str | None:
    info = entry.get(key)
    path = info.get("path") if isinstance(info, dict) else None
    return path if isinstance(path, str) else None


def _old_side(entry: Mapping[str, Any]) -> str | None:
    old = entry.get("old_file_content")
    if _marker(entry, "minus_file") == _NULL or old in (None, "", _NULL):
        return None
    return str(old)


def _new_side(entry: Mapping[str, Any]) -> str | None:
    new = entry.get("new_file_content")
    if _marker(entry, "plus_file") == _NULL or new is None or new == _NULL:
        return None
    return str(new)


def _hidden_tests(row: Mapping[str, Any]) -> dict[str, str]:
    result = _json_field(row, "execution_result_content")
    if result is None:
        return {}
    if not isinstance(result, dict):
        raise RowError("execution_result_content", "must be a JSON object")
    names = result.get("test_file_names") or []
    codes = result.get("test_file_codes") or []
    if not isinstance(names, list) or not isinstance(codes, list) or len(names) != len(codes):
        raise RowError(
            "execution_result_content",
            "test_file_names and test_file_codes must be lists of the same length",
        )
    hidden: dict[str, str] = {}
    for name, code in zip(names, codes, strict=True):
        if not isinstance(name, str) or not isinstance(code, str):
            raise RowError("execution_result_content", "test files must be name/text pairs")
        path = name if name.startswith(f"{HIDDEN_TESTS_DIR}/") else f"{HIDDEN_TESTS_DIR}/{name}"
        try:
            hidden[checked_path(path)] = code
        except UnsafePath as exc:
            raise RowError("execution_result_content", str(exc)) from exc
    return hidden


def _passing_node_ids(row: Mapping[str, Any], hidden: Mapping[str, str]) -> list[str]:
    expected = _json_field(row, "expected_output_json")
    if not isinstance(expected, dict):
        raise RowError("expected_output_json", "must be a JSON object of test name -> status")
    node_ids = []
    for name, status in expected.items():
        if str(status).upper() != "PASSED":
            continue
        node_ids.append(_node_id(str(name), hidden))
    return node_ids


def _node_id(name: str, hidden: Mapping[str, str]) -> str:
    """`TestClass.test_x[param]` -> `r2e_tests/test_1.py::TestClass::test_x[param]`."""
    name = re.sub(r"\x1b\[[0-9;]*m", "", name).split(" - ")[0].strip()
    bare, bracket, params = name.partition("[")
    parts = bare.split(".")
    *classes, function = parts
    defining = [
        path
        for path, code in hidden.items()
        if re.search(rf"^\s*(async\s+)?def {re.escape(function)}\b", code, re.MULTILINE)
        and all(re.search(rf"^\s*class {re.escape(c)}\b", code, re.MULTILINE) for c in classes)
    ]
    if len(defining) != 1:
        found = (
            "no hidden test file defines" if not defining else "several hidden test files define"
        )
        raise RowError("expected_output_json", f"{found} the test {name!r}")
    return f"{defining[0]}::{'::'.join(parts)}{bracket}{params}"
