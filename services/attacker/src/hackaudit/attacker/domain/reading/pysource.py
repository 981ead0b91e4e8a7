"""Reading Python from the fragments a diff shows: tokens, statements, function signatures.

A hunk holds a few lines of a file, rarely a whole block, so the full parser seldom applies. These
helpers answer the narrower questions the strategies ask of such a fragment — which tokens does this
line hold, does this single line parse as a statement, may a statement be inserted before this
line, which function encloses it — and say "cannot tell" rather than guess when the fragment is
too short to know.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass

_CLAUSE = re.compile(r"^(elif\b|else\s*:|except\b|finally\s*:|case\b)")
_DEF = re.compile(r"^(async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
_CONTINUES = (",", "(", "[", "{", "\\", "+", "-", "*", "/", "=", "and", "or", ".")


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def body_indent(indent: str) -> str:
    """One level deeper than `indent`, in the file's own style (tabs or four spaces)."""
    return indent + ("\t" if indent.startswith("\t") else "    ")


def _strip_comment(text: str) -> str:
    toks = tokens([text])
    comment = [t for t in toks if t.type == tokenize.COMMENT]
    return text[: comment[0].start] if comment else text


def parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def line_parses(line: str) -> bool:
    """Whether one line, taken alone, is a complete statement (or a block opener)."""
    text = line.strip()
    if not text:
        return True
    code = _strip_comment(text).rstrip()
    if code.endswith(":"):
        text = code + " pass"
    if re.match(r"^(elif\b|else\b)", text):
        return parses("if 1: pass\n" + text)
    if re.match(r"^(except\b|finally\b)", text):
        return parses("try: pass\n" + text)
    if text.startswith("@"):
        return parses(text + "\ndef _f(): pass")
    return parses(text)


@dataclass(frozen=True)
class Tok:
    type: int
    string: str
    line: int  # index into the lines given to `tokens`
    start: int  # columns in the original (indented) line
    end: int


def tokens(lines: Sequence[str]) -> list[Tok]:
    """The single-line tokens of a fragment, positions in the fragment's own coordinates.

    Indentation is removed before tokenising so that a fragment starting deep inside a block
    tokenises at all; tokens spanning lines (triple-quoted strings) are left out.
    """
    stripped = [line.lstrip() for line in lines]
    offsets = [len(a) - len(b) for a, b in zip(lines, stripped, strict=True)]
    out: list[Tok] = []
    skip = {
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
    try:
        for t in tokenize.generate_tokens(io.StringIO("\n".join(stripped) + "\n").readline):
            (sr, sc), (er, ec) = t.start, t.end
            if t.type in skip or sr != er or sr > len(lines):
                continue
            off = offsets[sr - 1]
            out.append(Tok(t.type, t.string, sr - 1, sc + off, ec + off))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def _open_at_end(lines: Sequence[str]) -> bool:
    """Whether the fragment ends inside brackets or a string (tokenize hits EOF mid-statement)."""
    text = "\n".join(line.lstrip() for line in lines) + "\n"
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except tokenize.TokenError:
        return True
    except (IndentationError, SyntaxError):
        return False
    return False


def statement_slot(lines: Sequence[str], index: int) -> bool:
    """Whether a statement indented like `lines[index]` may be inserted just before it."""
    if index >= len(lines) or not lines[index].strip():
        return False
    text = lines[index].strip()
    if _CLAUSE.match(text) or text[0] in ")]}.+-*/%&|^<>=,":
        return False
    if re.match(r"^(and|or|not|in|is|if|for)\b", text) and not re.match(r"^(if|for)\b.*:$", text):
        return False
    previous = next((p for p in reversed(lines[:index]) if p.strip()), None)
    if previous is not None:
        prev = _strip_comment(previous).rstrip()
        if prev.lstrip().startswith("@") or prev.endswith(_CONTINUES):
            return False
        if prev.endswith(":") and len(indent_of(lines[index])) <= len(indent_of(previous)):
            return False  # the line after a block opener must be its (deeper) body
    return not _open_at_end(lines[:index])


def fragment_parses(lines: Sequence[str]) -> bool | None:
    """Whether a fragment of a file parses, judged from its first statement at the fragment's
    shallowest indentation onwards (wrapped in a function when indented). None: cannot tell —
    no such statement, or the fragment ends inside brackets or a string.
    """
    widths = [len(indent_of(line)) for line in lines if line.strip()]
    if not widths:
        return None
    low = min(widths)
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if line.strip()
            and len(indent_of(line)) == low
            and not _CLAUSE.match(line.strip())
            and not line.strip().startswith("#")
            and statement_slot(lines, i)
        ),
        None,
    )
    if start is None or _open_at_end(lines[start:]):
        return None
    body = "\n".join(lines[start:])
    source = f"def _fragment():\n{body}\n" if low > 0 else body + "\n"
    return parses(source)


def still_parses(before: Sequence[str], after: Sequence[str]) -> bool:
    """False only when `before` is known to parse and `after` is known not to."""
    return not (fragment_parses(before) is True and fragment_parses(after) is False)


