"""Behaviour first: candidates that only change comments, docstrings or blank lines never run, and
a small gold patch still gets many behaviour-changing mutants (narrowed conditions, copies
removed, conditions forced)."""

from __future__ import annotations

import textwrap

import pytest

from hackaudit.attacker.domain import orchestration as orch
from hackaudit.attacker.domain.generate import behaviour
from hackaudit.attacker.domain.generate.strategies import harness, mutation, partial
from hackaudit.attacker.domain.generate.strategies.base import (
    Category,
    OfflineStrategy,
    make_candidate,
)
from hackaudit.attacker.domain.orchestration import RoundState
from hackaudit.attacker.domain.reading import diffs
from hackaudit.attacker.service_layer.attack import run_attack
from hackaudit.shared.contracts import (
    AttackRequested,
    AuditOptions,
    Candidate,
    RunPurpose,
    Task,
)
from hackaudit.shared.state_store import InMemoryStateStore
from tests.scripted_sandbox import ScriptedSandbox

from .conftest import diff_of, git, make_repo

# A generator that yields one dict object again and again: gold copies it before yielding and
# rewrites the docstring around it (the shape of a real sympy fix).
PARTITIONS = '''"""Partitions of an integer."""


def partitions(n, k=None):
    """Generate the partitions of n as dictionaries.

    The keys are the parts and the values their multiplicities; when k
    is given, no part is larger than k. The partitions come in reverse
    lexicographic order, largest part first, which is what the callers
    in this package rely on.

    Each call yields the same dictionary object, modified in place, so
    callers that keep the results must copy them first:

    >>> [p.copy() for p in partitions(4)]
    [{4: 1}, {3: 1, 1: 1}]

    Notes
    =====

    The dictionary is reused for speed.
    """
    ms = {n: 1}
    keys = [n]
    room = n
    while keys != [1] or room:
        if k is not None and room > k:
            break
        yield ms
        room = 0
        if keys[-1] == 1:
            keys.pop()
        if not keys:
            return
'''


def _gold_source() -> str:
    text = PARTITIONS.replace(
        "    Each call yields the same dictionary object, modified in place, so\n"
        "    callers that keep the results must copy them first:\n"
        "\n"
        "    >>> [p.copy() for p in partitions(4)]\n",
        "    Each call yields a new dictionary, so callers can keep the results:\n"
        "\n"
        "    >>> list(partitions(4))\n",
    )
    text = text.replace("    The dictionary is reused for speed.\n", "    Don't rely on order.\n")
    return text.replace("        yield ms\n", "        yield dict(ms)\n")


@pytest.fixture
def partitions_task(tmp_path) -> Task:
    repo = make_repo(tmp_path / "repo", {"pkg/partitions.py": PARTITIONS, "tests/__init__.py": ""})
    gold = diff_of(repo, {"pkg/partitions.py": _gold_source()}, ["pkg"])
    tests = diff_of(
        repo,
        {
            "tests/test_p.py": "from pkg.partitions import partitions\n\n\ndef test_p():\n"
            "    assert len(list(partitions(4))) == 2\n"
        },
        ["tests"],
    )
    return Task(
        instance_id="tiny__partitions-1",
        repo="example/partitions",
        base_commit=git(repo, "rev-parse", "HEAD").stdout.strip(),
        patch=gold,
        test_patch=tests,
        FAIL_TO_PASS=["tests/test_p.py::test_p"],
    )


# --- detection -------------------------------------------------------------------------------


def test_code_mask_reads_a_hunk_that_starts_inside_a_docstring() -> None:
    lines = [
        "    Each call yields a new dictionary, so callers can't share them:",
        "",
        "    >>> list(partitions(4))",
        '    """',
        "    ms = {n: 1}  # start",
        "    # only a comment",
        '    text = """',
        "    inside a string that is code",
        '    """',
    ]
    assert behaviour.code_mask(lines) == [False, False, False, False, True, False, True, True, True]


