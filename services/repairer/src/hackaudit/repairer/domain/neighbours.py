"""Inputs beside the evidence: where a regression test should pin gold's behaviour too.

A difference found by the attack is one input on which one exploit differs from gold. A test that
asserts gold's outcome on that input alone blocks that exploit, and nothing else: a wrong patch
the attack never produced usually goes wrong on a neighbouring input — the other scheme the issue
names, the leading-zero spelling it asks to compare numerically, the other value of a flag — or
on a call the graded tests already make but never check. So besides the exact input, the offline
augmenter captures gold on two kinds of neighbour and asserts every stable one in the same test:

- *vocabulary variants* of a difference's expression: in each literal argument, one token that the
  reference fix itself spells (a string or number literal on a line gold adds) is replaced by
  another token of the same kind (letters for letters, digits for digits) that gold spells or
  that the issue shows in its code; a boolean argument is flipped. These are the inputs the issue
  is about, chosen without knowing any wrong patch;
- *unchecked calls*: a call a graded test makes as a statement of its own and whose value it never
  looks at (a test that only checks that nothing raises) — gold's value there is pinned.

Gold's value on each neighbour is captured like the exact input's (several runs, stable only);
the gold gate and do-no-harm on the correct variants still decide whether the widened test is
kept, and when it is rejected the augmenter falls back to the exact input alone. Every generator
here is pure, deterministic and bounded.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hackaudit.repairer.domain import test_patch as tp
from hackaudit.repairer.domain.placement import function_of_test_id
from hackaudit.shared.anatomy import Patch
from hackaudit.shared.contracts import ProbeDifference, Task

MAX_VARIANTS = 12  # per expression
MAX_UNCHECKED = 12  # per task
_TOKEN = re.compile(r"[A-Za-z]+|\d+")
_DIGITS = re.compile(r"\d+")
_STRING = re.compile(r"""(["'])((?:\\.|(?!\1).)*)\1""")
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Vocabulary:
    """Tokens a variant may replace (gold's own literals) and what they may become."""

    replaceable: frozenset[str]
    letters: tuple[str, ...]  # replacements made of letters, gold's first
    digits: tuple[str, ...]  # replacements made of digits, gold's first


def _text_of(match: re.Match[str]) -> str:
    """A string literal's value (escapes decoded when it is a plain literal)."""
    try:
        value = ast.literal_eval(match.group())
    except (ValueError, SyntaxError):
        return match.group(2)
    return value if isinstance(value, str) else match.group(2)


def _gold_tokens(patch: Patch) -> list[str]:
    """Tokens of the string and number literals on the lines the reference fix adds (comments,
    docstrings and the words of messages are prose, not values: they are skipped)."""
    out: list[str] = []
    in_docstring = False
    for line in (text for f in patch.files for text in f.added_lines):
        quotes = line.count('"""') + line.count("'''")
        if in_docstring or quotes:
            in_docstring ^= quotes % 2 == 1
            continue
        code = line.split("#", 1)[0]
        for match in _STRING.finditer(code):
            text = _text_of(match)
            # A literal with blanks is a message: its digits may be values, its words are prose.
            out += _DIGITS.findall(text) if re.search(r"\s", text) else _TOKEN.findall(text)
        out += _NUMBER.findall(_STRING.sub("", code))
    return out


def _issue_tokens(text: str) -> list[str]:
    """Tokens of the code the issue shows: inline code spans and fenced blocks."""
    out: list[str] = []
    for block in _FENCE.findall(text):
        for match in _STRING.finditer(block):
            out += _TOKEN.findall(_text_of(match))
    for span in _CODE_SPAN.findall(_FENCE.sub("", text)):
        out += _TOKEN.findall(span)
    return out


def vocabulary(task: Task) -> Vocabulary:
    gold = list(dict.fromkeys(_gold_tokens(task.gold_diff.applied())))
    both = list(dict.fromkeys([*gold, *_issue_tokens(task.problem_statement)]))
    return Vocabulary(
        replaceable=frozenset(t for t in gold if len(t) > 1 or t.isdigit()),
        letters=tuple(t for t in both if t.isalpha() and len(t) > 1),
        digits=tuple(t for t in both if t.isdigit()),
    )


def _string_variants(text: str, vocab: Vocabulary) -> Iterator[str]:
    """Letters match whatever their case (an input may spell `HTTP` where gold spells `http`),
    and a replacement takes the case of the token it replaces."""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token not in vocab.replaceable and token.lower() not in vocab.replaceable:
            continue
        pool = vocab.digits if token.isdigit() else vocab.letters
        for other in pool:
            spelled = other.upper() if token.isupper() and len(token) > 1 else other
            if other.lower() != token.lower():
                yield text[: match.start()] + spelled + text[match.end() :]


def _constant_variants(node: ast.Constant, vocab: Vocabulary) -> Iterator[str | int | bool]:
    value = node.value
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, str):
        yield from _string_variants(value, vocab)
    elif isinstance(value, int) and str(value) in vocab.replaceable:
        for other in vocab.digits:
            if other != str(value) and not (other.startswith("0") and other != "0"):
                yield int(other)


