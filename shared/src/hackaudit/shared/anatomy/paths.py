"""How a diff names a file: C-quoted paths, `diff --git` header pairs and their `a/` `b/` prefixes.

git prints a path bare, or C-quoted (`"a/\\303\\251t\\303\\251.py"`) when it holds special
characters; a `diff --git` header holds two such paths separated by a space, which is ambiguous
when the paths are bare and contain spaces. These rules are read here once, for every parser mode.
"""

from __future__ import annotations

import re

DEV_NULL = "/dev/null"

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f"}
_ESCAPES.update({"r": "\r", "v": "\v"})
_OCTAL = re.compile(r"[0-7]{3}")


def unquote_path(text: str) -> str:
    """A path as git prints it: bare, or C-quoted when it holds special characters."""
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        return text
    body, out, i = text[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 == len(body):
            out += char.encode()
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in "01234567" and _OCTAL.match(body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            out += _ESCAPES.get(nxt, nxt).encode()
            i += 2
    return out.decode("utf-8", errors="replace")


def strip_git_prefix(path: str) -> str | None:
    """`a/x` → `x`, `b/x` → `x`; `/dev/null` → None; any other path is kept as written."""
    if path == DEV_NULL:
        return None
    return path[2:] if path.startswith(("a/", "b/")) else path


def strip_one_component(path: str) -> str | None:
    """The path `patch -p1` / `git apply` writes: the first component dropped (`/dev/null` → None).

    A path without a directory is left alone.
    """
    if path == DEV_NULL:
        return None
    head, sep, rest = path.partition("/")
    return rest if sep and head in {"a", "b"} else (rest if sep and rest else path)


def git_header_paths(rest: str) -> list[str]:
    """Both raw paths of `diff --git a/x b/y`, splitting an unquoted pair the way git does."""
    rest = rest.rstrip("\r")
    if rest.startswith('"'):
        end = rest.find('"', 1)
        while end > 0 and rest[end - 1] == "\\":
            end = rest.find('"', end + 1)
        first, second = rest[: end + 1], rest[end + 2 :]
    elif rest.endswith('"'):
        start = rest.rfind(' "')
        first, second = rest[:start], rest[start + 1 :]
    else:
        # Unquoted: for an unrenamed file both halves are equal, so try every " b/" split.
        candidates = [m.start() for m in re.finditer(r" b/", rest)]
        split = next((i for i in candidates if rest[2:i] == rest[i + 3 :]), None)
        if split is None and candidates:
            split = candidates[0]
        if split is None:
            return [rest]
        first, second = rest[:split], rest[split + 1 :]
    return [unquote_path(first), unquote_path(second)]