@dataclass(frozen=True)
class Signature:
    name: str
    positional: tuple[str, ...]  # positional parameters, `self`/`cls` included
    required: int  # how many positional parameters have no default
    keyword_only: tuple[str, ...] = ()
    varargs: bool = False
    varkw: bool = False
    is_async: bool = False

    @property
    def is_method(self) -> bool:
        return bool(self.positional) and self.positional[0] in ("self", "cls")

    @property
    def call_params(self) -> tuple[str, ...]:
        """The positional parameters a caller fills (without `self`/`cls`)."""
        return self.positional[1:] if self.is_method else self.positional


def parse_signature(text: str) -> Signature | None:
    """The signature of a `def` header (possibly several lines joined), or None."""
    header = text.strip()
    if not _DEF.match(header):
        return None
    header = _strip_comment(header).rstrip()
    if not header.endswith(":"):
        return None
    try:
        node = ast.parse(header + " pass").body[0]
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    a = node.args
    positional = tuple(p.arg for p in [*a.posonlyargs, *a.args])
    return Signature(
        name=node.name,
        positional=positional,
        required=len(positional) - len(a.defaults),
        keyword_only=tuple(p.arg for p in a.kwonlyargs),
        varargs=a.vararg is not None,
        varkw=a.kwarg is not None,
        is_async=isinstance(node, ast.AsyncFunctionDef),
    )


@dataclass(frozen=True)
class FunctionHeader:
    index: int  # line of the `def`
    end: int  # line holding the colon that closes the signature
    indent: str
    signature: Signature | None


def function_header(lines: Sequence[str], index: int) -> FunctionHeader | None:
    """The `def` starting at `lines[index]`, its signature followed over continuation lines."""
    if not _DEF.match(lines[index].strip()):
        return None
    for end in range(index, min(len(lines), index + 30)):
        joined = " ".join(line.strip() for line in lines[index : end + 1])
        if _strip_comment(lines[end]).rstrip().endswith(":") and not _open_at_end([joined]):
            return FunctionHeader(index, end, indent_of(lines[index]), parse_signature(joined))
    return None


def body_start(lines: Sequence[str], header: FunctionHeader) -> tuple[int, str] | None:
    """Where the first statement of the function's body may go: (line index, indentation).

    After the docstring when the whole docstring is in view, otherwise right after the header.
    """
    i = header.end + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return None
    indent = indent_of(lines[i])
    if len(indent) <= len(header.indent):
        return None  # body not in view (or a one-line def)
    first = lines[i].strip()
    quote = next((q for q in ('"""', "'''") if first.lstrip("rRbBuU").startswith(q)), None)
    if quote is not None:
        rest = first.lstrip("rRbBuU")[3:]
        if quote in rest:
            return i + 1, indent
        for j in range(i + 1, len(lines)):
            if quote in lines[j]:
                return j + 1, indent
        return i, indent
    return i, indent


@dataclass(frozen=True)
class EnclosingFunction:
    name: str
    signature: Signature | None
    header: FunctionHeader | None  # None when the def is above the fragment (known from @@ text)
    indent: str


def section_function(section: str) -> EnclosingFunction | None:
    """The function git names after a hunk header (`@@ -1,2 +1,3 @@ def f(x):`)."""
    match = _DEF.match(section.strip())
    if not match:
        return None
    return EnclosingFunction(
        name=match.group(2),
        signature=parse_signature(section),
        header=None,
        indent=indent_of(section),
    )


def enclosing_functions(lines: Sequence[str], section: str = "") -> list[EnclosingFunction | None]:
    """For each line, the innermost function it belongs to as far as the fragment shows."""
    stack: list[EnclosingFunction] = []
    outer = section_function(section)
    if outer is not None:
        stack.append(outer)
    out: list[EnclosingFunction | None] = []
    for i, line in enumerate(lines):
        if line.strip() and not line.strip().startswith("#"):
            width = len(indent_of(line))
            while stack and width <= len(stack[-1].indent) and not _is_continuation(lines, i):
                stack.pop()
            header = function_header(lines, i)
            if header is not None:
                sig = header.signature
                match = _DEF.match(line.strip())
                name = sig.name if sig else (match.group(2) if match else "")
                stack.append(EnclosingFunction(name, sig, header, header.indent))
                out.append(None)
                continue
        out.append(stack[-1] if stack else None)
    return out


def _is_continuation(lines: Sequence[str], index: int) -> bool:
    previous = next((p for p in reversed(lines[:index]) if p.strip()), None)
    if previous is None:
        return False
    return _strip_comment(previous).rstrip().endswith(_CONTINUES) or _open_at_end(lines[:index])


def module_slot(lines: Sequence[str]) -> int | None:
    """A line before which module-level code may be inserted (a top-level def/class/decorator)."""
    for i, line in enumerate(lines):
        if not line.startswith(("def ", "class ", "async def ", "@")):
            continue
        previous = next((p for p in reversed(lines[:i]) if p.strip()), None)
        if previous is not None and previous.startswith("@"):
            continue
        if statement_slot(lines, i) or (previous is None and not _open_at_end(lines[:i])):
            return i
    return None


def module_name(path: str) -> str | None:
    """The import name of a repository file (`src/pkg/mod.py` -> `pkg.mod`), None for non-Python."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)