def variants(expression: str, vocab: Vocabulary, limit: int = MAX_VARIANTS) -> list[str]:
    """The expression with one literal argument changed (see the module docstring), at most
    `limit`, in a fixed order; '' for an expression that is not a call."""
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError:
        return []
    if not isinstance(tree.body, ast.Call):
        return []
    constants = [n for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    out: list[str] = []
    for node in constants:
        original = node.value
        for value in _constant_variants(node, vocab):
            node.value = value
            text = ast.unparse(tree)
            node.value = original
            if text != expression and text not in out:
                out.append(text)
            if len(out) >= limit:
                return out
    return out


def _private(function: str) -> bool:
    return any(part.startswith("_") for part in function.split("."))


def variant_differences(
    differences: Sequence[ProbeDifference], vocab: Vocabulary
) -> dict[int, list[ProbeDifference]]:
    """For each difference on a public call: its vocabulary variants, as differences to capture
    (the outcomes are unknown until gold is captured on them)."""
    out: dict[int, list[ProbeDifference]] = {}
    for i, d in enumerate(differences):
        if _private(d.function):
            continue  # a private helper's other inputs may be ones it is never given
        found = [
            d.model_copy(update={"expression": e, "gold": "", "candidate": ""})
            for e in variants(d.expression, vocab)
        ]
        if found:
            out[i] = found
    return out


# --- unchecked calls of the graded tests -----------------------------------------------------


def _functions(patch: tp.TestPatch) -> Iterator[tuple[str, str, str]]:
    """(file, name, source) of every function the patch's new side shows whole."""
    for f in patch.files:
        if not f.path.endswith(".py"):
            continue
        for hunk in f.hunks:
            for function in tp.shown_functions(hunk):
                yield f.path, function.name, function.source()


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = {a.arg for a in (*function.args.args, *function.args.kwonlyargs)}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def unchecked_calls(task: Task, limit: int = MAX_UNCHECKED) -> list[ProbeDifference]:
    """Calls the FAIL_TO_PASS tests make as statements of their own, using no local name, as
    replayed expressions of their test's module."""
    graded = {function_of_test_id(t) for t in task.fail_to_pass}
    out: list[ProbeDifference] = []
    for path, name, source in _functions(task.test_diff.applied()):
        if name not in graded:
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        function = tree.body[0]
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        local = _locals(function)
        for statement in function.body:
            if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
                continue
            used = {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)}
            if used & local:
                continue
            expression = ast.unparse(statement.value)
            if any(d.expression == expression for d in out):
                continue
            out.append(ProbeDifference(origin="replay", expression=expression,
                                       test=f"{path}::{name}"))  # fmt: skip
            if len(out) >= limit:
                return out
    return out
