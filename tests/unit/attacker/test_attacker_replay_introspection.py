"""Observations that read the code instead of running it, left out only when a rewrite of gold is
shown equal to gold.

A replayed test may look at a function's source, its code object, its docstring or the calls a
mock recorded. A semantics-preserving rewrite of gold changes exactly these, so for the reference
pool's equality check they are not compared; for confirming an exploit they still count.
"""

from __future__ import annotations

import pytest

from hackaudit.attacker.domain.confirm import replay
from hackaudit.attacker.domain.confirm.confirmation import compare_probes
from hackaudit.shared.contracts import RunResult
from tests.scripted_sandbox import passed

TARGET = replay.ReplayTarget("tests/test_core.py", "tests.test_core", ("test_clamp",))


@pytest.mark.parametrize(
    "expression",
    [
        "inspect.getsource(unique_slug)",
        "inspect.getsourcelines(f)[0]",
        "inspect.getdoc(truncate)",
        "truncate.__doc__",
        "unique_slug.__code__.co_varnames",
        "f.__code__",
        "dis.get_instructions(f)",
        "parent.method_calls",
        "store.mock_calls  [literal -> 'x']",
        "store.add.call_args_list",
        "store.add.call_args",
    ],
)
def test_introspecting_expressions_are_recognised(expression: str) -> None:
    assert replay.introspects(expression)


@pytest.mark.parametrize(
    "expression",
    [
        "truncate('hello-world', 5)",
        "registry.rename('a', 'b')",
        "len(self.redirects)",
        "docs.get(name)",
        "redis.get('key')",
        "code_of(f)",
        "store.add.call_count",
        "sourcecode",
    ],
)
def test_behavioural_expressions_are_kept(expression: str) -> None:
    assert not replay.introspects(expression)


def _run(observed: dict[str, tuple[str, str, str]]) -> RunResult:
    """A probe run reporting, per key, (tag, expression, outcome head)."""
    return passed(
        [
            f"test_replay_f0.test_clamp.p0:{key}_{tag} =>> {text} =>> {head} <<="
            for key, (tag, text, head) in observed.items()
        ]
    )


GOLD = _run(
    {
        "o1.v0": ("a" * 12, "clamp(5, 0, 3)", "returns 3"),
        "o2.v0": ("b" * 12, "inspect.getsource(clamp)", "returns 'def clamp(...'"),
        "o3.v0": ("c" * 12, "parent.method_calls", "returns [call.a(), call.b()]"),
    }
)


def _candidate(clamp_tag: str) -> RunResult:
    return _run(
        {
            "o1.v0": (clamp_tag, "clamp(5, 0, 3)", "returns 3"),
            "o2.v0": ("d" * 12, "inspect.getsource(clamp)", "returns 'def clamp(...) # x'"),
            "o3.v0": ("e" * 12, "parent.method_calls", "returns [call.b(), call.a()]"),
        }
    )


def test_differences_skip_introspection_only_when_asked() -> None:
    rewrite = _candidate("a" * 12)
    compared, found = replay.differences([TARGET], [GOLD, GOLD], rewrite)
    assert compared == 3
    assert {d.expression for d in found} == {"inspect.getsource(clamp)", "parent.method_calls"}
    compared, found = replay.differences([TARGET], [GOLD, GOLD], rewrite, skip_introspection=True)
    assert (compared, found) == (1, [])


def test_compare_probes_shows_a_rewrite_equal_but_still_catches_behaviour() -> None:
    equal = compare_probes(
        [], [GOLD, GOLD], _candidate("a" * 12), [TARGET], skip_introspection=True
    )
    assert equal.evidence is None and equal.compared == 1
    assert "2 reading the code's text, locals or mock calls left out" in equal.note
    # Without the option (confirming an exploit) the source and call-record differences count.
    assert compare_probes([], [GOLD, GOLD], _candidate("a" * 12), [TARGET]).evidence is not None
    # A difference in what the code computes is evidence either way.
    wrong = compare_probes(
        [], [GOLD, GOLD], _candidate("f" * 12), [TARGET], skip_introspection=True
    )
    assert wrong.evidence is not None and "clamp(5, 0, 3)" in wrong.evidence
    assert [d.expression for d in wrong.differences] == ["clamp(5, 0, 3)"]