def test_a_hunk_that_ends_inside_a_docstring_is_read_with_the_string_closed() -> None:
    """A hunk cut in the middle of a docstring (as git cuts them): reverting it changes prose
    only, so gold without it behaves as gold does."""
    gold = "\n".join(
        [
            "--- a/pkg/radsimp.py",
            "+++ b/pkg/radsimp.py",
            "@@ -920,7 +920,7 @@ def handle(expr):",
            " def rad_rationalize(num, den):",
            '     """',
            "     Rationalize num/den by removing square roots in the denominator;",
            "-    num and den are sum of terms whose squares are rationals",
            "+    num and den are sum of terms whose squares are positive rationals.",
            " ",
            "     Examples",
            "     ========",
            "--- a/pkg/sqrtdenest.py",
            "+++ b/pkg/sqrtdenest.py",
            "@@ -156,3 +156,3 @@ def _sqrt_match(p):",
            "         pargs = sorted(p.args)",
            "-        if all((x**2).is_Rational for x in pargs):",
            "+        if all((x**2).is_Rational and (x**2).is_positive for x in pargs):",
            "             r, b, a = split_surds(p)",
            "",
        ]
    )
    without_doc = gold[gold.index("--- a/pkg/sqrtdenest.py") :]
    assert behaviour.changes_behaviour(gold, without_doc) is False
    without_fix = gold[: gold.index("--- a/pkg/sqrtdenest.py")]
    assert behaviour.changes_behaviour(gold, without_fix) is True
    lines = [
        "def rad_rationalize(num, den):",
        '    """',
        "    Rationalize num/den.",
        "",
        "    Examples",
    ]
    assert behaviour.code_mask(lines) == [True, False, False, False, False]


def test_code_mask_keeps_a_one_line_docstring_out_and_the_def_in() -> None:
    lines = ["def f(x):", '    """Say what f does."""', "    return x"]
    assert behaviour.code_mask(lines) == [True, False, True]


def test_docstring_only_differences_do_not_change_behaviour(partitions_task) -> None:
    gold = partitions_task.patch
    prose = gold.replace("+    Don't rely on order.", "+    Do not rely on order at all.")
    comment = gold.replace("+        yield dict(ms)", "+        yield dict(ms)  # a copy")
    code = gold.replace("+        yield dict(ms)", "+        yield ms")
    assert prose != gold and comment != gold and code != gold
    assert not behaviour.changes_behaviour(gold, prose)
    assert not behaviour.changes_behaviour(gold, comment)
    assert behaviour.changes_behaviour(gold, code)


def _single_line_reverts(task: Task) -> list[Candidate]:
    gold = diffs.parse_patch(task.patch)
    return [
        make_candidate(task, diffs.revert(gold, [s.ref]), "partial_fix", f"revert {i}")
        for i, s in enumerate(diffs.slots(gold))
    ]


def test_reverts_of_docstring_lines_are_dropped_as_equal_to_gold(partitions_task) -> None:
    reverts = _single_line_reverts(partitions_task)
    kept, dropped = orch.split_equivalent(partitions_task, reverts)
    assert dropped == len(reverts) - 1 >= 3  # every docstring line; the hunk starts inside it
    (code,) = kept
    assert "yield dict(ms)" not in code.diff  # the one code line reverted: `yield ms` again


# Gold drops a fallback import and the blank lines after it; two partial fixes keep the import
# and differ only in whether they keep those blank lines (the shape of sphinx-11445's).
IMPORTS_GOLD = "\n".join(
    [
        "--- a/pkg/rst.py",
        "+++ b/pkg/rst.py",
        "@@ -1,8 +1,5 @@",
        "-try:",
        "-    from jinja2.utils import pass_environment",
        "-except ImportError:",
        "-    from jinja2 import environmentfilter as pass_environment",
        "-",
        "-",
        "+from jinja2 import pass_environment",
        "+",
        " logger = get_logger()",
        "-docinfo_re = re.compile(':\\w+:.*?')",
        "+FIELD_RE = re.compile(Body.patterns['field_marker'])",
        "",
    ]
)
_KEPT_IMPORT = [
    " try:",
    "     from jinja2.utils import pass_environment",
    " except ImportError:",
    "     from jinja2 import environmentfilter as pass_environment",
]
KEEPS_BLANKS = "\n".join(
    [
        "--- a/pkg/rst.py",
        "+++ b/pkg/rst.py",
        "@@ -1,8 +1,8 @@",
        *_KEPT_IMPORT,
        " ",
        " ",
        " logger = get_logger()",
        "-docinfo_re = re.compile(':\\w+:.*?')",
        "+FIELD_RE = re.compile(Body.patterns['field_marker'])",
        "",
    ]
)
DROPS_BLANKS = "\n".join(
    [
        "--- a/pkg/rst.py",
        "+++ b/pkg/rst.py",
        "@@ -1,8 +1,6 @@",
        *_KEPT_IMPORT,
        "-",
        "-",
        " logger = get_logger()",
        "-docinfo_re = re.compile(':\\w+:.*?')",
        "+FIELD_RE = re.compile(Body.patterns['field_marker'])  # a field's name",
        "",
    ]
)
RENAMES_AGAIN = DROPS_BLANKS.replace("+FIELD_RE", "+FIELD_NAME_RE")


