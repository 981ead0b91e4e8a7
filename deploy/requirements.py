"""Helpers of deploy/build-image.sh, run by the host's python3 (standard library and pip only).

requirements.py filter  < exported.txt > requirements.txt
    Keeps the requirements of `uv export` whose markers hold inside the image (CPython 3.11,
    Linux, x86_64) and drops the markers, keeping each pin and its hashes. The result is what
    both `pip download` on the host and `pip install --require-hashes` in the image read, so
    the two agree whatever the host's own Python is.

requirements.py select requirements.txt WHEELHOUSE
    Prints the wheelhouse files that satisfy the pins, one per line, and fails naming any pin
    with no wheel: the build context then holds only what the image installs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    from packaging.markers import Marker
except ImportError:  # pip vendors it
    from pip._vendor.packaging.markers import Marker  # type: ignore[no-redef,import-not-found,unused-ignore]

TARGET = {
    "implementation_name": "cpython",
    "implementation_version": "3.11.2",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "platform_system": "Linux",
    "python_full_version": "3.11.2",
    "python_version": "3.11",
    "sys_platform": "linux",
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def logical_lines(text: str) -> list[str]:
    """Requirement lines with their backslash continuations joined and comments removed."""
    joined = re.sub(r"\\\n", " ", text)
    lines = []
    for raw in joined.splitlines():
        line = raw.split("#", 1)[0].strip() if raw.lstrip().startswith("#") else raw.strip()
        if line:
            lines.append(line)
    return lines


def filter_requirements(text: str) -> str:
    out = []
    for line in logical_lines(text):
        if line.startswith("-"):  # options such as -e: the workspace is not exported
            continue
        options = ""
        if " --hash" in line:
            line, options = line.split(" --hash", 1)
            options = "--hash" + options
        spec, _, marker = line.partition(";")
        if marker.strip() and not Marker(marker.strip()).evaluate(TARGET):
            continue
        spec = spec.strip()
        if "==" not in spec:
            raise SystemExit(f"requirements: not a pin: {spec!r}")
        hashes = " \\\n    ".join(options.split())
        out.append(f"{spec} \\\n    {hashes}" if hashes else spec)
    return "\n".join(out) + "\n"


def pins(requirements: str) -> dict[str, str]:
    found = {}
    for line in logical_lines(requirements):
        spec = line.split(" --hash", 1)[0].split(";", 1)[0].strip()
        name, _, version = spec.partition("==")
        found[canonical(name.split("[", 1)[0])] = version.strip()
    return found


def select(requirements: str, wheelhouse: Path) -> list[Path]:
    wanted = pins(requirements)
    chosen: dict[str, list[Path]] = {}
    for wheel in sorted(wheelhouse.glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        if wanted.get(canonical(name)) == version:
            chosen.setdefault(canonical(name), []).append(wheel)
    missing = sorted(set(wanted) - set(chosen))
    if missing:
        raise SystemExit(
            "requirements: no wheel in the wheelhouse for "
            + ", ".join(f"{n}=={wanted[n]}" for n in missing)
        )
    return [w for ws in chosen.values() for w in ws]


def main(argv: list[str]) -> None:
    if argv[:1] == ["filter"]:
        sys.stdout.write(filter_requirements(sys.stdin.read()))
    elif argv[:1] == ["select"] and len(argv) == 3:
        for wheel in select(Path(argv[1]).read_text(), Path(argv[2])):
            print(wheel)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
