"""Input bytes -> records: chunked reading and delimiter splitting.

Reading hands on whatever the source has available (``os.read`` returns as soon as any
data is there), so a slow live stream is never held back waiting for a full buffer.
"""

from __future__ import annotations

import mmap
import re
from array import array
from collections.abc import Callable, Iterator
from itertools import accumulate, compress
from typing import Protocol, TypeAlias

from seqdedup.base.errors import SeqdedupError, UsageError
from seqdedup.base.stopping import pause, requested, wait_readable

READ_SIZE = 1 << 20

# -- where the records of a whole buffer lie (one definition for every module) -------
# These are the Python engine's record functions; ``Engine.record_bounds`` etc. name
# them or the kernel's (C unit ``bounds.c``), which give the same answers.

Buffer = bytes | bytearray | mmap.mmap
# int64 values: an array, or the kernel's answer read in place
Int64s: TypeAlias = "array[int] | memoryview"


def python_flag_positions(flags: bytes | bytearray) -> array[int]:
    """Where flags are set (a byte a record, not 0: set), as int64 (``flag_positions``)."""
    return array("q", compress(range(len(flags)), flags))


def python_put(
    target: bytearray | array[int], width: int, flags: bytes | bytearray, values: bytes
) -> None:
    """The places flags pick filled, in order (``put``): the k-th ``width``-byte item of
    ``values`` over the target's item at the k-th set flag, in place; a run of set flags
    at a time."""
    into = memoryview(target).cast("B")
    if width <= 0 or len(into) % width or len(flags) != len(into) // width:
        raise ValueError("put: a flag an item of target, items of one width")
    if len(values) != width * (len(flags) - flags.count(0)):
        raise ValueError("put: as many values as set flags")
    taken, start = 0, flags.find(1)
    while start >= 0:
        end = flags.find(0, start)
        end = len(flags) if end < 0 else end
        into[start * width : end * width] = values[taken : taken + (end - start) * width]
        taken += (end - start) * width
        start = flags.find(1, end)


