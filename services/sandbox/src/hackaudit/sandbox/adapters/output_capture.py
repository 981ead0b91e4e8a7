"""Reads a `docker exec` output stream into bounded memory, whatever the container writes.

The engine sends an exec's output as frames (8-byte header: stream, 3 zero bytes, big-endian
length). `OutputCapture` keeps the first `head_cap` and the last `tail_cap` bytes of everything
before the run's split marker and drops the middle, counting it — so a flood of a gigabyte costs
reading time, not memory, and the end of the runner's output (where the results are) is kept.
From the split marker on, output goes to a separately capped trailer. It also tells which phase
the run is in (begin marker seen, split marker seen) and when the end marker has arrived.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Iterator

from hackaudit.sandbox.domain.execution import Phase
from hackaudit.sandbox.domain.transcript import CapturedOutput

_HEADER = struct.Struct(">BxxxL")


class FrameDecoder:
    """Turns the raw bytes of a multiplexed exec stream into the payload of its frames."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._want: int | None = None

    def feed(self, data: bytes) -> Iterator[bytes]:
        self._buffer += data
        while True:
            if self._want is None:
                if len(self._buffer) < _HEADER.size:
                    return
                _stream, self._want = _HEADER.unpack_from(self._buffer)
                del self._buffer[: _HEADER.size]
            if self._want == 0:
                self._want = None
                continue
            if not self._buffer:
                return
            take = min(self._want, len(self._buffer))
            chunk = bytes(self._buffer[:take])
            del self._buffer[:take]
            self._want -= take
            if self._want == 0:
                self._want = None
            yield chunk


class _Watch:
    """Finds the first occurrence of `needle` across chunk boundaries."""

    def __init__(self, needle: bytes) -> None:
        self.needle = needle
        self.found = False
        self._carry = b""

    def feed(self, data: bytes) -> bool:
        if self.found:
            return True
        window = self._carry + data
        if self.needle in window:
            self.found = True
            self._carry = b""
        else:
            self._carry = window[-(len(self.needle) - 1) :] if len(self.needle) > 1 else b""
        return self.found


class OutputCapture:
    """Bounded capture of one run's output (see the module docstring)."""

    def __init__(
        self,
        begin: bytes,
        split: bytes,
        end: bytes,
        head_cap: int,
        tail_cap: int,
        trailer_cap: int,
    ) -> None:
        self._begin = _Watch(begin)
        self._end = _Watch(end)
        self._split = split
        self._head_cap, self._tail_cap, self._trailer_cap = head_cap, tail_cap, trailer_cap
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._dropped = 0
        self._trailer = bytearray()
        self._trailer_dropped = 0
        self._pending = b""
        self._split_seen = False

    @property
    def phase(self) -> Phase:
        if self._split_seen:
            return Phase.REPORT
        return Phase.TEST if self._begin.found else Phase.SETUP

    @property
    def finished(self) -> bool:
        return self._end.found

    def feed(self, data: bytes) -> None:
        if not self._split_seen:
            self._begin.feed(data)
            buffer = self._pending + data
            index = buffer.find(self._split)
            if index < 0:
                cut = max(0, len(buffer) - (len(self._split) - 1))
                self._keep(buffer[:cut])
                self._pending = buffer[cut:]
                return
            self._keep(buffer[:index])
            self._pending = b""
            self._split_seen = True
            data = buffer[index:]
        self._end.feed(data)
        room = self._trailer_cap - len(self._trailer)
        self._trailer += data[: max(room, 0)]
        self._trailer_dropped += max(len(data) - max(room, 0), 0)

    def _keep(self, data: bytes) -> None:
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        if len(data) >= self._tail_cap:
            self._dropped += self._tail_size + len(data) - self._tail_cap
            self._tail.clear()
            data = data[-self._tail_cap :]
            self._tail_size = 0
        self._tail.append(data)
        self._tail_size += len(data)
        while self._tail_size > self._tail_cap:
            first = self._tail[0]
            excess = self._tail_size - self._tail_cap
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_size -= len(first)
                self._dropped += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_size -= excess
                self._dropped += excess

    def result(self) -> CapturedOutput:
        """What was kept; held-back bytes (a partial split marker at the end) are included."""
        if self._pending:
            self._keep(self._pending)
            self._pending = b""
        return CapturedOutput(
            head=bytes(self._head),
            tail=b"".join(self._tail),
            dropped=self._dropped,
            trailer=bytes(self._trailer),
            trailer_dropped=self._trailer_dropped,
        )
