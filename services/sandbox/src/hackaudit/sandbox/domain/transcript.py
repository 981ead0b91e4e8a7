"""Reads what the wrapper printed for one run back into its parts.

The container's output reaches the sandbox already cut in two at the `test-exit` marker and
capped (`CapturedOutput`): before it, the preparation reports and the runner's output, of which
only a head and a tail are kept when it is long; after it, the wrapper's trailer (OOM count,
JUnit report, `git status`). Markers are found by their nonce, so text the candidate printed is
never taken for one.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field

from hackaudit.sandbox.domain.protocol import MARK_PREFIX


@dataclass(frozen=True)
class CapturedOutput:
    """The exec's output as kept by the backend: split at the `test-exit` marker, capped."""

    head: bytes = b""
    tail: bytes = b""
    dropped: int = 0
    trailer: bytes = b""
    trailer_dropped: int = 0

    def before_text(self) -> str:
        text = self.head.decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[... {self.dropped} bytes of output not kept ...]\n"
        return text + self.tail.decode("utf-8", errors="replace")

    def trailer_text(self) -> str:
        text = self.trailer.decode("utf-8", errors="replace")
        if self.trailer_dropped:
            text += f"\n[... {self.trailer_dropped} bytes of trailer not kept ...]\n"
        return text


@dataclass(frozen=True)
class Transcript:
    """Marker values and the text after each marker, plus the runner's own output."""

    values: dict[str, str] = field(default_factory=dict)
    bodies: dict[str, str] = field(default_factory=dict)
    runner_output: str | None = None
    full_text: str = ""

    def has(self, kind: str) -> bool:
        return kind in self.values

    def value(self, kind: str) -> str | None:
        return self.values.get(kind)

    @property
    def finished(self) -> bool:
        return "end" in self.values

    @property
    def test_exit_code(self) -> int | None:
        value = self.values.get("test-exit")
        if value is None:
            return None
        try:
            return int(value.split(":", 1)[0])
        except ValueError:
            return None

    @property
    def test_duration_s(self) -> float | None:
        begin = _seconds(self.values.get("begin"))
        exit_value = self.values.get("test-exit")
        end = _seconds(exit_value.split(":", 1)[1]) if exit_value and ":" in exit_value else None
        if begin is None or end is None or end < begin:
            return None
        return end - begin

    @property
    def oom_kills(self) -> int:
        try:
            return int(self.values.get("oom-kills", "0") or 0)
        except ValueError:
            return 0

    def decoded(self, kind: str) -> bytes | None:
        """A base64 section's content, or None when absent or unreadable."""
        body = self.bodies.get(kind)
        if body is None or self.values.get(kind):
            return None
        try:
            return base64.b64decode("".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            return None


def _seconds(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def _marker_pattern(nonce: str) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(MARK_PREFIX)}:{re.escape(nonce)}:([a-z-]+)(?::(.*))?$", re.M)


def _sections(text: str, nonce: str) -> list[tuple[str, str, str]]:
    """(kind, value, body) for every marker in `text`, in order."""
    found = list(_marker_pattern(nonce).finditer(text))
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        body = text[match.end() + 1 : end]
        out.append((match.group(1), match.group(2) or "", body.removesuffix("\n")))
    return out


def read_transcript(output: CapturedOutput, nonce: str) -> Transcript:
    """The transcript of one run from its captured output."""
    before, trailer = output.before_text(), output.trailer_text()
    values: dict[str, str] = {}
    bodies: dict[str, str] = {}
    runner_output: str | None = None
    for kind, value, body in [*_sections(before, nonce), *_sections(trailer, nonce)]:
        if kind in values:
            continue
        values[kind] = value
        bodies[kind] = body
    if "begin" in values:
        begin = next(m for m in _marker_pattern(nonce).finditer(before) if m.group(1) == "begin")
        runner_output = before[begin.end() + 1 :]
    return Transcript(
        values=values,
        bodies=bodies,
        runner_output=runner_output,
        full_text=before + trailer,
    )