def python_take(
    items: bytes | bytearray | memoryview, width: int, indices: array[int] | memoryview
) -> bytes:
    """A table's items read out in the order of a list of indices (``take``): the
    ``width``-byte item k of ``items`` for each k."""
    if width <= 0 or len(items) % width:
        raise ValueError("take: items of a positive width")
    if not all(0 <= k < len(items) // width for k in indices):
        raise IndexError("take: an index outside the items")
    return b"".join(items[k * width : (k + 1) * width] for k in indices)


def python_gather(
    data: bytes | bytearray | memoryview, bounds: Int64s, indices: Int64s, base: int
) -> tuple[bytes, bytes]:
    """Records picked out of a buffer (``gather``): the records at ``bounds[2k]:bounds[2k
    + 1]`` for each k of ``indices``, joined, and where each ends in them counted from
    ``base`` (int64)."""
    pairs = array("q")
    pairs.frombytes(memoryview(bounds).cast("B"))
    if len(pairs) % 2 or base < 0:
        raise ValueError("gather: bounds int64 pairs, indices int64, base not negative")
    texts = []
    for k in indices:  # (the first index or record that is wrong says why)
        if not 0 <= k < len(pairs) // 2:
            raise IndexError("gather: an index outside the bounds")
        start, end = pairs[2 * k], pairs[2 * k + 1]
        if not 0 <= start <= end <= len(data):
            raise ValueError("gather: a record outside the data")
        texts.append(bytes(data[start:end]))
    ends = array("q", accumulate(map(len, texts), initial=base))[1:]
    return b"".join(texts), ends.tobytes()


def python_record_bounds(data: Buffer, delimiter: bytes) -> array[int]:
    """Where each record of ``data`` lies (``record_bounds``): ``(start, end)`` pairs,
    record k being ``data[bounds[2k]:bounds[2k+1]]``. A record ends at the delimiter (not
    part of it); the last may end at the end of the data without one; empty data holds no
    record, and data that ends with the delimiter no empty record after it."""
    if not delimiter:
        raise ValueError("record_bounds: an empty delimiter")
    bounds = array("q")
    size, width, start = len(data), len(delimiter), 0
    find = data.find
    while start < size:
        end = find(delimiter, start)
        if end < 0:
            end = size
        bounds.append(start)
        bounds.append(end)
        start = end + width
    return bounds


def split_records(data: bytes, delimiter: bytes) -> list[bytes]:
    """The records of ``data`` as :func:`python_record_bounds` finds them (``bytes.split``
    without the empty record after a final delimiter)."""
    records = data.split(delimiter)
    if not records[-1]:
        records.pop()  # (what follows the last delimiter, or empty data: no record)
    return records


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


def read_chunks(
    source: Readable,
    size: int = READ_SIZE,
    idle: float | None = None,
    on_cut: Callable[[], None] | None = None,
) -> Iterator[bytes]:
    """Yield what ``source`` has, as soon as it has anything, until end of input.

    ``source`` should be unbuffered (``open(path, "rb", buffering=0)``,
    ``sys.stdin.buffer.raw``): its ``read`` then returns after one system call with
    whatever is available instead of waiting to fill ``size`` bytes. With ``idle``
    (seconds), a pipe, terminal or socket that has had nothing for that long yields an
    empty chunk (``--fold`` then writes what the open run removed so far); a regular
    file is never idle. A signal that asks the run to stop (:mod:`seqdedup.base.stopping`)
    ends the input there, as its end would, and ``on_cut`` is called: a wait for input
    is cut short, and nothing read is lost (the wait consumes nothing).
    """
    watched = live_descriptor(source)
    while True:
        ready = True if watched is None else wait_readable(watched, idle)
        if ready is False:
            yield b""  # idle
            continue
        if ready is None or requested() is not None:
            if on_cut is not None:
                on_cut()
            return
        try:
            chunk = source.read(size)
        except IsADirectoryError:
            raise SeqdedupError(f"{describe(source)} is a directory") from None
        except OSError as exc:
            raise SeqdedupError(f"cannot read {describe(source)}: {exc.strerror or exc}") from None
        if chunk is None:  # a non-blocking source with nothing ready: wait, do not spin
            if watched is None:  # (an object without a descriptor: only time to wait on)
                pause(0.01)
            continue
        if not chunk:
            return
        yield chunk


def live_descriptor(source: object) -> int | None:
    """The descriptor of a live input (a pipe, terminal or socket: one that can wait
    and be idle), None for a regular file or an object without a descriptor."""
    import os
    import stat

    try:
        fd: int = source.fileno()  # type: ignore[attr-defined]
        return None if stat.S_ISREG(os.fstat(fd).st_mode) else fd
    except (AttributeError, OSError, ValueError):
        return None


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


# -- compressed input ----------------------------------------------------------------
# Magic numbers: gzip, bzip2 ("BZh", a level, then a block's or the end's magic, so
# that text starting "BZh" is not taken for it), xz, zstd.
_MAGIC = (
    ("gzip", (b"\x1f\x8b",)),
    (
        "bzip2",
        tuple(
            b"BZh%d%s" % (level, mark)
            for level in range(1, 10)
            for mark in (b"1AY&SY", b"\x17rE8P\x90")
        ),
    ),
    ("xz", (b"\xfd7zXZ\x00",)),
    ("zstd", (b"(\xb5/\xfd",)),
)
DECODE_STEP = 1 << 20  # at most this much decompressed output at a time (bounded memory)


HEAD_BYTES = 16  # enough of a file's start to tell its compression (see _MAGIC)


def compression_of(head: bytes) -> str | None:
    """The compression format of a file that starts with ``head`` (its first
    HEAD_BYTES bytes, or all of a shorter file), or None for plain input."""
    return _format_of(head) or None


def _format_of(head: bytes) -> str | None:
    """The compression format ``head`` starts with; "" while ``head`` is too short to
    tell but could still be one (wait for more); None for plain input."""
    undecided = False
    for name, magics in _MAGIC:
        for magic in magics:
            if head.startswith(magic):
                return name
            if magic.startswith(head):
                undecided = True
    return "" if undecided else None


class _Stream:
    """One format's decompressor, restarted after each member (``cat a.gz b.gz``)."""

    def __init__(self, name: str) -> None:
        self._new = _decompressor_factory(name)
        self._decoder = self._new()
        self._pending = b""  # input not given to the decoder yet
        self._in_member = False  # input has gone into the current member

    def feed(self, data: bytes) -> Iterator[bytes]:
        self._pending += data
        while self._pending or _has_more(self._decoder):
            decoder = self._decoder
            given, self._pending = self._pending, b""
            if given:
                self._in_member = True
            out = decoder.decompress(given, DECODE_STEP)
            self._pending = _leftover(decoder)
            if out:
                yield out
            if decoder.eof:  # a member ended: what follows is the next one
                self._in_member = False
                self._pending = bytes(decoder.unused_data) + self._pending
                self._decoder = self._new()
                if not self._pending.strip(b"\x00"):
                    self._pending = b""  # padding after the last member
            elif not out and not self._pending and not _has_more(decoder):
                return  # all consumed: wait for more input

    def finish(self) -> Iterator[bytes]:
        yield from self.feed(b"")
        if self._in_member:
            raise EOFError("it is truncated (the input ends inside a compressed stream)")


class Decoder(Protocol):
    """What a decompressor offers (zlib's, bz2's, lzma's, zstd's)."""

    @property
    def eof(self) -> bool: ...
    @property
    def unused_data(self) -> bytes: ...
    def decompress(self, data: bytes, max_length: int = ..., /) -> bytes: ...


def _leftover(decoder: Decoder) -> bytes:
    """Input a decoder has not consumed (zlib keeps it apart; bz2 and lzma inside)."""
    return bytes(getattr(decoder, "unconsumed_tail", b""))


def _has_more(decoder: Decoder) -> bool:
    """Whether a decoder holds output it has not given yet (bz2, lzma: needs_input)."""
    needs = getattr(decoder, "needs_input", None)
    return needs is False


def _decompressor_factory(name: str) -> Callable[[], Decoder]:
    if name == "gzip":
        import zlib

        return lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)
    if name == "bzip2":
        import bz2

        return bz2.BZ2Decompressor
    if name == "xz":
        import lzma

        return lzma.LZMADecompressor
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14
    except ImportError:
        try:
            from backports import zstd
        except ImportError:
            raise SeqdedupError(
                "the input is zstd-compressed: install zstd support with "
                "pip install 'seqdedup[zstd]' (or read it through zstdcat)"
            ) from None
    # (Its decompress takes an output bound, as zlib's: a bomb of a few kB that expands
    # to gigabytes is decoded DECODE_STEP bytes at a time.)
    return zstd.ZstdDecompressor  # type: ignore[no-any-return]


