"""The Version value type and the parser that produces it."""

import re
from functools import total_ordering

from semverlite.errors import InvalidVersion

_NUMBER = r"0|[1-9][0-9]*"
_IDENT = r"[0-9A-Za-z-]+"
_PATTERN = re.compile(
    rf"^v?(?P<major>{_NUMBER})\.(?P<minor>{_NUMBER})\.(?P<patch>{_NUMBER})"
    rf"(?:-(?P<pre>{_IDENT}(?:\.{_IDENT})*))?"
    rf"(?:\+(?P<build>{_IDENT}(?:\.{_IDENT})*))?$"
)


def _check_identifiers(text, identifiers, what):
    for ident in identifiers:
        if what == "prerelease" and ident.isdigit() and len(ident) > 1 and ident[0] == "0":
            raise InvalidVersion(text, f"numeric {what} identifier {ident!r} has a leading zero")


def _compare_prerelease(left, right):
    """Order two prerelease tuples; an empty tuple (a release) sorts last."""
    if left == right:
        return 0
    if not left:
        return 1
    if not right:
        return -1
    return -1 if left < right else 1


@total_ordering
class Version:
    """An immutable semantic version.

    Build metadata is kept and printed but takes no part in equality or ordering.
    """

    __slots__ = ("_build", "_major", "_minor", "_patch", "_prerelease")

    def __init__(self, major, minor=0, patch=0, prerelease=(), build=()):
        for name, value in (("major", major), ("minor", minor), ("patch", patch)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidVersion(f"{major}.{minor}.{patch}", f"{name} must be an int >= 0")
        if isinstance(prerelease, str):
            prerelease = tuple(prerelease.split(".")) if prerelease else ()
        if isinstance(build, str):
            build = tuple(build.split(".")) if build else ()
        self._major = major
        self._minor = minor
        self._patch = patch
        self._prerelease = tuple(str(p) for p in prerelease)
        self._build = tuple(str(b) for b in build)

    major = property(lambda self: self._major)
    minor = property(lambda self: self._minor)
    patch = property(lambda self: self._patch)
    prerelease = property(lambda self: self._prerelease)
    build = property(lambda self: self._build)

    @property
    def is_prerelease(self):
        return bool(self._prerelease)

    @property
    def release(self):
        """The (major, minor, patch) triple."""
        return (self._major, self._minor, self._patch)

    def finalize(self):
        """The release this version leads up to: prerelease and build removed."""
        return Version(self._major, self._minor, self._patch)

    def replace(self, **changes):
        fields = {
            "major": self._major,
            "minor": self._minor,
            "patch": self._patch,
            "prerelease": self._prerelease,
            "build": self._build,
        }
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"unknown field(s): {', '.join(sorted(unknown))}")
        fields.update(changes)
        return Version(**fields)

    def compare(self, other):
        """-1, 0 or 1 as self is lower than, equal to or higher than other."""
        other = _coerce(other)
        if self.release != other.release:
            return -1 if self.release < other.release else 1
        return _compare_prerelease(self._prerelease, other._prerelease)

    def __eq__(self, other):
        try:
            return self.compare(other) == 0
        except (InvalidVersion, TypeError):
            return NotImplemented

    def __lt__(self, other):
        try:
            return self.compare(other) < 0
        except (InvalidVersion, TypeError):
            return NotImplemented

    def __hash__(self):
        return hash((self.release, self._prerelease))

    def __str__(self):
        text = f"{self._major}.{self._minor}.{self._patch}"
        if self._prerelease:
            text += "-" + ".".join(self._prerelease)
        if self._build:
            text += "+" + ".".join(self._build)
        return text

    def __repr__(self):
        return f"Version({str(self)!r})"


def parse(text):
    """Parse a version string such as ``1.2.3``, ``v2.0.0-rc.1`` or ``1.0.0+git.abc``."""
    if isinstance(text, Version):
        return text
    if not isinstance(text, str):
        raise TypeError(f"expected a version string, got {type(text).__name__}")
    match = _PATTERN.match(text.strip())
    if match is None:
        raise InvalidVersion(text)
    pre = tuple(match.group("pre").split(".")) if match.group("pre") else ()
    build = tuple(match.group("build").split(".")) if match.group("build") else ()
    _check_identifiers(text, pre, "prerelease")
    return Version(
        int(match.group("major")),
        int(match.group("minor")),
        int(match.group("patch")),
        pre,
        build,
    )


def _coerce(value):
    if isinstance(value, Version):
        return value
    if isinstance(value, str):
        return parse(value)
    raise TypeError(f"cannot compare Version with {type(value).__name__}")
