"""Resolving ``${option}`` and ``${section:option}`` references inside values."""

import re

from inikit.errors import InterpolationError, MissingOptionError, MissingSectionError

MAX_DEPTH = 10

_REFERENCE = re.compile(r"\$(?:(?P<escape>\$)|\{(?:(?P<section>[^}:]+):)?(?P<option>[^}:]+)\})")


def interpolate(config, section, value, depth=0):
    """Expand every reference in ``value`` as seen from ``section``."""
    if "$" not in value:
        return value
    if depth >= MAX_DEPTH:
        raise InterpolationError(
            f"references nested deeper than {MAX_DEPTH} levels in [{section}] (a cycle?)"
        )

    def replace(match):
        if match.group("escape"):
            return "$"
        target_section = (match.group("section") or section).strip()
        option = match.group("option").strip().lower()
        try:
            raw = config.get(target_section, option, raw=True)
        except (MissingOptionError, MissingSectionError) as exc:
            raise InterpolationError(f"cannot resolve {match.group(0)!r}: {exc}") from None
        return interpolate(config, target_section, raw, depth + 1)

    result = []
    position = 0
    for match in [*_REFERENCE.finditer(value), None]:
        gap = value[position : match.start() if match else len(value)]
        if "$" in gap:
            bad = gap[gap.index("$") :]
            raise InterpolationError(f"malformed reference near {bad!r} in [{section}]")
        result.append(gap)
        if match:
            result.append(replace(match))
            position = match.end()
    return "".join(result)