class DamagedInput(SeqdedupError):
    """A compressed input is truncated or corrupt: what was decoded before is kept."""


class DecodedChunks:
    """The chunks of a source, decompressed when it starts with a gzip, bzip2, xz or
    zstd header (the magic bytes decide, not the name). ``consumed`` counts the
    source's own bytes read so far (for progress)."""

    def __init__(
        self,
        source: Readable,
        decompress: bool = True,
        size: int = READ_SIZE,
        idle: float | None = None,
    ) -> None:
        self._source = source
        self._decompress = decompress
        self._size = size
        self._idle = idle  # see read_chunks: an empty chunk says the input is idle
        self.consumed = 0
        self.format: str | None = None
        self.cut = False  # a signal ended the input before its end (see read_chunks)

    def _cut(self) -> None:
        self.cut = True

    def __iter__(self) -> Iterator[bytes]:
        chunks = read_chunks(self._source, self._size, self._idle, self._cut)
        if not self._decompress:
            for chunk in chunks:
                self.consumed += len(chunk)
                yield chunk
            return
        head = b""
        for chunk in chunks:  # enough bytes to tell (a plain live stream is not held up)
            self.consumed += len(chunk)
            head += chunk
            kind = _format_of(head)
            if kind != "":
                break
        else:
            kind = None
        self.format = kind
        if kind is None:
            if head:
                yield head
            for chunk in chunks:
                self.consumed += len(chunk)
                yield chunk
            return
        stream = _Stream(kind)

        def decode() -> Iterator[bytes]:
            yield from stream.feed(head)
            for chunk in chunks:
                self.consumed += len(chunk)
                if not chunk:
                    yield chunk  # idle
                    continue
                for out in stream.feed(chunk):
                    yield out
                    if requested() is not None:  # (a chunk may hold much)
                        self.cut = True
                        return
            if not self.cut:
                yield from stream.finish()

        decoded = False
        try:
            for out in decode():
                decoded = True
                yield out
        except SeqdedupError:
            raise
        except Exception as exc:  # OSError, EOFError, zlib.error, lzma.LZMAError, zstd's
            # Nothing decoded at all: more likely text that starts like a header.
            hint = "" if decoded else " (if it is not compressed, read it with --no-decompress)"
            raise DamagedInput(
                f"cannot decompress {describe(self._source)} ({kind}): {exc}{hint}"
            ) from None
