"""Semantics-preserving rewrites of the gold patch: the correct variants (C+) of the reference pool.

A task's tests should accept any correct fix, not only gold's exact text. To measure that, gold
is rewritten mechanically in ways that keep its behaviour — renamed locals, an extracted
temporary, an inverted `if`/`else`, two independent statements swapped (assignments, or calls
on different objects), an expression wrapped in parentheses over several lines, a comment added,
a docstring gold writes worded with one more sentence — and each rewrite is graded like a
candidate.

Only the new side of one gold hunk is rewritten, and only where gold adds or changes code; the
hunk is then diffed again against its unchanged old side, so the rewrite is a full diff against
the base commit that applies wherever gold applies. The attacker sees hunks, not files, so each
kind acts only where the fragment shows enough to be sure (a local's whole function up to its
last reachable statement, both branches of an `if`/`else`, two statements that read and write
disjoint names); a kind with no such site yields nothing. A rewrite is a claim, not a proof:
except for a comment- or docstring-only one, the service layer keeps it only when differential
probes find no difference from gold.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

from hackaudit.attacker.domain.generate import behaviour
from hackaudit.attacker.domain.reading import diffs, pysource
from hackaudit.attacker.domain.reading.diffs import LineKind

RENAME = "rename-locals"
EXTRACT = "extract-temporary"
INVERT = "invert-if"
REORDER = "reorder-statements"
REFORMAT = "reformat"
COMMENT = "comment"
DOCSTRING = "docstring"
KINDS = (RENAME, EXTRACT, INVERT, REORDER, REFORMAT, COMMENT, DOCSTRING)
TEXT_KINDS = frozenset({COMMENT, DOCSTRING})  # equal to gold by construction: nothing to probe

ADDED_COMMENT = "# the same fix as before, worded with a comment"
ADDED_SENTENCE = "The same behaviour, described in other words."
_PLAIN_STRING = re.compile(r"""^[rRuU]?('''|\"\"\"|'|")""")
_SIMPLE_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*=(?!=)\s*(.+)$")
_RETURN = re.compile(r"^return\s+(.+)$")
_IF = re.compile(r"^if\s+(.+):$")


@dataclass(frozen=True)
class Rewrite:
    kind: str
    patch: diffs.Patch
    detail: str

    @property
    def diff(self) -> str:
        return diffs.emit_patch(self.patch)


# A rewriter takes the new side of a hunk and which of its lines gold adds, and returns the new
# lines with a short description, or None when it finds no site.
Rewriter = Callable[[list[str], list[bool], "_Context"], tuple[list[str], str] | None]


@dataclass(frozen=True)
class _Context:
    section: str  # the hunk's section text (the enclosing def, when git names one)
    old_names: frozenset[str]  # names the file's base lines use (not as attributes)
    taken: frozenset[str]  # every name the patch mentions: new names must avoid them


# --- small readers ------------------------------------------------------------------------------


def _has_comment(line: str) -> bool:
    return any(t.type == tokenize.COMMENT for t in pysource.tokens([line]))


def _statement(line: str) -> ast.stmt | None:
    """The single simple statement a line holds, or None."""
    try:
        body = ast.parse(line.strip()).body
    except (SyntaxError, ValueError):
        return None
    return body[0] if len(body) == 1 else None


def _names_used(lines: Sequence[str]) -> set[str]:
    """Names the lines use as variables (attribute names after `.` left out)."""
    toks = pysource.tokens(lines)
    out: set[str] = set()
    for i, t in enumerate(toks):
        after_dot = i > 0 and toks[i - 1].string == "."
        if t.type == tokenize.NAME and not after_dot and not keyword.iskeyword(t.string):
            out.add(t.string)
    return out


def _fresh(base: str, taken: frozenset[str]) -> str:
    name, n = base, 1
    while name in taken or keyword.iskeyword(name):
        n += 1
        name = f"{base}_{n}"
    return name


def _code_start(lines: Sequence[str], index: int) -> bool:
    """Whether lines[index] starts a whole statement (not a continuation, not in a string)."""
    return pysource.statement_slot(lines, index) and pysource.line_parses(lines[index])


# --- the kinds ----------------------------------------------------------------------------------


def _comment(lines: list[str], added: list[bool], ctx: _Context) -> tuple[list[str], str] | None:
    mask = behaviour.code_mask(lines)
    for i, line in enumerate(lines):
        if added[i] and mask[i] and pysource.statement_slot(lines, i):
            indent = pysource.indent_of(line)
            return [*lines[:i], indent + ADDED_COMMENT, *lines[i:]], "a comment line added"
    return None


def _string_statements(lines: Sequence[str]) -> list[tuple[int, int, int]]:
    """(first line, last line, column of the closing quotes on it) of each plain string standing
    alone as a statement (a docstring), in fragment order; nothing when the fragment does not
    tokenise."""
    stripped = [line.lstrip() for line in lines]
    offsets = [len(a) - len(b) for a, b in zip(lines, stripped, strict=True)]
    try:
        toks = list(tokenize.generate_tokens(io.StringIO("\n".join(stripped) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    layout = {tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT}
    code = [t for t in toks if t.type not in layout]
    out: list[tuple[int, int, int]] = []
    for k, t in enumerate(code):
        starts = k == 0 or code[k - 1].type == tokenize.NEWLINE
        alone = k + 1 < len(code) and code[k + 1].type in (tokenize.NEWLINE, tokenize.ENDMARKER)
        match = _PLAIN_STRING.match(t.string)
        if t.type != tokenize.STRING or not (starts and alone) or match is None:
            continue
        first, last = t.start[0] - 1, t.end[0] - 1
        if last < len(lines):
            out.append((first, last, t.end[1] - len(match.group(1)) + offsets[last]))
    return out


def _docstring(lines: list[str], added: list[bool], ctx: _Context) -> tuple[list[str], str] | None:
    for first, last, close in _string_statements(lines):
        if not any(added[first : last + 1]):
            continue
        closing = lines[last]
        if first < last and not closing[:close].strip():
            # The quotes close on a line of their own: one more line of prose above them.
            new = [*lines[:last], pysource.indent_of(closing) + ADDED_SENTENCE, *lines[last:]]
        else:
            text = closing[:close].rstrip()
            new = [*lines[:last], f"{text} {ADDED_SENTENCE}{closing[close:]}", *lines[last + 1 :]]
        if behaviour.signature(new) != behaviour.signature(lines):
            continue  # not a docstring after all (a fragment cut inside a string)
        return new, "a sentence added to a docstring gold writes"
    return None


def _reformat(lines: list[str], added: list[bool], ctx: _Context) -> tuple[list[str], str] | None:
    for i, line in enumerate(lines):
        text = line.strip()
        if not added[i] or _has_comment(line) or not _code_start(lines, i):
            continue
        match = _RETURN.match(text) or _SIMPLE_ASSIGN.match(text)
        node = _statement(text)
        whole = (isinstance(node, ast.Return) and node.value is not None) or (
            isinstance(node, ast.Assign) and len(node.targets) == 1
        )
        if match is None or not whole:
            continue
        expr = match.group(match.lastindex or 1)
        head = text[: len(text) - len(expr)].rstrip()
        indent = pysource.indent_of(line)
        new = [f"{indent}{head} (", f"{pysource.body_indent(indent)}{expr}", f"{indent})"]
        return [*lines[:i], *new, *lines[i + 1 :]], f"`{head}` split over lines in parentheses"
    return None


def _extractable(node: ast.expr | None) -> bool:
    # A bare generator argument has no parentheses of its own to take along.
    plain = ast.Name | ast.Constant | ast.Starred | ast.GeneratorExp
    return node is not None and not isinstance(node, plain)


def _extract(lines: list[str], added: list[bool], ctx: _Context) -> tuple[list[str], str] | None:
    for i, line in enumerate(lines):
        text = line.strip()
        if not added[i] or _has_comment(line) or not _code_start(lines, i):
            continue
        node = _statement(text + " pass" if text.endswith(":") else text)
        indent = pysource.indent_of(line)
        if isinstance(node, ast.Return) and _extractable(node.value):
            assert node.value is not None
            name = _fresh("result", ctx.taken)
            expr = ast.get_source_segment(text, node.value)
            new = [f"{indent}{name} = {expr}", f"{indent}return {name}"]
        elif isinstance(node, ast.If) and _IF.match(text) and _extractable(node.test):
            name = _fresh("condition", ctx.taken)
            expr = ast.get_source_segment(text + " pass", node.test)
            new = [f"{indent}{name} = {expr}", f"{indent}if {name}:"]
        elif (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and len(node.value.args) == 1
            and not node.value.keywords
            and _extractable(node.value.args[0])
        ):
            name = _fresh("value", ctx.taken)
            arg = node.value.args[0]
            expr = ast.get_source_segment(text, arg)
            call = ast.get_source_segment(text, node.value.func)
            new = [f"{indent}{name} = {expr}", f"{indent}{call}({name})"]
        else:
            continue
        if expr is None or "\n" in expr:
            continue
        return [*lines[:i], *new, *lines[i + 1 :]], f"`{expr[:60]}` held in `{name}` first"
    return None


def _block_end(lines: Sequence[str], start: int, indent: int) -> int | None:
    """Index of the first non-blank line after `start` indented at most `indent` (None: the
    block runs past the fragment)."""
    for j in range(start + 1, len(lines)):
        if lines[j].strip() and len(pysource.indent_of(lines[j])) <= indent:
            return j
    return None


def _trim(lines: list[str], start: int, stop: int) -> int:
    """`stop` moved back over blank lines (a block's trailing blank lines stay outside it)."""
    while stop > start and not lines[stop - 1].strip():
        stop -= 1
    return stop


def _invert(lines: list[str], added: list[bool], ctx: _Context) -> tuple[list[str], str] | None:
    for i, line in enumerate(lines):
        match = _IF.match(line.strip())
        if match is None or _has_comment(line) or not _code_start(lines, i):
            continue
        width = len(pysource.indent_of(line))
        at_else = _block_end(lines, i, width)
        if at_else is None or lines[at_else].rstrip() != pysource.indent_of(line) + "else:":
            continue
        end = _block_end(lines, at_else, width)
        if end is None:
            continue
        body_stop = _trim(lines, i + 1, at_else)
        else_stop = _trim(lines, at_else + 1, end)
        if body_stop == i + 1 or else_stop == at_else + 1 or not any(added[i:else_stop]):
            continue
        condition = match.group(1)
        new = [
            f"{pysource.indent_of(line)}if not ({condition}):",
            *lines[at_else + 1 : else_stop],
            lines[at_else],
            *lines[i + 1 : body_stop],
            *lines[body_stop:at_else],
        ]
        detail = f"`if {condition[:60]}` negated, branches swapped"
        return [*lines[:i], *new, *lines[else_stop:]], detail
    return None


def _names(node: ast.AST, ctx_type: type) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx_type)}


def _effects(node: ast.stmt) -> tuple[set[str], set[str]] | None:
    """(names read, names written) of a statement that has no other effect, or None."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            return None
        return set(), {(a.asname or a.name).split(".")[0] for a in node.names}
    if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        return None
    unsafe = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda)
    if any(isinstance(n, unsafe) for n in ast.walk(node)):
        return None
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not all(isinstance(t, ast.Name | ast.Tuple) for t in targets):
        return None
    written = set().union(*(_names(t, ast.Store) for t in targets))
    read = _names(node, ast.Load) | (written if isinstance(node, ast.AugAssign) else set())
    return read, written


def _receiver(node: ast.stmt) -> str | None:
    """The object a statement that is one method call calls on (`self.store` of
    `self.store.discard(old)`), or None for any other statement and for a receiver that is
    itself computed by a call."""
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return None
    func = node.value.func
    unsafe = (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda)
    if not isinstance(func, ast.Attribute) or any(isinstance(n, unsafe) for n in ast.walk(node)):
        return None
    if any(isinstance(n, ast.Call) for n in ast.walk(func.value)):
        return None
    return ast.unparse(func.value)


def _reaches(node: ast.stmt, receiver: str) -> bool:
    """Whether the statement mentions `receiver` or anything reached through it."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name | ast.Attribute | ast.Subscript):
            text = ast.unparse(n)
            if text == receiver or text.startswith((receiver + ".", receiver + "[")):
                return True
    return False


def _independent_calls(first: ast.stmt, second: ast.stmt) -> bool:
    """Two method calls on different objects, neither of which the other statement mentions:
    swapped, they differ only in which object sees its call first (probes check the rest)."""
    a, b = _receiver(first), _receiver(second)
    return a is not None and b is not None and not (_reaches(second, a) or _reaches(first, b))


def _reorder(lines: list[str], added: list[bool], ctx: _Context) -> tuple[list[str], str] | None:
    for i in range(len(lines) - 1):
        a, b = lines[i], lines[i + 1]
        if not (added[i] or added[i + 1]) or not a.strip() or not b.strip():
            continue
        if pysource.indent_of(a) != pysource.indent_of(b) or _has_comment(a) or _has_comment(b):
            continue
        if not (_code_start(lines, i) and _code_start(lines, i + 1)):
            continue
        first, second = _statement(a), _statement(b)
        if first is None or second is None:
            continue
        ea, eb = _effects(first), _effects(second)
        if ea is None or eb is None:
            if not _independent_calls(first, second):
                continue
        else:
            (read_a, wrote_a), (read_b, wrote_b) = ea, eb
            if wrote_a & (read_b | wrote_b) or wrote_b & read_a:
                continue
        detail = f"`{a.strip()[:40]}` and `{b.strip()[:40]}` swapped"
        return [*lines[:i], b, a, *lines[i + 2 :]], detail
    return None


def _rename_sites(lines: list[str], added: list[bool], ctx: _Context) -> dict[str, str]:
    """Locals gold introduces whose every use the fragment shows: old name -> new name."""
    toks = pysource.tokens(lines)
    functions = pysource.enclosing_functions(lines, ctx.section)
    bound: set[str] = set()
    for i, line in enumerate(lines):
        node = _statement(line) if added[i] else None
        if isinstance(node, ast.Assign):
            bound |= set().union(*(_names(t, ast.Store) for t in node.targets))
    out: dict[str, str] = {}
    for name in sorted(bound - ctx.old_names):
        uses = [t.line for t in toks if t.type == tokenize.NAME and t.string == name]
        if _renamable(name, uses, lines, added, functions, toks):
            out[name] = _fresh(f"{name}_value", ctx.taken | frozenset(out.values()))
    return out


def _renamable(
    name: str,
    uses: list[int],
    lines: list[str],
    added: list[bool],
    functions: list[pysource.EnclosingFunction | None],
    toks: list[pysource.Tok],
) -> bool:
    if not uses or not all(added[u] for u in uses):
        return False
    scope = functions[uses[0]]
    if scope is None or any(functions[u] is not scope for u in uses):
        return False
    for u in uses:
        text = lines[u].strip()
        if re.match(r"^(async\s+def|def|class|global|nonlocal)\b", text) or "lambda" in text:
            return False
    in_f_strings = any(
        t.type == tokenize.STRING
        and re.match(r"^[rRbBuU]*[fF]", t.string)
        and re.search(rf"\b{re.escape(name)}\b", t.string)
        for t in toks
    )
    return not in_f_strings and _scope_ends_in_view(lines, max(uses), scope)


def _scope_ends_in_view(lines: list[str], last_use: int, scope: pysource.EnclosingFunction) -> bool:
    """Whether nothing of the function after `last_use` can run unseen: the function ends in the
    fragment, or its last statement in view is a `return`/`raise` at the body's own level (known
    only when the `def` is in view)."""
    width = len(scope.indent)
    end = _block_end(lines, scope.header.end if scope.header else last_use, width)
    if end is not None:
        return end > last_use
    if scope.header is None:
        return False
    body = [j for j in range(scope.header.end + 1, len(lines)) if lines[j].strip()]
    if not body:
        return False
    level = pysource.indent_of(lines[body[0]])
    last = max(j for j in body if pysource.indent_of(lines[j]) == level)
    return last >= last_use and re.match(r"^(return|raise)\b", lines[last].strip()) is not None


def _rename(lines: list[str], added: list[bool], ctx: _Context) -> tuple[list[str], str] | None:
    renames = _rename_sites(lines, added, ctx)
    if not renames:
        return None
    toks = pysource.tokens(lines)
    depth = 0
    edits: dict[int, list[pysource.Tok]] = {}
    for k, t in enumerate(toks):
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth = max(0, depth - 1)
        if t.type != tokenize.NAME or t.string not in renames:
            continue
        after_dot = k > 0 and toks[k - 1].string == "."
        keyword_arg = depth > 0 and k + 1 < len(toks) and toks[k + 1].string == "="
        if not after_dot and not keyword_arg:
            edits.setdefault(t.line, []).append(t)
    new = list(lines)
    for index, found in edits.items():
        for t in sorted(found, key=lambda t: t.start, reverse=True):
            new[index] = new[index][: t.start] + renames[t.string] + new[index][t.end :]
    listed = ", ".join(f"{a} -> {b}" for a, b in renames.items())
    return new, f"locals renamed: {listed}"[:200]


REWRITERS: dict[str, Rewriter] = {
    RENAME: _rename,
    EXTRACT: _extract,
    INVERT: _invert,
    REORDER: _reorder,
    REFORMAT: _reformat,
    COMMENT: _comment,
    DOCSTRING: _docstring,
}


# --- from a rewritten fragment to a diff --------------------------------------------------------


def rehunk(hunk: diffs.Hunk, new_side: Sequence[str]) -> diffs.Hunk:
    """The hunk that turns the same base lines into `new_side`."""
    old = hunk.old_side()
    lines: list[diffs.Line] = []
    matcher = SequenceMatcher(None, old, list(new_side), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines += [diffs.Line(LineKind.CONTEXT, t) for t in old[i1:i2]]
            continue
        lines += [diffs.Line(LineKind.REMOVED, t) for t in old[i1:i2]]
        lines += [diffs.Line(LineKind.ADDED, t) for t in new_side[j1:j2]]
    return replace(hunk, lines=tuple(lines))


def _added_mask(hunk: diffs.Hunk) -> list[bool]:
    return [x.kind is LineKind.ADDED for x in hunk.lines if x.kind is not LineKind.REMOVED]


def _parses_as_gold(f: diffs.FileDiff, hunk: diffs.Hunk, new: Sequence[str]) -> bool:
    if f.is_new:
        return pysource.parses("\n".join(new) + "\n")
    return pysource.still_parses(hunk.new_side(), new)


def _framing(hunk: diffs.Hunk) -> tuple[bool, bool]:
    """Whether the hunk opens and closes with a context line."""
    lines = hunk.lines
    return (
        bool(lines) and lines[0].kind is LineKind.CONTEXT,
        bool(lines) and lines[-1].kind is LineKind.CONTEXT,
    )


def _with_hunk(patch: diffs.Patch, fi: int, hi: int, hunk: diffs.Hunk) -> diffs.Patch:
    f = patch.files[fi]
    hunks = list(f.hunks)
    hunks[hi] = hunk
    files = list(patch.files)
    files[fi] = replace(f, hunks=tuple(hunks))
    return diffs.Patch(files=tuple(files))


def _context(patch: diffs.Patch, f: diffs.FileDiff, section: str) -> _Context:
    old = [line for h in f.hunks for line in h.old_side()]
    every = [x.text for g in patch.files for h in g.hunks for x in h.lines]
    return _Context(
        section=section,
        old_names=frozenset(_names_used(old)),
        taken=frozenset(_names_used(every)),
    )


def rewrite(gold: diffs.Patch, kind: str) -> Rewrite | None:
    """Gold rewritten by one kind at its first site in a Python file, or None (no site)."""
    rewriter = REWRITERS[kind]
    for fi, f in enumerate(gold.files):
        if f.is_deleted or not f.path.endswith(".py"):
            continue
        for hi, hunk in enumerate(f.hunks):
            if any(x.no_newline for x in hunk.lines) or not hunk.has_changes:
                continue
            found = rewriter(hunk.new_side(), _added_mask(hunk), _context(gold, f, hunk.section))
            if found is None:
                continue
            new, detail = found
            if new == hunk.new_side() or not _parses_as_gold(f, hunk, new):
                continue
            made = rehunk(hunk, new)
            if _framing(made) != _framing(hunk):
                continue  # git anchors a hunk without leading/trailing context to the file's ends
            return Rewrite(kind, _with_hunk(gold, fi, hi, made), detail)
    return None


def rewrites(gold_text: diffs.PatchSource, kinds: Sequence[str] = KINDS) -> list[Rewrite]:
    """At most one rewrite of gold per kind, in `kinds` order; kinds with no site are skipped."""
    try:
        gold = diffs.read(gold_text)
    except diffs.DiffError:
        return []
    out: list[Rewrite] = []
    for kind in kinds:
        found = rewrite(gold, kind)
        if found is not None:
            out.append(found)
    return out


def text_only(gold_text: str, rewrite_diff: str) -> bool:
    """Whether the rewrite differs from gold only in comments, docstrings or blank lines: equal
    to gold by construction, no probe needed."""
    return not behaviour.changes_behaviour(gold_text, rewrite_diff)
