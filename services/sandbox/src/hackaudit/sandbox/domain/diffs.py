"""Reads the file headers of a unified diff: which paths it touches, with which modes.

The sandbox never trusts a diff's paths: they are what `git apply` and `patch` will write to, so
they are read here, from every header that names a file (`diff --git`, `---`/`+++`, renames and
copies), and checked by `confinement` before anything is applied. Hunk bodies are counted, not
interpreted, so a body line that looks like a header is never mistaken for one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SYMLINK_MODE = "120000"
DEV_NULL = "/dev/null"

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_HEADER = "diff --git "
_MODE_HEADERS = {
    "new file mode ": "new_mode",
    "deleted file mode ": "old_mode",
    "old mode ": "old_mode",
    "new mode ": "new_mode",
}
_PATH_HEADERS = ("rename from ", "rename to ", "copy from ", "copy to ")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f"}
_ESCAPES.update({"r": "\r", "v": "\v"})


@dataclass
class FileChange:
    """One file of a diff. `old_path`/`new_path` are None for a created/deleted file."""

    old_path: str | None = None
    new_path: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    header_paths: list[str] = field(default_factory=list)
    raw_paths: list[str] = field(default_factory=list)
    added_lines: list[str] = field(default_factory=list)
    removed_lines: list[str] = field(default_factory=list)
    hunk_lines: list[str] = field(default_factory=list)
    binary: bool = False

    @property
    def paths(self) -> tuple[str, ...]:
        """Every repository path this change names, in order of appearance, without repeats."""
        seen: dict[str, None] = {}
        for path in (*self.header_paths, self.old_path, self.new_path):
            if path is not None:
                seen.setdefault(path, None)
        return tuple(seen)

    @property
    def path(self) -> str:
        """The path the change leaves behind (the old one for a deletion)."""
        return (
            self.new_path or self.old_path or (self.header_paths[-1] if self.header_paths else "")
        )

    @property
    def is_new(self) -> bool:
        return self.old_path is None and self.new_path is not None

    @property
    def makes_symlink(self) -> bool:
        return self.new_mode == SYMLINK_MODE


@dataclass(frozen=True)
class ParsedDiff:
    files: tuple[FileChange, ...]
    problems: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for change in self.files:
            for path in change.paths:
                seen.setdefault(path, None)
        return tuple(seen)

    @property
    def modified_existing(self) -> tuple[str, ...]:
        """Paths that exist before the diff applies (modified or deleted, not created)."""
        return tuple(c.old_path for c in self.files if c.old_path is not None)


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
        if nxt in "01234567" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            out += _ESCAPES.get(nxt, nxt).encode()
            i += 2
    return out.decode("utf-8", errors="replace")


def _strip_prefix(path: str) -> str | None:
    """`a/x` → `x` (patch -p1); `/dev/null` → None. Leaves a path without a prefix alone."""
    if path == DEV_NULL:
        return None
    head, sep, rest = path.partition("/")
    return rest if sep and head in {"a", "b"} else (rest if sep and rest else path)


def _marker_path(line: str, change: FileChange) -> str | None:
    """The path of a `--- x` / `+++ x` line, without a trailing timestamp."""
    text = line[4:]
    if not text.startswith('"') and "\t" in text:
        text = text.split("\t", 1)[0]
    raw = unquote_path(text.rstrip("\r"))
    if raw != DEV_NULL:
        change.raw_paths.append(raw)
    return _strip_prefix(raw)


def _git_header_paths(rest: str) -> list[str]:
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


def parse_diff(text: str) -> ParsedDiff:
    """The file changes of a unified diff (git or plain), with any structural problems found."""
    files: list[FileChange] = []
    problems: list[str] = []
    current: FileChange | None = None
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(_GIT_HEADER):
            raw = _git_header_paths(line[len(_GIT_HEADER) :])
            stripped = [p for p in map(_strip_prefix, raw) if p]
            current = FileChange(header_paths=stripped, raw_paths=list(raw))
            files.append(current)
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            if current is None or current.hunk_lines or current.old_path or current.new_path:
                current = FileChange()
                files.append(current)
            current.old_path = _marker_path(line, current)
            current.new_path = _marker_path(lines[i + 1], current)
            i += 1
        elif line.startswith("***************"):
            problems.append("context-format diffs are not accepted; send a unified diff")
        elif current is not None and (match := _HUNK_HEADER.match(line)):
            i = _read_hunk(lines, i, match, current, problems)
            continue
        elif current is not None:
            _read_extended_header(line, current)
        i += 1
    for change in files:
        _settle_paths(change)
    return ParsedDiff(files=tuple(files), problems=tuple(dict.fromkeys(problems)))


def _read_hunk(
    lines: list[str], start: int, match: re.Match[str], change: FileChange, problems: list[str]
) -> int:
    old_left = int(match.group(2) if match.group(2) is not None else 1)
    new_left = int(match.group(4) if match.group(4) is not None else 1)
    change.hunk_lines.append(lines[start])
    i = start + 1
    while i < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[i]
        tag = line[:1]
        if tag == "+":
            new_left -= 1
            change.added_lines.append(line[1:])
        elif tag == "-":
            old_left -= 1
            change.removed_lines.append(line[1:])
        elif tag in {" ", ""}:
            old_left -= 1
            new_left -= 1
        elif tag != "\\":
            problems.append(f"a hunk of {change.path or 'a file'} ends before its line count")
            break
        change.hunk_lines.append(line)
        i += 1
    while i < len(lines) and lines[i].startswith("\\"):
        i += 1
    return i


def _read_extended_header(line: str, change: FileChange) -> None:
    for prefix, attr in _MODE_HEADERS.items():
        if line.startswith(prefix):
            setattr(change, attr, line[len(prefix) :].strip())
            return
    for prefix in _PATH_HEADERS:
        if line.startswith(prefix):
            path = unquote_path(line[len(prefix) :].rstrip("\r"))
            change.header_paths.append(path)
            change.raw_paths.append(path)
            return
    if line.startswith("GIT binary patch") or (
        line.startswith("Binary files ") and line.endswith(" differ")
    ):
        change.binary = True


def _settle_paths(change: FileChange) -> None:
    """Fill old/new paths from the git header when the ---/+++ lines are absent (mode-only,
    rename-only and binary changes)."""
    if change.old_path is None and change.new_path is None and change.header_paths:
        created = change.new_mode is not None and change.old_mode is None
        deleted = change.old_mode is not None and change.new_mode is None
        if not created:
            change.old_path = change.header_paths[0]
        if not deleted:
            change.new_path = change.header_paths[-1]