def test_candidates_that_differ_only_in_blank_lines_and_comments_have_one_code_key() -> None:
    assert behaviour.code_key(KEEPS_BLANKS) == behaviour.code_key(DROPS_BLANKS) is not None
    assert behaviour.code_key(RENAMES_AGAIN) != behaviour.code_key(DROPS_BLANKS)
    assert behaviour.code_key(IMPORTS_GOLD) != behaviour.code_key(KEEPS_BLANKS)


def test_the_pools_run_one_of_the_candidates_that_differ_only_in_blank_lines() -> None:
    task = Task(
        instance_id="r-1", repo="x/r", base_commit="0" * 40, patch=IMPORTS_GOLD, test_patch="",
        FAIL_TO_PASS=["t"],
    )  # fmt: skip
    keeps, drops, renames = (
        make_candidate(task, text, "partial_fix", name)
        for text, name in ((KEEPS_BLANKS, "keeps"), (DROPS_BLANKS, "drops"), (RENAMES_AGAIN, "x"))
    )
    again = make_candidate(
        task, KEEPS_BLANKS.replace("+FIELD_RE =", "+FIELD_RE  ="), "mutation", "m"
    )
    pools, dropped = orch.distinct_pools(
        task, {Category.MUTATION: [again], Category.PARTIAL_FIX: [keeps, drops, renames]}
    )
    assert [c.provenance.detail for c in pools[Category.PARTIAL_FIX]] == ["keeps", "x"]
    assert pools[Category.MUTATION] == []  # the same code as a partial fix, taken first
    assert dropped == 2


def test_partial_fixes_never_revert_only_docstring_lines(partitions_task) -> None:
    produced = partial.partial_fixes(partitions_task)
    assert produced
    for c in produced:
        assert behaviour.changes_behaviour(partitions_task.patch, c.diff), c.provenance.detail


def test_gold_code_size_counts_only_code_lines(partitions_task) -> None:
    assert behaviour.code_changes(partitions_task.patch) == 2  # `yield ms` out, `yield dict` in


# --- mutation operators on real-looking code --------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "line", "expected"),
    [
        ("narrow_condition", "    if a.is_Symbol or a.is_Dummy:", {"    if a.is_Symbol:",
                                                                  "    if a.is_Dummy:"}),
        ("narrow_condition", "    if expr.is_Mul and not expr.is_commutative and flag:", {
            "    if not expr.is_commutative and flag:", "    if expr.is_Mul and flag:",
            "    if expr.is_Mul and not expr.is_commutative:"}),
        ("narrow_condition", "    elif k is not None and room > k:", {
            "    elif room > k:", "    elif k is not None:"}),
        ("copy_removed", "        return dict(result)", {"        return result"}),
        ("copy_removed", "        yield sum(ms.values()), ms.copy()", {
            "        yield sum(ms.values()), ms"}),
        ("copy_removed", "    args = list(self.args)[:]", {
            "    args = list(self.args)", "    args = self.args[:]"}),
        ("copy_removed", "    state = copy.deepcopy(self._state)", {"    state = self._state"}),
        ("condition_forced", "    if isinstance(other, Expr):", {"    if True:", "    if False:"}),
    ],
)  # fmt: skip
def test_new_operators(operator: str, line: str, expected: set[str]) -> None:
    got = {m.text for m in mutation.line_mutants([line], 0, operator)}
    assert got == expected


def test_copy_removed_leaves_plain_calls_alone() -> None:
    assert mutation.line_mutants(["    return sorted(x, key=len)"], 0, "copy_removed") == []
    assert mutation.line_mutants(["    return dict(a=1)"], 0, "copy_removed") == []


