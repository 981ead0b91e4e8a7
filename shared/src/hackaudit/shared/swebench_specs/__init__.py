"""SWE-bench's per-(repository, version) environment specifications, shipped with the package.

`with_spec(task)` fills a plain SWE-bench row's environment (Python version, pip packages,
requirement files, pre-install and install commands), test command and log parser from the
table; what the task states itself wins. See `table` for the data and `generate` for its origin.
"""

from hackaudit.shared.swebench_specs.apply import (
    SpecNotFound,
    needs_spec,
    require_spec,
    spec_environment,
    with_spec,
)
from hackaudit.shared.swebench_specs.table import (
    RepoTestCommand,
    RepoVersionSpec,
    known_versions,
    repo_test_command,
    spec_for,
)

__all__ = [
    "RepoTestCommand",
    "RepoVersionSpec",
    "SpecNotFound",
    "known_versions",
    "needs_spec",
    "repo_test_command",
    "require_spec",
    "spec_environment",
    "spec_for",
    "with_spec",
]
