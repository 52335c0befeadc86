"""Input bytes -> records: chunked reading and delimiter splitting.

Reading hands on whatever the source has available (``os.read`` returns as soon as any
data is there), so a slow live stream is never held back waiting for a full buffer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Protocol

from seqdedup.errors import SeqdedupError, UsageError

READ_SIZE = 1 << 20

_ESCAPES = {"n": "\n", "t": "\t", "0": "\0", "r": "\r", "\\": "\\"}


def parse_delimiter(text: str) -> bytes:
    r"""Turn a ``--delimiter`` value into bytes, expanding ``\n \t \0 \r \\``."""

    def expand(match: re.Match[str]) -> str:
        char = match.group(1)
        if char not in _ESCAPES:
            raise UsageError(
                f"--delimiter: unknown escape '\\{char}' (use \\n, \\t, \\0, \\r or \\\\)"
            )
        return _ESCAPES[char]

    expanded = re.sub(r"\\(.?)", expand, text, flags=re.DOTALL)
    if not expanded:
        raise UsageError("--delimiter must not be empty")
    return expanded.encode("utf-8", "surrogateescape")


def parse_hex_delimiter(text: str) -> bytes:
    """Turn a ``--delimiter-hex`` value ("00", "0x0d0a", "0D0A") into bytes."""
    digits = text[2:] if text[:2].lower() == "0x" else text
    if not digits or len(digits) % 2 or not re.fullmatch(r"[0-9a-fA-F]+", digits):
        raise UsageError(
            f"--delimiter-hex: '{text}' is not an even number of hex digits (e.g. 00 or 0x0d0a)"
        )
    return bytes.fromhex(digits)


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes | None: ...


def describe(source: object) -> str:
    """How to name an input in a message: its path, or standard input."""
    name = getattr(source, "name", None)
    if isinstance(name, str) and name not in ("<stdin>", "-"):
        return f"'{name}'"
    if name in (0, "<stdin>", "-"):
        return "standard input"
    return "the input"


def read_chunks(source: Readable, size: int = READ_SIZE) -> Iterator[bytes]:
    """Yield what ``source`` has, as soon as it has anything, until end of input.

    ``source`` should be unbuffered (``open(path, "rb", buffering=0)``,
    ``sys.stdin.buffer.raw``): its ``read`` then returns after one system call with
    whatever is available instead of waiting to fill ``size`` bytes.
    """
    while True:
        try:
            chunk = source.read(size)
        except IsADirectoryError:
            raise SeqdedupError(f"{describe(source)} is a directory") from None
        except OSError as exc:
            raise SeqdedupError(f"cannot read {describe(source)}: {exc.strerror or exc}") from None
        if chunk is None:  # non-blocking source with nothing ready
            continue
        if not chunk:
            return
        yield chunk


class RecordSplitter:
    """Split a stream of chunks into records; keeps the incomplete tail between chunks.

    The tail is a bytearray so that a record longer than many chunks costs linear time.
    """

    def __init__(self, delimiter: bytes) -> None:
        self.delimiter = delimiter
        self._tail = bytearray()

    def split(self, chunk: bytes) -> list[bytes]:
        """Return the records completed by ``chunk`` (a delimiter may span chunks)."""
        delimiter = self.delimiter
        if self._tail and len(delimiter) == 1:
            # The tail holds no delimiter, so it simply prefixes the chunk's first record.
            parts = chunk.split(delimiter)
            if len(parts) == 1:
                self._tail += chunk
                return []
            parts[0] = bytes(self._tail) + parts[0]
        elif self._tail:
            # A delimiter can start in the tail's last len(delimiter)-1 bytes.
            start = max(0, len(self._tail) - len(delimiter) + 1)
            self._tail += chunk
            if self._tail.find(delimiter, start) < 0:
                return []
            parts = bytes(self._tail).split(delimiter)
        else:
            parts = chunk.split(delimiter)
        self._tail = bytearray(parts.pop())
        return parts

    def finish(self) -> bytes | None:
        """The final record if the input did not end with a delimiter, else None."""
        tail, self._tail = bytes(self._tail), bytearray()
        return tail or None
