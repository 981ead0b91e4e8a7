"""Regenerates `specs.json` from the shared per-(repository, version) specifications file.

The shared file (`swebench_verified_specs_by_repo_version.json`) holds the SWE-bench harness's
constants for every (repository, version) of SWE-bench Verified. This converter keeps what an
environment needs, in the shape the lookup reads:

- `packages` becomes a list of requirement strings when it is a plain list of names (the harness
  passes it to its package manager as one space-separated string); the words `requirements.txt`
  and `environment.yml` become `packages_from`, meaning "read the repository's own file";
- `log_parser` is named from the test command (`bin/test` → sympy, `runtests.py` → django,
  anything else → pytest), as the sandbox's parsers are named.

Run: `python -m hackaudit.shared.swebench_specs.generate SHARED_SPECS_JSON [OUT_JSON]`.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

ABOUT = (
    "derived from swebench 4.1.0 harness constants via the shared specs file "
    "(swebench_verified_specs_by_repo_version.json); regenerate with "
    "`python -m hackaudit.shared.swebench_specs.generate <that file>`"
)
PACKAGE_FILES = ("requirements.txt", "environment.yml")
KEPT = ("python", "pip_packages", "pre_install", "install", "test_cmd", "eval_commands")


def log_parser_for(test_cmd: str) -> str:
    if "bin/test" in test_cmd:
        return "sympy"
    if "runtests.py" in test_cmd:
        return "django"
    return "pytest"


def converted_spec(spec: dict[str, Any]) -> dict[str, Any]:
    out = {key: spec[key] for key in KEPT if key in spec}
    packages = spec.get("packages")
    if isinstance(packages, str) and packages.strip():
        if packages.strip() in PACKAGE_FILES:
            out["packages_from"] = packages.strip()
        else:
            out["packages"] = shlex.split(packages)
    out["log_parser"] = log_parser_for(str(spec.get("test_cmd", "")))
    return out


def converted(shared: dict[str, Any]) -> dict[str, Any]:
    specs = {
        repo: {
            version: converted_spec(entry["spec"]) for version, entry in sorted(versions.items())
        }
        for repo, versions in sorted(shared["specs_by_repo_version"].items())
    }
    return {
        "about": ABOUT,
        "upstream": shared.get("source", ""),
        "requirements_paths": shared.get("MAP_REPO_TO_REQS_PATHS", {}),
        "specs": specs,
    }


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    shared = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).with_name("specs.json")
    out.write_text(json.dumps(converted(shared), indent=1, sort_keys=True) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
