"""A task's anatomy: what its patches are (files, hunks, lines) and what each path is to its tests.

Parsed once, passed as a value: `diff` models a unified diff, `roles` classifies paths as test
files or test configuration, `checks` holds the confinement checks made before a diff is applied.
"""

from hackaudit.shared.anatomy.checks import diff_problems, path_problem, symlink_problem
from hackaudit.shared.anatomy.diff import (
    NO_NEWLINE,
    DiffError,
    DiffText,
    FileDiff,
    Hunk,
    HunkHeader,
    Line,
    LineKind,
    NumberedLine,
    Patch,
    Reading,
    emit_patch,
    hunk_header,
    new_file,
    normalise,
    parse_patch,
    read_patch,
)
from hackaudit.shared.anatomy.paths import DEV_NULL, unquote_path
from hackaudit.shared.anatomy.roles import (
    changed_sections,
    is_sectioned_config,
    is_test_config,
    is_test_file,
    is_test_path,
    touches_test_sections,
)

__all__ = [
    "DEV_NULL",
    "NO_NEWLINE",
    "DiffError",
    "DiffText",
    "FileDiff",
    "Hunk",
    "HunkHeader",
    "Line",
    "LineKind",
    "NumberedLine",
    "Patch",
    "Reading",
    "changed_sections",
    "diff_problems",
    "emit_patch",
    "hunk_header",
    "is_sectioned_config",
    "is_test_config",
    "is_test_file",
    "is_test_path",
    "new_file",
    "normalise",
    "parse_patch",
    "path_problem",
    "read_patch",
    "symlink_problem",
    "touches_test_sections",
    "unquote_path",
]
