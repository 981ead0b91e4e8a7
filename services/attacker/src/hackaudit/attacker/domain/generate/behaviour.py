"""Whether a candidate can behave differently from gold at all, judged from the diffs alone.

A candidate that differs from gold only in comments, docstrings or blank lines runs exactly as
gold does: grading it spends a sandbox run to learn nothing. The attacker never sees whole files,
only hunks, so the comparison is made hunk by hunk on the new side each patch leaves: the code of
a fragment is its token stream with comments, line breaks and strings standing alone as a
statement (docstrings) removed, which is what its syntax tree holds once docstrings are stripped.

A hunk may start inside a docstring (git cuts hunks anywhere); `code_mask` reads the fragment as
starting inside a triple-quoted string when that is the only way it makes sense, so prose lines
of a docstring are never taken for code. A hunk may also start or end inside brackets (the tail
of a call, a literal whose items go on): the fragment is read with the brackets it closes opened
before it and the ones it leaves open closed after it, so its code is never taken for prose.

When the two patches do not line up (other files, other hunks, other base lines), nothing is
claimed: the candidate is treated as possibly different and runs.

Two candidates are compared the same way (`code_key`): hunk by hunk on the base lines each
replaces, a hunk that changes no code left out, so two that differ only in comments, docstrings
or blank lines (a partial fix that keeps a blank line gold removes) are one candidate.
"""

from __future__ import annotations

import hashlib
import io
import re
import tokenize
from collections.abc import Sequence

from hackaudit.attacker.domain.reading import diffs

_DELIMS = ('"""', "'''")
_SKIP = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
_STRING_PREFIX = re.compile(r"^[rRbBuUfF]{0,2}$")
_SIMPLE_STRING = re.compile(r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"")
_BRACKETS = {"(": ")", "[": "]", "{": "}"}  # opening -> closing

Signature = tuple[tuple[str, tuple[str, ...]], ...]


def _raw_tokens(lines: Sequence[str]) -> list[tokenize.TokenInfo] | None:
    text = "\n".join(line.lstrip() for line in lines) + "\n"
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


def _closing_delimiter(lines: Sequence[str]) -> str | None:
    """The delimiter of the triple-quoted string the fragment starts inside, if it does."""
    for i, line in enumerate(lines):
        text = line.strip()
        for delim in _DELIMS:
            at = text.find(delim)
            if at < 0:
                continue
            before = text[:at]
            if before and not _STRING_PREFIX.match(before):
                # `text."""` or `x = """`: a closing delimiter only when the line is not code
                # opening a string (`name = """`).
                return delim if not re.search(r"[=(,\[{:]\s*[rRbBuUfF]{0,2}$", before) else None
            if text == delim:
                prev = next((x.strip() for x in reversed(lines[:i]) if x.strip()), "")
                return delim if prev and not prev.endswith(":") else None
            return None  # the line opens a string
    return None


def _balanced(lines: Sequence[str]) -> list[str] | None:
    """The fragment with the brackets it closes without opening put before its first code line,
    and the ones it leaves open closed on a line after it; None when it is balanced already."""
    opening = {close: open_ for open_, close in _BRACKETS.items()}
    still_open: list[str] = []  # opened in the fragment, not closed yet
    never_opened: list[str] = []  # the opening brackets of closers with nothing open before them
    for line in lines:
        for char in _SIMPLE_STRING.sub("", line).split("#", 1)[0]:
            if char in _BRACKETS:
                still_open.append(char)
            elif char in opening:
                if still_open and still_open[-1] == opening[char]:
                    still_open.pop()
                elif not still_open:
                    never_opened.append(opening[char])
    if not never_opened and not still_open:
        return None
    out = list(lines)
    if never_opened:
        first = next((i for i, line in enumerate(out) if line.strip()), 0)
        out[first] = "".join(reversed(never_opened)) + out[first].lstrip()
    if still_open:
        out.append("".join(_BRACKETS[c] for c in reversed(still_open)))
    return out


def _ending_inside_string(lines: Sequence[str]) -> list[tokenize.TokenInfo] | None:
    """Tokens of a fragment that ends inside a triple-quoted string it opens (a hunk cut in the
    middle of a docstring), read with the string closed; None when that does not tokenise."""
    for delim in _DELIMS:
        if any(delim in line for line in lines):
            toks = _raw_tokens([*lines, delim])
            if toks is not None:
                return toks
    return None


