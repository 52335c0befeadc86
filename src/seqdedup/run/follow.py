"""``--follow``: a file read as ``tail -F`` reads it, for as long as the run goes on.

:class:`Follower` yields the file's new records as they are written (whole records:
the bytes up to the last delimiter; the rest waits for its delimiter), and an empty
chunk when it has been idle for a while (the run then decides what a pause decides).
It starts at the file's end (or its start), waits for a file that is not there yet, and
survives what log rotation does to a file:

- a rename or removal followed by a new file at the path: the new file is read from its
  start, and the old one, still open, is read for ``rotate_wait`` seconds more (a
  writer that has not reopened it yet); its late records come in arrival order with
  the new file's, and its last record without a delimiter, at the end of that time, is
  taken as a record;
- a truncation (copytruncate): read again from the start. It is seen when the file is
  shorter than what was read, or, when it has grown past that again between two looks,
  when the bytes just before the offset differ from those read there, at the look and
  again after the read that follows it (a best effort: a file rewritten with the same
  bytes there cannot be told apart). A record that was
  not complete when the file was truncated is dropped, never joined to new bytes;
- a file at the path that cannot be read for a moment (created 0600 before its chmod,
  briefly a directory): tried again at every look.

Each of those is a note for the user (``on_note``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO

from seqdedup.base.errors import SeqdedupError
from seqdedup.base.stopping import pause, requested

POLL = 0.1  # seconds between looks at a file that has nothing new
READ = 1 << 20  # bytes read at once
ROTATE_WAIT = 5.0  # seconds a rotated file is still read (Fluent Bit's rotate_wait)
CHECK = 64  # bytes before the offset compared to tell a rewritten file


class _Open:
    """One open file of the follow: its identity, the incomplete record read last, the
    bytes just before its offset, and (once rotated out) until when it is read."""

    def __init__(self, file: BinaryIO, identity: tuple[int, int]) -> None:
        self.file = file
        self.identity = identity
        self.partial = b""
        self.before = b""
        self.until: float | None = None

    def take(self, data: bytes, delimiter: bytes) -> bytes:
        """The whole records of ``data`` (after the incomplete one held); the rest held."""
        if data:  # (the last CHECK bytes read, without copying a whole chunk)
            self.before = data[-CHECK:] if len(data) >= CHECK else (self.before + data)[-CHECK:]
        data = self.partial + data
        cut = data.rfind(delimiter)
        if cut < 0:
            self.partial = data
            return b""
        cut += len(delimiter)
        self.partial = data[cut:]
        return data[:cut]

    def rewritten_before(self, offset: int, data: bytes) -> bool:
        """Whether ``data``, read at ``offset`` just after a look found the file as it
        was, came from a file truncated and written again in between: the bytes before
        the offset are no longer those read there, and the file still holds ``data``
        (read before a rewrite, it would hold other bytes now: that data is the old
        file's, kept, and the next look sees the rewrite)."""
        return (
            self._changed_before(offset) and os.pread(self.file.fileno(), len(data), offset) == data
        )

    def rewritten(self) -> bool:
        """Whether the file is shorter than the offset, or holds other bytes just before
        it than were read there (truncated and written again since the last look)."""
        offset = self.file.tell()
        return os.fstat(self.file.fileno()).st_size < offset or self._changed_before(offset)

    def _changed_before(self, offset: int) -> bool:
        """Whether the bytes just before ``offset`` are no longer those read there."""
        if not self.before:
            return False
        start = offset - len(self.before)
        return os.pread(self.file.fileno(), len(self.before), start) != self.before


class Follower:
    """The records of ``path`` as they come (see the module docstring)."""

    def __init__(
        self,
        path: str,
        from_start: bool = False,
        on_note: Callable[[str], None] | None = None,
        poll: float = POLL,
        delimiter: bytes = b"\n",
        rotate_wait: float | None = ROTATE_WAIT,
    ) -> None:
        self.path = path
        self._from_start = from_start
        self._note = on_note or (lambda _: None)
        self._poll = poll
        self._delimiter = delimiter
        self._rotate_wait = rotate_wait or 0.0
        self._current: _Open | None = None
        self._rotated: list[_Open] = []  # old files still read (their grace period)
        self._looked = False  # (a file there at the start is read from its end)
        self._unreadable: str | None = None  # why the file at the path cannot be read

    def chunks(self, idle: float | None = None) -> Iterator[bytes]:
        """New records as they are written; ``b""`` once after ``idle`` seconds without
        any (and again after the next records and pause); until a signal asks the run
        to stop (:mod:`seqdedup.base.stopping`)."""
        quiet_since = time.monotonic()
        idle_told = False
        while requested() is None:
            data = self._read()
            if data:
                yield data
                quiet_since, idle_told = time.monotonic(), False
                continue
            if idle is not None and not idle_told and time.monotonic() - quiet_since >= idle:
                idle_told = True
                yield b""
                continue
            pause(self._poll)

    def rest(self) -> bytes:
        """At the end: the records held without their delimiter (the rotated files'
        delimited, the current file's last as it is)."""
        out = [held.partial + self._delimiter for held in self._rotated if held.partial]
        if self._current is not None:
            out.append(self._current.partial)
        return b"".join(out)

    def close(self) -> None:
        for held in [*self._rotated, *filter(None, [self._current])]:
            held.file.close()
        self._rotated, self._current = [], None

    # -- internals ------------------------------------------------------------------
    def _read(self) -> bytes:
        """What is new: the rotated files' late records, then the current file's (only
        once the rotated files hold no more: their lines come before the new file's)."""
        if self._rotated:
            late, drained = self._read_rotated()
            if not drained:
                return late
            return late + self._read_current()
        return self._read_current()

    def _read_rotated(self) -> tuple[bytes, bool]:
        """The rotated files' late records, and whether every one was read to its end."""
        out = []
        drained = True
        now = time.monotonic()
        for held in list(self._rotated):
            data = held.file.read(READ)
            drained = drained and len(data) < READ
            out.append(held.take(data, self._delimiter))
            assert held.until is not None
            if now >= held.until:  # its time is up: its last record, if any, and close
                if held.partial:
                    out.append(held.partial + self._delimiter)
                held.file.close()
                self._rotated.remove(held)
        return b"".join(out), drained

    def _read_current(self) -> bytes:
        current = self._current
        if current is None:
            first = not self._looked
            self._looked = True
            current = self._current = self._open(at_end=first and not self._from_start, first=first)
            if current is None:
                return b""
            if not first:
                self._note(f"{self.path} has appeared; following it")
        offset = current.file.tell()
        if offset and current.rewritten():
            self._truncated(current)
            offset = 0
        data = current.file.read(READ)
        if data and offset and current.rewritten_before(offset, data):
            self._truncated(current)  # (rewritten between the look and the read)
            data = current.file.read(READ)
        if data:
            return current.take(data, self._delimiter)
        return self._switched()

    def _truncated(self, current: _Open) -> None:
        dropped = len(current.partial)
        lost = f" (the incomplete record before it, {dropped:,} bytes, is dropped)"
        self._note(
            f"{self.path}: file truncated; following it from its start{lost * bool(dropped)}"
        )
        current.file.seek(0)
        current.partial = current.before = b""

    def _switched(self) -> bytes:
        """At the current file's end: whether another file has taken its place."""
        assert self._current is not None
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            return b""  # (removed: its last bytes were read; a new file may come)
        if (now.st_dev, now.st_ino) == self._current.identity:
            return b""
        old = self._current
        self._current = self._open(at_end=False, first=False)
        if self._current is None:  # (not readable yet: the old file is kept meanwhile)
            self._current = old
            return b""
        self._note(f"{self.path} has been replaced; following the new file")
        old.until = time.monotonic() + self._rotate_wait
        self._rotated.append(old)
        # (what reached the old file between the read that found its end and this look
        # at the path comes first: the old file is read before the new one)
        return self._read()

    def _open(self, at_end: bool, first: bool) -> _Open | None:
        """The file at the path, opened at its end or its start; None when there is
        none yet, or (after the start) none that can be read yet."""
        try:
            f = open(self.path, "rb")  # noqa: SIM115 (kept open while followed)
        except FileNotFoundError:
            return None
        except OSError as exc:  # a directory, no permission
            reason = exc.strerror or str(exc)
            if first:  # nothing to follow: the user's mistake
                raise SeqdedupError(f"cannot follow '{self.path}': {reason}") from None
            if self._unreadable != reason:  # (said once, not at every look)
                self._note(f"cannot read {self.path} ({reason}); trying again")
                self._unreadable = reason
            return None
        self._unreadable = None
        status = os.fstat(f.fileno())
        opened = _Open(f, (status.st_dev, status.st_ino))
        if at_end:  # (and what lies before the end, to tell a rewrite later)
            f.seek(0, os.SEEK_END)
            size = min(CHECK, status.st_size)
            opened.before = os.pread(f.fileno(), size, status.st_size - size)
        return opened
