"""Inputs for differential probes: the tests' own literals, values around them, and edge values.

The tests show which inputs the suite checks; a wrong patch that passes them usually differs from
gold just beside those inputs — one past a boundary, at zero, on an empty string, at a month's
end, with a pre-release part the tests never wrote, a path spelled with a `./` in front. Every
generator here is deterministic and bounded, and each returns its most telling values first, so a
probe cut short by its budget still covers the edges.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from hackaudit.attacker.domain.reading.test_literals import is_literal_value

Inputs = tuple[tuple[Any, ...], tuple[tuple[str, Any], ...]]  # (args, kwargs)

# Generic values for parameters no test call shows: small numbers, empty and short strings,
# quote and blank characters, empty and short containers.
POOL: tuple[Any, ...] = (
    *(0, 1, -1, 2, 10, 0.5, True, None),
    *("", "a", "abc", "A", " ", "a b", "0", "-1", "'", '"', "''", '""'),
    *([], [1, 2, 3], (), (1, 2, 3), {}),
)
MAX_DIGIT_RUNS = 6
MAX_STRING_CHARS = 2000
# Two-digit fields that sit on a boundary of their own: the last month, the days months end on.
_TWO_DIGIT_EDGES = ("12", "31", "29", "30", "01")
_DIGITS = re.compile(r"\d+")
_RELEASE = re.compile(r"\d+\.\d+\.\d+")
_SEGMENT_SEPARATORS = "/.,;:-_ "


def _digit_variants(text: str) -> list[str]:
    """`text` with one run of digits changed: to zero, to a two-digit edge, by one, to nines."""
    runs = list(_DIGITS.finditer(text))[:MAX_DIGIT_RUNS]

    def each(change: Callable[[str], str | None]) -> Iterator[str]:
        for run in runs:
            new = change(run.group())
            if new is not None and new != run.group():
                yield text[: run.start()] + new + text[run.end() :]

    def bump(by: int) -> Callable[[str], str | None]:
        def change(digits: str) -> str | None:
            value = int(digits) + by
            return str(value).zfill(len(digits)) if value >= 0 else None

        return change

    def edge(value: str) -> Callable[[str], str | None]:
        def change(digits: str) -> str | None:
            return value if len(digits) == 2 else None

        return change

    def fill(char: str) -> Callable[[str], str | None]:
        return lambda digits: char * len(digits)

    out: list[str] = [*each(fill("0"))]
    for value in _TWO_DIGIT_EDGES[:2]:
        out += each(edge(value))
    out += [*each(bump(1)), *each(bump(-1))]
    for value in _TWO_DIGIT_EDGES[2:]:
        out += each(edge(value))
    out += each(fill("9"))
    return out


def _release_variants(text: str) -> list[str]:
    """Version-like strings with a pre-release or build part added, or their own dropped."""
    match = _RELEASE.search(text)
    if match is None:
        return []
    end = match.end()
    tail = text[end:]
    if tail[:1] in ("-", "+"):
        return [text[:end] + tail[len(tail.split(" ")[0]) :]]
    return [text[:end] + "-rc.1" + tail, text[:end] + "+b.1" + tail, text[:end] + "-0" + tail]


def _segment_variants(text: str) -> list[str]:
    """The last segment repeated, and the text without its last segment."""
    for sep in _SEGMENT_SEPARATORS:
        if sep in text.strip(sep):
            head, _, last = text.rpartition(sep)
            return [f"{text}{sep}{last}", head]
    return []


_PATH = re.compile(r"^[\w.\-/]+$")


def _path_variants(text: str) -> list[str]:
    """A path-like string spelled another way that names the same place: a `./` in front, a
    trailing or doubled separator. Code that compares paths as text tells these apart."""
    if not _PATH.match(text) or not ("/" in text or text in (".", "..")):
        return []
    out = [f"./{text}", f"{text}/"]
    if "/" in text.strip("/"):
        out.append(text.replace("/", "//", 1))
    return out


def string_variants(text: str) -> list[str]:
    if len(text) > MAX_STRING_CHARS:
        return [""]
    out = [*_path_variants(text), *_digit_variants(text), *_release_variants(text)]
    out += ["", text.upper(), text.lower(), text[:-1], text[1:]]
    out += [text + text[-1:], f" {text} ", text + "x"]
    out += _segment_variants(text)
    return out


def variants(value: Any) -> list[Any]:
    """Values beside `value`, most telling first, without `value` itself or repeats."""
    out: list[Any]
    if isinstance(value, bool):
        out = [not value]
    elif isinstance(value, int):
        out = [0, value + 1, value - 1, -value]
    elif isinstance(value, float):
        out = [0.0, value + 1.0, value - 1.0, -value]
    elif isinstance(value, str):
        out = string_variants(value)
    elif isinstance(value, list | tuple):
        # The first variant of each of the first two items comes early: an argument list such
        # as `[".", "--flag"]` says more with one item changed than reordered.
        kind = type(value)
        changed = [
            [kind([*value[:i], new, *value[i + 1 :]]) for new in variants(item)[:3]]
            for i, item in enumerate(value[:2])
        ]
        # The same items in the other sequence type: a fix that handles `(list, tuple)` and a
        # wrong one that handles only the type the tests pass differ there.
        other = tuple if isinstance(value, list) else list
        out = [kind(), other(value), value[:-1], *(c[0] for c in changed if c)]
        out += [kind(reversed(value)), kind([*value, *value[-1:]])]
        out += [value[0]] if value else []  # one item where the code also takes a sequence
        out += [v for c in changed for v in c[1:]]
    elif isinstance(value, dict):
        out = [{}]
    else:
        out = []
    return _distinct(out, exclude=value)


_NOTHING = object()


def _distinct(values: Sequence[Any], exclude: Any = _NOTHING) -> list[Any]:
    seen = {_key(exclude)} if exclude is not _NOTHING else set()
    out = []
    for v in values:
        key = _key(v)
        if key not in seen and is_literal_value(v):
            seen.add(key)
            out.append(v)
    return out


def _key(value: Any) -> str:
    return f"{type(value).__name__}:{value!r}"


def input_sets(literal: Sequence[Inputs], limit: int) -> list[Inputs]:
    """The tests' inputs, then each with one argument varied — first variants of every input
    before second ones, so a small `limit` still varies every argument of every call."""
    out: list[Inputs] = []
    seen: set[str] = set()

    def add(inputs: Inputs) -> None:
        key = repr(inputs)
        if key not in seen and len(out) < limit:
            seen.add(key)
            out.append(inputs)

    for inputs in literal:
        add(inputs)
    table: list[tuple[Inputs, int, list[Any]]] = []
    for args, kwargs in literal:
        for i, value in enumerate(args):
            table.append(((args, kwargs), i, variants(value)))
        for j, (_, value) in enumerate(kwargs):
            table.append(((args, kwargs), len(args) + j, variants(value)))
    depth = max((len(v) for _, _, v in table), default=0)
    for rank in range(depth):
        for (args, kwargs), position, values in table:
            if rank >= len(values):
                continue
            new = values[rank]
            if position < len(args):
                add(((*args[:position], new, *args[position + 1 :]), kwargs))
            else:
                j = position - len(args)
                name = kwargs[j][0]
                add((args, (*kwargs[:j], (name, new), *kwargs[j + 1 :])))
        if len(out) >= limit:
            break
    return out


def pool_sets(arities: Sequence[int], constants: Sequence[Any]) -> list[Inputs]:
    """Every arity filled with one generic value (or one of the tests' constants) throughout."""
    values = _distinct([*POOL, *constants])
    return [((value,) * n, ()) for n in sorted(set(arities)) for value in values]
