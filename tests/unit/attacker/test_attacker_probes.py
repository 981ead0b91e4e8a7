"""Differential probes: the inputs they try, the file they run, how their outcomes are compared."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hackaudit.attacker.domain.confirm import probes
from hackaudit.attacker.domain.confirm.probe_inputs import input_sets, string_variants, variants
from hackaudit.attacker.domain.confirm.probe_source import LOADED
from hackaudit.attacker.domain.confirm.probes import Output, ProbeCase
from hackaudit.shared.contracts import RunResult, RunStatus, TestStatus

# --- inputs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("literal", "wanted"),
    [
        ("^0.4.1", ["^0.0.1", "^0.4.0", "^0.5.1", "^0.4.1-rc.1", "^0.4.1+b.1"]),  # zero minor
        ("2024-03-15/P1M", ["2024-12-15/P1M", "2024-03-31/P1M", "2024-03-15/P2M"]),  # month end
        ("1.2.3-rc.1", ["1.2.3", "1.2.3-rc.0", "1.2.3-rc.2"]),  # pre-release dropped, moved
        ("http://h:80/a", ["HTTP://H:80/A", "http://h:81/a", "http://h:80/a/a", ""]),
        ("Abc", ["", "ABC", "abc", "Ab", "bc", "Abcc", " Abc "]),
    ],
)
def test_string_variants_reach_the_edges_beside_a_literal(literal: str, wanted: list[str]) -> None:
    found = string_variants(literal)
    for value in wanted:
        assert value in found
    assert found == string_variants(literal)  # deterministic


@pytest.mark.parametrize(
    ("value", "wanted"),
    [
        (3, [0, 4, 2, -3]),
        (True, [False]),
        ([1, 2], [[], [1], [2, 1], [1, 2, 2]]),
        # the other sequence type (a fix for `(list, tuple)` beside one for `list` alone), and
        # one item where a sequence was passed
        ([1, 2], [(1, 2), 1]),
        (("a", "b"), [["a", "b"], "a", ()]),
        ({"a": 1}, [{}]),
        (None, []),
    ],
)
def test_variants_of_other_values(value: object, wanted: list[object]) -> None:
    found = variants(value)
    for v in wanted:
        assert v in found
    assert value not in found or isinstance(value, bool)


def test_input_sets_vary_every_argument_before_a_second_variant_of_any() -> None:
    literal = [(("0.2.3", "^0.2.3"), ()), (("^0.4.1",), (("strict", True),))]
    sets = input_sets(literal, limit=8)
    assert sets[:2] == literal
    firsts = sets[2:7]
    assert (("0.0.3", "^0.2.3"), ()) in firsts  # first argument of the first call
    assert (("0.2.3", "^0.0.3"), ()) in firsts  # second argument
    assert (("^0.0.1",), (("strict", True),)) in firsts  # first argument of the second call
    assert (("^0.4.1",), (("strict", False),)) in firsts  # a keyword argument
    assert len(input_sets(literal, limit=3)) == 3


# --- planning ----------------------------------------------------------------------------------


def test_plan_probes_changed_functions_methods_and_called_names(tiny) -> None:
    cases = probes.plan(tiny.task)
    calls = [(c.function, c.args) for c in cases]
    assert ("is_even", (4,)) in calls and ("is_even", (None,)) in calls
    assert ("is_even", (5,)) in calls  # beside a test literal
    assert ("mean", ([],)) in calls and ("mean", ("",)) in calls  # generic values
    methods = [c for c in cases if c.function == "Box.area"]
    assert methods and methods[0].init == ((3,), ()) and methods[0].args == ()
    assert methods[0].describe() == "Box(3).area()"
    assert ("Box", (3,)) in calls  # the tests call the class: its instances are compared
    assert all(c.strict for c in cases)
    assert len(cases) == len({c.row() for c in cases})
    assert len(probes.plan(tiny.task, max_cases=10)) == 10


def test_private_helpers_are_not_strict(tiny) -> None:
    task = tiny.task.model_copy(update={"patch": tiny.task.patch.replace("is_even", "_is_even")})
    helper = [c for c in probes.plan(task) if c.function == "_is_even"]
    assert helper and not any(c.strict for c in helper)


# --- the probe file, run for real --------------------------------------------------------------


def _names(repo: Path, cases: list[ProbeCase], seed: str) -> list[str]:
    (repo / probes.PROBE_PATH).write_text(probes.source(cases))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", probes.PROBE_PATH],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": seed, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        check=False,
    )
    return [
        line.split(" ", 1)[1] for line in done.stdout.splitlines() if line.startswith("PASSED ")
    ]


LIBRARY = """
import random


class Plain:
    def __init__(self, items):
        self.items = set(items)
        self.hidden = object


