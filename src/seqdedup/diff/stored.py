"""An input of ``seqdedup diff`` read once, in parts of whole records, so that a
record is read back by its number: the comparison holds 8 bytes per record, not the
input. A plain regular file is read back from itself (held open: its records where
they were read, each checked to end with the delimiter there, or the answer is an
error); anything else (standard input, a pipe, a compressed file) is set aside as it
passes, in memory while small, else in a temporary file.

Parts are cut where a left-to-right split of the whole input puts a record's end (the
bounds of what is held, its last record carried over unless the held bytes end with a
delimiter), so a delimiter of several bytes, even one that overlaps itself, splits the
records exactly as one pass over the whole input would.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, islice, pairwise
from typing import IO

from seqdedup.base.errors import SeqdedupError
from seqdedup.base.inputs import decoded_inputs, open_plain
from seqdedup.base.lazy import LazySequence
from seqdedup.base.records import DecodedChunks, Int64s, record_bounds
from seqdedup.budget.input import larger_than, spooled

PART = 1 << 20  # bytes of whole records keyed at a time (4 MiB: 1.3x the CPU, 1.2x the peak)
IN_MEMORY = 1 << 20  # bytes set aside in memory; past them, in a temporary file
BLOCK = 1 << 20  # bytes read back at once for records asked for together
SAMPLES = 129  # records sampled for an input's time span
WRITTEN = 1 << 12  # records of StoredTexts written at once


class StoredRecords:
    """The records of one input, read back by number (``record(k)``, or many at once
    with ``texts``): record k begins ``starts[k]`` bytes into its part, the part
    ``bases[p]`` bytes into the bytes set aside (``firsts[p]``: its first record).
    ``source``: the plain file the parts are read from, their records read back from it
    (nothing set aside)."""

    def __init__(
        self, delimiter: bytes, kept: bool = True, source: IO[bytes] | None = None
    ) -> None:
        self.delimiter = delimiter
        self.kept = kept  # (False: nothing set aside; only samples, for the time span)
        self._source = source
        self._samples: list[bytes] = []  # (unkept: records stride, 2 stride, ... apart)
        self._stride = 1
        self._last = b""
        self._count = 0
        self.starts = array("I")  # (4 bytes: within its part; "q" once a part is larger)
        self.firsts: list[int] = []
        self.bases: list[int] = []
        self.size = 0
        # (closed by close(), when the answer is written; a temporary file goes with it)
        self._spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY)  # noqa: SIM115
        self._end = 0  # where the record after the last would start (see read)

    @property
    def count(self) -> int:
        return len(self.starts) if self.kept else self._count

    def read(self, chunks: Iterable[bytes], limit: int) -> Iterator[tuple[int, bytes, Int64s]]:
        """The input's parts as (number of the part's first record, the part, its
        records' bounds in it); each part is set aside before it is handed out. More
        than ``limit`` bytes is an error (``--max-input``)."""
        held = bytearray()
        width = len(self.delimiter)
        for chunk in chunks:
            if self.size + len(held) + len(chunk) > limit:
                raise larger_than(limit, "seqdedup diff sets aside of one input")
            held += chunk
            if len(held) < PART:
                continue
            bounds = record_bounds(held, self.delimiter)
            whole = len(bounds) // 2  # (the last is whole only if a delimiter ends it)
            if whole and bounds[-1] + width != len(held):
                whole -= 1
            if whole:
                cut = bounds[2 * whole - 1] + width
                with memoryview(held) as view:  # (one copy; released before held shrinks)
                    part = view[:cut].tobytes()
                yield self._stored(part, bounds[: 2 * whole])
                del held[:cut]
        if held:
            part = bytes(held)
            yield self._stored(part, record_bounds(part, self.delimiter))
        # (record k ends where record k + 1 would start, less the delimiter)
        if self.kept:
            self._end = self.size if not self.size or self._ends_delimited() else self.size + width

    def _stored(self, part: bytes, bounds: Int64s) -> tuple[int, bytes, Int64s]:
        if not self.kept:
            return self._sampled(part, bounds)
        first = len(self.starts)
        if len(part) >> 32 and self.starts.typecode == "I":  # (a record of 4 GiB or more)
            self.starts = array("q", self.starts)
        self.firsts.append(first)
        self.bases.append(self.size)
        self.starts.extend(array(self.starts.typecode, bounds[::2]))
        if self._source is None:
            spooled(self._spool.write, part)
        self.size += len(part)
        return first, part, bounds

    def _sampled(self, part: bytes, bounds: Int64s) -> tuple[int, bytes, Int64s]:
        """A part of an input not set aside: the records at multiples of the stride
        kept, the stride doubled (every other sample dropped) past 2 * SAMPLES - 1, so
        that they lie evenly over the input; and its last record."""
        first, count = self._count, len(bounds) // 2
        self._count += count
        if count:
            start = -first % self._stride
            for k in range(start, count, self._stride):
                self._samples.append(part[bounds[2 * k] : bounds[2 * k + 1]])
            while len(self._samples) >= 2 * SAMPLES:
                self._samples = self._samples[::2]
                self._stride *= 2
            self._last = part[bounds[-2] : bounds[-1]]
        self.size += len(part)
        return first, part, bounds

    def samples(self) -> list[bytes]:
        """Records sampled evenly over the input, the first and the last among them:
        SAMPLES of them where the input is set aside, else SAMPLES to 2 * SAMPLES."""
        if not self.kept:
            last_in = self._count == 0 or (self._count - 1) % self._stride == 0
            return self._samples if last_in else [*self._samples, self._last]
        count = self.count
        if count < 2:
            return self.texts(range(count))
        return self.texts(sorted({round(k * (count - 1) / (SAMPLES - 1)) for k in range(SAMPLES)}))

    def _start(self, index: int) -> int:
        """Where record ``index`` begins in the bytes set aside (past the last: the end
        it would have)."""
        if index >= len(self.starts):
            return self._end
        return self.bases[bisect_right(self.firsts, index) - 1] + self.starts[index]

    def _ends_delimited(self) -> bool:
        width = len(self.delimiter)
        return self.size >= width and self._read_at(self.size - width, width) == self.delimiter

    def _span(self, index: int) -> tuple[int, int]:
        """Where record ``index`` lies, its delimiter left out."""
        return self._start(index), self._start(index + 1) - len(self.delimiter)

    def _read_at(self, start: int, size: int) -> bytes:
        """``size`` bytes (fewer at the end) from ``start`` of what was read."""
        if self._source is None:
            self._spool.seek(start)
            return self._spool.read(size)
        descriptor, found = self._source.fileno(), b""
        while len(found) < size:  # (one call unless a read is cut short)
            more = os.pread(descriptor, size - len(found), start + len(found))
            if not more:
                break
            found += more
        return found

    def record(self, index: int) -> bytes:
        return self.texts([index])[0]

    def texts(self, positions: Sequence[int]) -> list[bytes]:
        """The records at ``positions``, read in blocks (in the order of their places)."""
        if any(b < a for a, b in pairwise(positions)):
            ordered = sorted(set(positions))
            text_of = dict(zip(ordered, self.texts(ordered), strict=True))
            return [text_of[position] for position in positions]
        found: list[bytes] = []
        spans = [self._span(position) for position in positions]
        width = len(self.delimiter)
        k = 0
        while k < len(spans):
            start = spans[k][0]
            j = k + 1
            while j < len(spans) and spans[j][1] - start <= BLOCK:
                j += 1
            block = self._read_at(start, spans[j - 1][1] + width - start)  # (delimiter too)
            for begin, end in spans[k:j]:
                if self._source is not None and not self._whole(block, end - start, end):
                    raise SeqdedupError(
                        f"'{self._source.name}' changed while seqdedup diff read it (a record "
                        f"is no longer where it was, at byte {begin:,})"
                    )
                found.append(block[begin - start : end - start])
            k = j
        return found

    def _whole(self, block: bytes, at: int, end: int) -> bool:
        """Whether a record read back from the source still ends where it did (``end``;
        ``at`` in ``block``): at its delimiter, or where the input ended for a last
        record without one."""
        width = len(self.delimiter)
        if end + width <= self.size:
            return block[at : at + width] == self.delimiter
        return len(block) >= at

    def close(self) -> None:
        self._spool.close()
        if self._source is not None:
            self._source.close()


def stored_input(
    name: str, stdin: IO[bytes] | None, delimiter: bytes, kept: bool = True
) -> tuple[StoredRecords, Iterator[bytes]]:
    """An input to read in parts (:meth:`StoredRecords.read`) and its chunks: a plain
    regular file read back from itself, anything else set aside as it passes."""
    source = open_plain(name, True) if kept else None
    stored = StoredRecords(delimiter, kept, source)
    if source is None:
        return stored, decoded_inputs([name], stdin, True)
    return stored, iter(DecodedChunks(source, True))


class StoredTexts(LazySequence[bytes]):
    """Records kept one after another (in memory while small, else in a temporary
    file) and where each ends: GOOD's first record of each key, 8 bytes a record held,
    read back when asked (a block at a time when iterated)."""

    def __init__(self) -> None:
        # (closed by close(), when the answer is written; a temporary file goes with it)
        self._spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY)  # noqa: SIM115
        self._ends = array("q")

    def __len__(self) -> int:
        return len(self._ends)

    def extend(self, texts: Iterable[bytes]) -> None:
        """Records added after the last (written a few thousand at a time)."""
        read = iter(texts)
        self._spool.seek(0, os.SEEK_END)
        while batch := list(islice(read, WRITTEN)):
            before = len(self._ends)
            self._ends.extend(accumulate(map(len, batch), initial=self._size()))
            del self._ends[before]  # (accumulate's initial: where the first of them starts)
            spooled(self._spool.write, b"".join(batch))

    def _size(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _item(self, index: int) -> bytes:
        start = self._ends[index - 1] if index else 0
        self._spool.seek(start)
        return self._spool.read(self._ends[index] - start)

    def __iter__(self) -> Iterator[bytes]:
        ends, done = self._ends, 0
        while done < len(ends):
            start = at = ends[done - 1] if done else 0
            last = max(done, bisect_right(ends, start + BLOCK, done) - 1)  # (one at least)
            self._spool.seek(start)
            block = self._spool.read(ends[last] - start)
            for end in ends[done : last + 1]:
                yield block[at - start : end - start]
                at = end
            done = last + 1

    def close(self) -> None:
        self._spool.close()