def code_mask(lines: Sequence[str]) -> list[bool]:
    """For each line of a fragment, whether it holds code (not blank, comment or docstring)."""
    mask = [False] * len(lines)
    start = 0
    delim = _closing_delimiter(lines)
    if delim is not None:
        start = next(i for i, line in enumerate(lines) if delim in line) + 1
    toks = _raw_tokens(lines[start:])
    if toks is None and (balanced := _balanced(lines[start:])) is not None:
        toks = _raw_tokens(balanced)  # a line it adds after the fragment is not in the mask
    if toks is None:
        toks = _ending_inside_string(lines[start:])
    if toks is None:
        if delim is None and not any(d in line for line in lines for d in _DELIMS):
            return mask  # prose that does not tokenise: the inside of a docstring
        # Code that does not tokenise as a fragment: count every non-blank line as code.
        return [bool(line.strip()) and not line.strip().startswith("#") for line in lines]
    per_line: dict[int, list[tokenize.TokenInfo]] = {}
    for t in toks:
        if t.type not in _SKIP and t.type != tokenize.COMMENT:
            per_line.setdefault(t.start[0], []).append(t)
    for line_toks in per_line.values():
        standalone = len(line_toks) == 1 and line_toks[0].type == tokenize.STRING
        if standalone:
            continue
        for t in line_toks:
            for r in range(t.start[0], t.end[0] + 1):
                if 0 <= start + r - 1 < len(lines):
                    mask[start + r - 1] = True
    return mask


def signature(lines: Sequence[str]) -> Signature:
    """The code of a fragment: per code line, its indentation and its tokens."""
    mask = code_mask(lines)
    out: list[tuple[str, tuple[str, ...]]] = []
    for line, is_code in zip(lines, mask, strict=True):
        if not is_code:
            continue
        text = line.lstrip()
        toks = _raw_tokens([text])
        words = (
            tuple(t.string for t in toks if t.type not in _SKIP and t.type != tokenize.COMMENT)
            if toks is not None
            else (text.split("#", 1)[0].strip(),)
        )
        out.append((line[: len(line) - len(text)], words))
    return tuple(out)


def _same_code(a: Sequence[str], b: Sequence[str]) -> bool:
    return list(a) == list(b) or signature(a) == signature(b)


def _file_equivalent(gold: diffs.FileDiff, other: diffs.FileDiff | None) -> bool:
    """Whether `other` (None: the file left as the base has it) leaves the file as gold does."""
    if not gold.path.endswith(".py"):
        return other is not None and gold == other
    if other is None:
        return all(_same_code(h.old_side(), h.new_side()) for h in gold.hunks)
    if (gold.old_path, gold.new_path) != (other.old_path, other.new_path):
        return False
    theirs = {h.old_start: h for h in other.hunks}
    if len(theirs) != len(other.hunks) or not set(theirs) <= {h.old_start for h in gold.hunks}:
        return False
    for hunk in gold.hunks:
        mine = theirs.get(hunk.old_start)
        if mine is None:  # the hunk reverted whole
            if not _same_code(hunk.old_side(), hunk.new_side()):
                return False
        elif mine.old_side() != hunk.old_side() or not _same_code(hunk.new_side(), mine.new_side()):
            return False
    return True


def same_behaviour(gold: diffs.Patch, candidate: diffs.Patch) -> bool:
    """Whether `candidate` leaves the repository as gold does up to comments, docstrings and
    blank lines (False whenever the two patches cannot be lined up)."""
    if any(gold.file(path) is None for path in candidate.paths):
        return False
    return all(_file_equivalent(f, candidate.file(f.path)) for f in gold.files)


def changes_behaviour(gold_text: diffs.PatchSource, candidate_diff: str) -> bool:
    """Whether a candidate diff may behave differently from gold (True when unsure)."""
    try:
        gold = diffs.read(gold_text)
        candidate = diffs.parse_patch(candidate_diff, lenient=True)
    except diffs.DiffError:
        return True
    return not same_behaviour(gold, candidate)


def code_key(candidate_diff: str) -> str | None:
    """What a patch does to the code, as a digest: equal for two patches whose hunks replace the
    same base lines with the same code (comments, docstrings and blank lines aside), a hunk that
    changes no code left out; None when the diff does not parse. Files other than Python ones
    count as they are."""
    try:
        patch = diffs.parse_patch(candidate_diff, lenient=True)
    except diffs.DiffError:
        return None
    parts: list[object] = []
    for file in patch.files:
        python = file.path.endswith(".py") and not file.binary
        hunks = [
            (h.old_start, tuple(h.old_side()), signature(h.new_side()))
            if python
            else (h.old_start, tuple(h.old_side()), tuple(h.new_side()))
            for h in file.hunks
            if not (python and _same_code(h.old_side(), h.new_side()))
        ]
        header = (file.old_path, file.new_path, file.old_mode, file.new_mode, file.binary)
        parts.append((header, file.extended if file.binary else (), tuple(hunks)))
    parts.sort(key=repr)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def code_changes(patch_text: diffs.PatchSource) -> int:
    """How many lines a patch adds or removes that hold code (comments, docstrings and blank
    lines not counted): the size of a gold patch as far as behaviour goes."""
    try:
        patch = diffs.read(patch_text, lenient=True)
    except diffs.DiffError:
        return 0
    count = 0
    for f in patch.files:
        for hunk in f.hunks:
            for kind in (diffs.LineKind.ADDED, diffs.LineKind.REMOVED):
                side = [x for x in hunk.lines if x.kind in (kind, diffs.LineKind.CONTEXT)]
                mask = (
                    code_mask([x.text for x in side])
                    if f.path.endswith(".py")
                    else [bool(x.text.strip()) for x in side]
                )
                count += sum(1 for x, m in zip(side, mask, strict=True) if m and x.kind is kind)
    return count
