"""Where a run's bytes and messages go: standard output and standard error as the
command line writes them.

The records on standard output are the product; everything on standard error is
commentary. So a failure to write stdout ends the run (a closed pipe quietly, anything
else with one line and nothing saved), while a standard error that went away only
silences the commentary: the records still all reach stdout.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import stat
from collections.abc import Iterator
from typing import IO

from seqdedup.base.errors import OutputError


class Output:
    """Standard output as the run writes it: every byte is written, or the run fails.

    With a file descriptor, bytes go straight to it (the run flushes after every chunk
    anyway, so a buffer would add nothing): a short write is continued, and a
    non-blocking descriptor (``O_NONBLOCK`` set by a parent) is waited on until the
    reader takes more instead of losing what it could not take at once. A failure to
    write (a full disk, an I/O error) is one clear line and the run saves nothing; a
    closed pipe (``BrokenPipeError``) is left to the caller as a quiet end.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.written = 0  # bytes written (a report page shows them)
        self.fd = _fileno(stream)
        if self.fd >= 0:
            with self._errors():
                stream.flush()  # whatever the stream buffered goes first

    def write(self, data: bytes) -> int:
        self.written += len(data)
        with self._errors():
            if self.fd < 0:
                self._stream.write(data)
            else:
                _write_all(self.fd, data)
        return len(data)

    def flush(self) -> None:
        if self.fd < 0:
            with self._errors():
                self._stream.flush()

    @staticmethod
    @contextlib.contextmanager
    def _errors() -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write output: {exc.strerror or exc}") from None


class FileOutput(Output):
    """``--output FILE``: the records appended to a file, which SIGHUP has reopened
    before the next write (logrotate moves the file away, then signals)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._reopen = False
        super().__init__(self._open())

    def _open(self) -> IO[bytes]:
        try:
            fd = open_to_write(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            return open(fd, "ab", buffering=0)  # (closed by reopen/close)
        except OSError as exc:
            raise OutputError(f"cannot write '{self.path}': {exc.strerror or exc}") from None

    def request_reopen(self) -> None:
        """(the signal handler: only a flag)"""
        self._reopen = True

    def write(self, data: bytes) -> int:
        if self._reopen:
            self._reopen = False
            self._stream.close()
            self._stream = self._open()
            self.fd = self._stream.fileno()
        return super().write(data)

    def close(self) -> None:
        self._stream.close()


def open_to_write(path: str, flags: int, mode: int = 0o666) -> int:
    """A descriptor of ``path`` opened with ``flags``, never through a symbolic link
    that another user planted in a folder others may write to: there a link is followed
    only when the folder is sticky (no one else may replace it) and the link is yours
    or the folder owner's (the kernel's ``protected_symlinks`` rule); elsewhere as
    usual."""
    folder = os.stat(os.path.dirname(path) or ".")
    if not folder.st_mode & stat.S_IWOTH:
        return os.open(path, flags | os.O_CLOEXEC, mode)
    try:
        link = os.lstat(path)
    except FileNotFoundError:
        link = None
    if link is None or not stat.S_ISLNK(link.st_mode):  # (a link swapped in: refused)
        return os.open(path, flags | os.O_CLOEXEC | os.O_NOFOLLOW, mode)
    if not folder.st_mode & stat.S_ISVTX:
        why = "a symbolic link in a folder anyone may change"
    elif link.st_uid not in (os.geteuid(), folder.st_uid):
        why = f"a symbolic link made by another user (uid {link.st_uid}) in a shared folder"
    else:  # (sticky: no one else may replace it)
        return os.open(path, flags | os.O_CLOEXEC, mode)
    raise OutputError(f"refusing to write '{path}': it is {why}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            _wait_writable(fd)  # a non-blocking pipe is full: wait for the reader
            continue
        except InterruptedError:  # pragma: no cover - retried by Python itself (PEP 475)
            continue
        view = view[written:]


def _wait_writable(fd: int) -> None:
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        poller.poll()
    else:  # pragma: no cover - Windows has no non-blocking pipes of this kind
        select.select([], [fd], [])


def _fileno(stream: IO[bytes]) -> int:
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return -1


class Messages(io.TextIOBase):
    """Standard error that may go away: once a write to it fails (the reader closed
    the pipe, ``2>&1 | head -1``), every later message is dropped and the run goes on.
    ``lost`` says whether anything was dropped."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self._stream = stream
        self.lost = False

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                self._stream.write(text)
            except (OSError, ValueError):  # ValueError: the stream was closed
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._gone()

    def isatty(self) -> bool:
        return not self.lost and bool(getattr(self._stream, "isatty", lambda: False)())

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    def _gone(self) -> None:
        self.lost = True
        try:  # keep the interpreter's final flush of stderr from failing (and saying so)
            fd = self._stream.fileno()
            if fd == 2:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, fd)
                os.close(devnull)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass
