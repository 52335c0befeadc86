"""``--follow``: a file read as ``tail -F`` reads it, for as long as the run goes on.

:class:`Follower` yields the file's new bytes as they are written, and an empty chunk
when it has been idle for a while (the run then decides what a pause decides). It
starts at the file's end (or its start), waits for a file that is not there yet, and
survives what log rotation does to a file: a rename or removal followed by a new file
at the path (the old file is read to its end first, then the new one from its start)
and a truncation (read again from the start). Each of those is a note for the user
(``on_note``). Records are never cut: the bytes go to the run's splitter, which holds a
record until its delimiter comes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO

from seqdedup.errors import SeqdedupError
from seqdedup.stopping import pause, requested

POLL = 0.1  # seconds between looks at a file that has nothing new
READ = 1 << 20  # bytes read at once


class Follower:
    """The bytes of ``path`` as they come (see the module docstring)."""

    def __init__(
        self,
        path: str,
        from_start: bool = False,
        on_note: Callable[[str], None] | None = None,
        poll: float = POLL,
    ) -> None:
        self.path = path
        self._from_start = from_start
        self._note = on_note or (lambda _: None)
        self._poll = poll
        self._file: BinaryIO | None = None
        self._identity: tuple[int, int] | None = None
        self._looked = False  # (a file there at the start is read from its end)

    def chunks(self, idle: float | None = None) -> Iterator[bytes]:
        """New bytes as they are written; ``b""`` once after ``idle`` seconds without
        any (and again after the next bytes and pause); until a signal asks the run to
        stop (:mod:`seqdedup.stopping`)."""
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

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    # -- internals ------------------------------------------------------------------
    def _read(self) -> bytes:
        """What is new: from the file followed, or (at its end) from the file that took
        its place."""
        if self._file is None:
            first = not self._looked
            self._looked = True
            if not self._open(at_end=first and not self._from_start):
                return b""
            if not first and self._identity is not None:
                self._note(f"{self.path} has appeared; following it")
        assert self._file is not None
        data = self._file.read(READ)
        if data:
            return data
        status = os.fstat(self._file.fileno())
        if status.st_size < self._file.tell():
            self._note(f"{self.path}: file truncated; following it from its start")
            self._file.seek(0)
            return self._file.read(READ)
        try:
            now = os.stat(self.path)
        except FileNotFoundError:
            return b""  # (removed: its last bytes were read; a new file may come)
        if (now.st_dev, now.st_ino) != self._identity:
            self.close()
            if self._open(at_end=False):
                self._note(f"{self.path} has been replaced; following the new file")
                return self._file.read(READ) if self._file is not None else b""
        return b""

    def _open(self, at_end: bool) -> bool:
        """Open the file at the path (at its end, or its start); False when there is
        none yet."""
        try:
            f = open(self.path, "rb")  # noqa: SIM115 (kept open while followed)
        except FileNotFoundError:
            return False
        except OSError as exc:  # a directory, no permission: nothing to follow
            raise SeqdedupError(f"cannot follow '{self.path}': {exc.strerror or exc}") from None
        status = os.fstat(f.fileno())
        if at_end:
            f.seek(0, os.SEEK_END)
        self._file = f
        self._identity = (status.st_dev, status.st_ino)
        return True