class Echo:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"Echo({self.text!r})"

    def __str__(self):
        return self.text.upper()


def plain(items):
    return Plain(items)


def noisy():
    return random.random()


def boom(x):
    return 1 / x


def tokens(text):
    for word in text.split():
        yield word
"""


def test_probe_outcomes_are_stable_and_named_in_the_report(tmp_path: Path) -> None:
    (tmp_path / "lib_probe_target.py").write_text(LIBRARY)
    mods = ("lib_probe_target",)
    cases = [
        ProbeCase(mods, "plain", (["b", "a", "c"],)),
        ProbeCase(mods, "noisy", ()),
        ProbeCase(mods, "boom", (0,)),
        ProbeCase(mods, "tokens", ("x y",)),
        ProbeCase(mods, "Echo", ("hi",)),
        ProbeCase(mods, "missing", ()),
        ProbeCase(mods, "Echo.__str__", (), init=(("yo",), ())),
    ]
    first, second = _names(tmp_path, cases, "1"), _names(tmp_path, cases, "2")
    assert sorted(first) == sorted(second)  # sets sorted, no addresses, no hash seed effect
    result = RunResult(status=RunStatus.COMPLETED, tests=dict.fromkeys(first, TestStatus.PASSED))
    out = probes.outputs(result)
    assert f"{probes.PROBE_PATH}::HackauditProbe::{LOADED}" in first
    assert out[0].head.startswith("returns_Plain_hidden_type_object_items_set_a_b_c")
    assert out[1].tag == "unstable"
    assert out[2].head == "raises_ZeroDivisionError" and out[2].raises
    assert out[3].head == "returns_generator_x_y"
    assert out[4].head == "returns_Echo_Echo_hi_HI"
    assert out[5].head == "unresolved"
    assert out[6].head.startswith("returns_YO_self_Echo_Echo_yo_YO")


# --- comparing outcomes ------------------------------------------------------------------------


def _result(outcomes: dict[int, tuple[str, str]], status: RunStatus = RunStatus.COMPLETED):
    names = [
        f"{probes.PROBE_PATH}::HackauditProbe::test_case{i}_{t}_{h}"
        for i, (t, h) in outcomes.items()
    ]
    return RunResult(status=status, tests=dict.fromkeys(names, TestStatus.PASSED))


A, B, C = "a" * 12, "b" * 12, "c" * 12


def test_reference_keeps_what_every_gold_run_agrees_on() -> None:
    runs = [
        _result(
            {0: (A, "returns_1"), 1: (B, "returns_2"), 2: ("unstable", ""), 3: (C, "unresolved")}
        ),
        _result(
            {0: (A, "returns_1"), 1: (C, "returns_3"), 2: ("unstable", ""), 3: (C, "unresolved")}
        ),
    ]
    assert probes.reference(runs) == {0: Output(A, "returns_1")}
    assert probes.reference([runs[0], _result({}, RunStatus.TIMEOUT)]) == {}


@pytest.mark.parametrize(
    ("gold", "candidate", "strict", "differs"),
    [
        ((A, "returns_1"), (B, "returns_2"), True, True),
        ((A, "returns_1"), (A, "returns_1"), True, False),
        ((A, "returns_1"), ("timeout", ""), True, False),  # a slow candidate is no evidence
        ((A, "returns_1"), ("unstable", ""), True, False),
        ((A, "raises_TypeError"), (B, "returns_2"), True, True),
        ((A, "raises_TypeError"), (B, "returns_2"), False, False),  # outside a helper's domain
        ((A, "returns_1"), (B, "raises_TypeError"), False, True),
    ],
)
def test_differences(gold, candidate, strict, differs) -> None:
    cases = [ProbeCase(("m",), "f", (1,), strict=strict)]
    found = probes.differences(cases, {0: Output(*gold)}, probes.outputs(_result({0: candidate})))
    assert bool(found) is differs


def test_a_private_helper_letting_through_what_gold_deliberately_raises_is_evidence() -> None:
    from hackaudit.attacker.domain.confirm.probes import (
        Output,
        ProbeCase,
        differences,
        raised_by_gold,
    )

    deliberate = raised_by_gold(
        "+    if len(set(c)) != len(c):\n+        raise ValueError('repeated')\n"
    )
    assert deliberate == frozenset({"ValueError"})
    case = ProbeCase(
        ("m",), "_from_cycles", ([[0, 1], [1, 2]],), strict=False, deliberate=deliberate
    )
    passes = Output(tag="aaa", head="returns_Perm")
    by_design = {0: Output(tag="bbb", head="raises_ValueError")}
    by_accident = {0: Output(tag="ccc", head="raises_TypeError")}
    assert [i for i, _, _ in differences([case], by_design, {0: passes})] == [0]
    assert differences([case], by_accident, {0: passes}) == []
