"""Range expressions: sets of comparators that a version may satisfy.

Grammar (informal)::

    range       := alternative ("||" alternative)*
    alternative := term ((" " | ",") term)*
    term        := op? version | "^" version | "~" version | "*"
    op          := "=" | "==" | "!=" | "<" | "<=" | ">" | ">="

A prerelease version only satisfies a range when include_prerelease is set, or when one
comparator of the matching alternative names a prerelease of the same major.minor.patch.
"""

import re

from semverlite.errors import InvalidRange, InvalidVersion
from semverlite.version import Version, parse

_OPERATORS = {
    "=": lambda c: c == 0,
    "==": lambda c: c == 0,
    "!=": lambda c: c != 0,
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
}
_TERM = re.compile(r"^(?P<op>\^|~|==|!=|<=|>=|=|<|>)?\s*(?P<version>\S+)$")


class Comparator:
    """One operator and one version, e.g. ``>=1.2.0``."""

    __slots__ = ("op", "version")

    def __init__(self, op, version):
        if op not in _OPERATORS:
            raise InvalidRange(f"{op}{version}", f"unknown operator {op!r}")
        self.op = op
        self.version = parse(version)

    def test(self, version):
        return _OPERATORS[self.op](parse(version).compare(self.version))

    def __eq__(self, other):
        if not isinstance(other, Comparator):
            return NotImplemented
        return (self.op, self.version) == (other.op, other.version)

    def __hash__(self):
        return hash((self.op, self.version))

    def __str__(self):
        return f"{self.op}{self.version}"

    def __repr__(self):
        return f"Comparator({str(self)!r})"


def _caret(version):
    """``^1.2.3`` allows changes that do not modify the left-most non-zero part."""
    upper = Version(version.major + 1, 0, 0)
    return [Comparator(">=", version), Comparator("<", upper)]


def _tilde(version):
    """``~1.2.3`` allows patch-level changes: ``>=1.2.3 <1.3.0``."""
    upper = Version(version.major, version.minor + 1, 0)
    return [Comparator(">=", version), Comparator("<", upper)]


def _parse_term(term, source):
    if term in ("*", "x", "X"):
        return [Comparator(">=", Version(0, 0, 0))]
    match = _TERM.match(term)
    if match is None:
        raise InvalidRange(source, f"cannot read {term!r}")
    op = match.group("op") or "="
    try:
        version = parse(match.group("version"))
    except InvalidVersion as exc:
        raise InvalidRange(source, exc.reason) from None
    if op == "^":
        return _caret(version)
    if op == "~":
        return _tilde(version)
    return [Comparator(op, version)]


def _split_terms(text):
    # Glue an operator written apart from its version (">= 1.2.0") back together.
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    terms = []
    pending = ""
    for token in tokens:
        if token in _OPERATORS or token in ("^", "~"):
            pending += token
            continue
        terms.append(pending + token)
        pending = ""
    if pending:
        raise InvalidRange(text, f"operator {pending!r} without a version")
    return terms


class Range:
    """A parsed range expression."""

    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError(f"expected a range string, got {type(text).__name__}")
        self.text = text
        self.alternatives = []
        for part in text.split("||"):
            terms = _split_terms(part)
            if not terms:
                raise InvalidRange(text, "empty alternative")
            comparators = []
            for term in terms:
                comparators.extend(_parse_term(term, text))
            self.alternatives.append(tuple(comparators))

    def allows(self, version, include_prerelease=False):
        version = parse(version)
        for comparators in self.alternatives:
            if not all(c.test(version) for c in comparators):
                continue
            if version.is_prerelease and not include_prerelease:
                if not any(
                    c.version.is_prerelease and c.version.release == version.release
                    for c in comparators
                ):
                    continue
            return True
        return False

    __contains__ = allows

    def __str__(self):
        return " || ".join(" ".join(str(c) for c in alt) for alt in self.alternatives)

    def __repr__(self):
        return f"Range({self.text!r})"


def satisfies(version, range_text, include_prerelease=False):
    """True if ``version`` lies in the range ``range_text``."""
    rng = range_text if isinstance(range_text, Range) else Range(range_text)
    return rng.allows(version, include_prerelease=include_prerelease)


def max_satisfying(versions, range_text, include_prerelease=False):
    """The highest of ``versions`` inside the range, or None."""
    rng = range_text if isinstance(range_text, Range) else Range(range_text)
    best = None
    for candidate in versions:
        version = parse(candidate)
        if rng.allows(version, include_prerelease=include_prerelease):
            if best is None or version > best:
                best = version
    return best