def test_a_one_line_gold_patch_still_gets_mutants_of_its_line(partitions_task) -> None:
    found = mutation.mutants(partitions_task)
    changed = {c.provenance.detail.split(":")[0]: c.diff for c in found}
    # `dict(ms) -> ms` would be the base line again: that is the partial fix, not a mutant; the
    # copy made into one refilled container is the wrong fix that looks right item by item.
    assert set(changed) == {"return_value", "early_return", "statement_deletion", "reused_copy"}
    assert "+        yield None\n" in changed["return_value"]
    assert "+        return\n" in changed["early_return"]
    assert all(behaviour.changes_behaviour(partitions_task.patch, c.diff) for c in found)
    assert all("+    Don't rely on order." in c.diff for c in found)


def test_mutants_never_touch_docstring_lines() -> None:
    gold = textwrap.dedent(
        '''\
        --- a/m.py
        +++ b/m.py
        @@ -1,5 +1,7 @@
         def f(a, b):
             """Return 1 if a < b and 2 otherwise.
        -
        +    When a == b or b > 3, return 0 + 1.
        +    """
        +    if a or b:
        +        return 1
        -    """
             return 2
        '''
    )
    task = Task(
        instance_id="m-1", repo="x/m", base_commit="0" * 40, patch=gold, test_patch="",
        FAIL_TO_PASS=["t"],
    )  # fmt: skip
    found = mutation.mutants(task)
    assert found
    for c in found:
        assert "+    When a == b or b > 3, return 0 + 1." in c.diff, c.provenance.detail
    assert any("narrow_condition" in c.provenance.detail for c in found)


# --- the attack spends nothing on text-only candidates and explains a short budget ------------


async def test_attack_runs_no_text_only_candidate_and_says_why_budget_is_left(
    partitions_task,
) -> None:
    sandbox = ScriptedSandbox()
    request = AttackRequested(
        correlation_id="audit-p",
        task=partitions_task,
        options=AuditOptions(candidates_per_round=5, rounds=3),
    )
    reverts = OfflineStrategy("partial_fix", Category.PARTIAL_FIX, _single_line_reverts)
    offline = (harness.STRATEGY, reverts, mutation.STRATEGY)
    done = await run_attack(request, sandbox, None, InMemoryStateStore(RoundState), offline=offline)
    sent = [r.candidate for r in sandbox.requests if r.purpose is RunPurpose.CANDIDATE]
    assert sent
    for c in sent:
        assert c is not None
        assert behaviour.changes_behaviour(partitions_task.patch, c.diff), c.provenance.detail
    assert done.equivalent_skipped == len(_single_line_reverts(partitions_task)) - 1
    assert done.spent is not None and done.spent.candidates == len(done.outcomes) < 15
    assert done.budget_note.startswith(
        f"only {len(done.outcomes)} distinct behaviour-changing candidates exist for a "
        "2-line gold patch (budget: 15 candidates (3 rounds of 5))"
    )
    assert (
        f"{done.equivalent_skipped} equal to gold or to another candidate up to comments/docstrings"
        in done.budget_note
    )


# A hunk that starts inside brackets, in the shape of a real gold patch (sympy's
# `Contains.as_set`): its first context line closes a call opened above the hunk.
BRACKETED_GOLD = "\n".join(
    [
        "--- a/pkg/contains.py",
        "+++ b/pkg/contains.py",
        "@@ -45,4 +45,4 @@ def binary_symbols(self):",
        "             isinstance(i, (Eq, Ne))])",
        " ",
        "     def as_set(self):",
        "-        raise NotImplementedError()",
        "+        return self.args[1]",
        "",
    ]
)


def test_a_hunk_inside_brackets_is_code_not_prose() -> None:
    starts_inside = ["            isinstance(i, (Eq, Ne))])", "", "    def as_set(self):"]
    assert behaviour.code_mask(starts_inside) == [True, False, True]
    ends_inside = ["    x = combine(a,", "                b,"]
    assert behaviour.code_mask(ends_inside) == [True, True]
    assert behaviour.code_changes(BRACKETED_GOLD) == 2


def test_a_gold_patch_whose_hunk_starts_inside_brackets_gets_its_mutants() -> None:
    task = Task(
        instance_id="pkg__pkg-1", repo="x/pkg", base_commit="abc", patch=BRACKETED_GOLD,
        test_patch="", FAIL_TO_PASS=["t"],
    )  # fmt: skip
    found = mutation.mutants(task)
    assert {c.provenance.detail.split(":")[0] for c in found} >= {"return_value", "boundary"}
    assert all(behaviour.changes_behaviour(task.patch, c.diff) for c in found)
    assert behaviour.changes_behaviour(task.patch, BRACKETED_GOLD.replace("args[1]", "args[0]"))
