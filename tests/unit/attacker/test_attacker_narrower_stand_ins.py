"""Narrower stand-ins: gold's call or choice replaced by one that covers less. Each must behave
like gold on the example in front of it and differ beside it, and paths get probe inputs that
spell the same place another way, so the difference can be seen."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

from hackaudit.attacker.domain.confirm.probe_inputs import variants
from hackaudit.attacker.domain.generate.strategies import mutation
from hackaudit.shared.contracts import Task


def _texts(line: str) -> dict[str, str]:
    return {m.detail: m.text for m in mutation.line_mutants([line], 0, "narrower")}


def _as_function(line: str, arg: str) -> Any:
    namespace: dict[str, Any] = {"os": os, "re": re}
    exec(compile(f"def f({arg}):\n{line}\n    return {arg}\n", "<mutant>", "exec"), namespace)
    return namespace["f"]


def test_a_normalised_path_becomes_a_leading_dot_slash_cut() -> None:
    gold_line = "    element = os.path.normpath(element)"
    found = _texts(gold_line)
    cut = found["os.path.normpath: only a leading ./ removed"]
    gold, wrong = _as_function(gold_line, "element"), _as_function(cut, "element")
    # the example: the same
    assert wrong("./sub/file.py") == gold("./sub/file.py") == "sub/file.py"
    # the same place spelled with a second `./`: only gold normalises it
    assert gold("././sub/file.py") == "sub/file.py" != wrong("././sub/file.py")


def test_path_like_probe_inputs_come_first_and_name_the_same_place() -> None:
    assert variants(".")[:2] == ["./.", "./"]
    assert variants("sub/file.py")[:3] == ["./sub/file.py", "sub/file.py/", "sub//file.py"]
    for value in variants("sub/file.py")[:3]:
        assert os.path.normpath(value) == "sub/file.py"
    # not path-like: no such variants
    assert not any(v.startswith("./") for v in variants("hello world"))


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "    return isinstance(x, (int, float))",
            {"    return isinstance(x, int)", "    return isinstance(x, float)"},
        ),
        ("    return s in ('a', 'b')", {"    return s in ('b',)", "    return s in ('a',)"}),
        ("    return re.fullmatch(p, s)", {"    return re.match(p, s)"}),
        ("    m = pattern.search(text)", {"    m = pattern.match(text)"}),
        (
            "    out = sorted(xs, key=len, reverse=True)",
            {"    out = sorted(xs, reverse=True)", "    out = sorted(xs, key=len)"},
        ),
        ("    name = name.casefold()", {"    name = name.casefold()".replace("casefold", "lower")}),
        ("    cell = cell.strip()", {"    cell = cell.rstrip()"}),
        ("    return x + 1", set()),
        ("    return os.path.normpath(a + b)", set()),  # the argument would be evaluated twice
    ],
)
def test_each_stand_in_covers_less_than_gold(line: str, expected: set[str]) -> None:
    assert set(_texts(line).values()) == expected


def test_stand_ins_are_mutants_of_a_one_line_gold_patch() -> None:
    gold = (
        "diff --git a/pkg/paths.py b/pkg/paths.py\n"
        "--- a/pkg/paths.py\n"
        "+++ b/pkg/paths.py\n"
        "@@ -1,3 +1,4 @@\n"
        " def ignored(element, patterns):\n"
        "+    element = os.path.normpath(element)\n"
        "     return any(p.match(element) for p in patterns)\n"
        " \n"
    )
    task = Task.model_validate(
        {
            "instance_id": "paths-1",
            "repo": "o/paths",
            "base_commit": "0" * 40,
            "patch": gold,
            "test_patch": "",
            "FAIL_TO_PASS": ["tests/test_paths.py::test_ignored"],
        }
    )
    details = [c.provenance.detail or "" for c in mutation.mutants(task)]
    assert any("only a leading ./ removed" in d for d in details)


def test_a_line_continuing_a_statement_gets_stand_ins_for_what_it_holds() -> None:
    # gold's `return (groupby .apply(data.dropna(subset=[...]), f))` spread over lines
    line = '            .apply(data.dropna(subset=["x", "y"]), self._fit_predict)'
    found = _texts(line)
    assert found["subset= dropped"] == "            .apply(data.dropna(), self._fit_predict)"
    left_out = "left out of the argument's list"
    assert (
        found[f'"x" {left_out}']
        == '            .apply(data.dropna(subset=["y"]), self._fit_predict)'
    )
    assert (
        found[f'"y" {left_out}']
        == '            .apply(data.dropna(subset=["x"]), self._fit_predict)'
    )


def test_an_argument_line_gets_its_list_narrowed_and_nothing_outside_it() -> None:
    found = _texts('        f(x), columns=("a", "b"),')
    assert set(found.values()) >= {'        f(x), columns=("b",),', '        f(x), columns=("a",),'}
    assert all(text.startswith("        f(x), ") for text in found.values()), found
    assert _texts("        )") == {}


def test_a_list_of_names_or_of_one_item_is_not_narrowed() -> None:
    assert not any("argument's list" in d for d in _texts("    f(x, keys=[a, b])"))
    assert not any("argument's list" in d for d in _texts('    f(x, keys=["a"])'))


SPREAD_GOLD = "\n".join(
    [
        "diff --git a/pkg/stats.py b/pkg/stats.py",
        "--- a/pkg/stats.py",
        "+++ b/pkg/stats.py",
        "@@ -3,4 +3,7 @@ class Fit:",
        "     def __call__(self, data, groupby):",
        " ",
        "-        return groupby.apply(data, self._fit)",
        "+        return (",
        "+            groupby",
        '+            .apply(data.dropna(subset=["x", "y"]), self._fit)',
        "+        )",
        " ",
        "",
    ]
)


def test_gold_spread_over_lines_gets_its_narrowed_calls_as_mutants() -> None:
    task = Task(
        instance_id="spread-1", repo="x/y", base_commit="HEAD", patch=SPREAD_GOLD,
        test_patch="", FAIL_TO_PASS=["t"],
    )  # fmt: skip
    produced = {c.provenance.detail.split(" in ")[0]: c.diff for c in mutation.mutants(task)}
    assert "+            .apply(data.dropna(), self._fit)" in produced["narrower: subset= dropped"]
    narrowed = produced['narrower: "x" left out of the argument\'s list']
    assert '+            .apply(data.dropna(subset=["y"]), self._fit)' in narrowed
    assert "+        return (" in narrowed  # the rest of gold's statement is kept
