"""Producing the next version."""

from semverlite.version import Version, parse

PARTS = ("major", "minor", "patch")


def bump(version, part):
    """The version that follows ``version`` when ``part`` is incremented.

    Incrementing a part resets the parts to its right and drops prerelease and build data.
    A prerelease is promoted to its release when that release is the next version in the
    requested part: ``bump("2.0.0-rc.1", "major")`` is ``2.0.0``.
    """
    version = parse(version)
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; expected one of {', '.join(PARTS)}")
    major, minor, patch = version.release
    if part == "major":
        if version.is_prerelease and minor == 0 and patch == 0:
            return Version(major, 0, 0)
        return Version(major + 1, 0, 0)
    if part == "minor":
        if version.is_prerelease and patch == 0:
            return Version(major, minor, 0)
        return Version(major, minor + 1, 0)
    if version.is_prerelease:
        return Version(major, minor, patch)
    return Version(major, minor, patch + 1)
