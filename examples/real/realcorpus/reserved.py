"""The tasks this corpus must never include, build, run or read: held out for evaluation.

Every entry point filters ids through `refuse_reserved` before anything else touches them, so a
reserved id given on the command line or found in a data file is dropped with a reported refusal.
"""

from __future__ import annotations

from collections.abc import Iterable

RESERVED: frozenset[str] = frozenset(
    f"sympy__sympy-{n}"
    for n in (
        13480,
        14531,
        15809,
        16450,
        16766,
        17655,
        18189,
        19954,
        20154,
        21847,
        22714,
        24213,
    )
)


class ReservedTask(ValueError):
    """A reserved task was asked for."""

    def __init__(self, instance_id: str) -> None:
        super().__init__(f"{instance_id} is reserved and is never built")
        self.instance_id = instance_id


def is_reserved(instance_id: str) -> bool:
    return instance_id.strip() in RESERVED


def refuse_reserved(ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """The ids that may be used, and the reserved ones refused (both in the given order)."""
    allowed: list[str] = []
    refused: list[str] = []
    for instance_id in ids:
        (refused if is_reserved(instance_id) else allowed).append(instance_id)
    return allowed, refused


def ensure_not_reserved(instance_id: str) -> None:
    """Raise `ReservedTask` for a reserved id: the last guard before any git or data access."""
    if is_reserved(instance_id):
        raise ReservedTask(instance_id)
