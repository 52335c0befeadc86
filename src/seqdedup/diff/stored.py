"""An input of ``seqdedup diff`` read once, in parts of whole records, so that a
record is read back by its number: where every STRIDE-th record starts is held, not
the input. A plain regular file is read back from itself (held open; what is read
back is checked to split into the records read there, or the answer is an error);
anything else (standard input, a pipe, a compressed file) is set aside as it passes,
in memory while small, else in a temporary file. GOOD's first record of each key is
kept the same way (:class:`StoredTexts`).

Parts are cut where a left-to-right split of the whole input puts a record's end (the
bounds of what is held, its last record carried over unless the held bytes end with a
delimiter), so a delimiter of several bytes, even one that overlaps itself, splits the
records exactly as one pass over the whole input would.
"""

from __future__ import annotations

import operator
import os
import tempfile
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain, islice, pairwise
from typing import IO

from seqdedup.base.engine import Engine
from seqdedup.base.errors import SeqdedupError
from seqdedup.base.inputs import decoded_inputs, open_plain
from seqdedup.base.lazy import LazySequence
from seqdedup.base.records import DecodedChunks, Int64s, python_gather
from seqdedup.budget.input import larger_than, spooled

PART = 1 << 20  # bytes of whole records keyed at a time (4 MiB: 1.3x the CPU, 1.2x the peak)
IN_MEMORY = 1 << 20  # bytes set aside in memory; past them, in a temporary file
BLOCK = 1 << 20  # bytes read back at once for records asked for together
SAMPLES = 129  # records sampled for an input's time span
STRIDE = 32  # records from one start held to the next (a record read back splits them)
WRITTEN = 1 << 12  # records of StoredTexts written at once


# (``gather(data, bounds, indices, base)``: the engine's, see Engine.gather)
Gather = Callable[[bytes, Int64s, Int64s, int], tuple[bytes, bytes]]


class StoredRecords:
    """The records of one input, read back by number (``record(k)``, or many at once
    with ``texts``): where every STRIDE-th record starts is held (``marks``), and
    record k is read back by splitting the stretch from mark ``k // STRIDE`` to the
    next, as the whole input was split (a record's start is where a left-to-right split
    of the rest begins). ``source``: the plain file the parts are read from, their
    records read back from it (nothing set aside)."""

    def __init__(
        self,
        delimiter: bytes,
        engine: Engine,
        kept: bool = True,
        source: IO[bytes] | None = None,
    ) -> None:
        self.delimiter = delimiter
        self._bounds = engine.record_bounds  # (where the records of a part lie)
        self.kept = kept  # (False: nothing set aside; only samples, for the time span)
        self._source = source
        self._samples: list[bytes] = []  # (unkept: records stride, 2 stride, ... apart)
        self._stride = 1
        self._last = b""
        self.count = 0
        self.marks = array("q")  # where records 0, STRIDE, 2 * STRIDE, ... start
        self.size = 0
        # (closed by close(), when the answer is written; a temporary file goes with it)
        self._spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY)  # noqa: SIM115
        self._delimited = True  # (whether a delimiter ends the last record)

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
            bounds = self._bounds(held, self.delimiter)
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
            bounds = self._bounds(part, self.delimiter)
            self._delimited = not bounds or bounds[-1] + width == len(part)
            yield self._stored(part, bounds)

    def _stored(self, part: bytes, bounds: Int64s) -> tuple[int, bytes, Int64s]:
        if not self.kept:
            return self._sampled(part, bounds)
        first = self.count
        skipped = -first % STRIDE  # (the part's first record at a multiple of STRIDE)
        base = self.size
        self.marks.extend([base + start for start in bounds[2 * skipped :: 2 * STRIDE]])
        if self._source is None:
            spooled(self._spool.write, part)
        self.count += len(bounds) // 2
        self.size += len(part)
        return first, part, bounds

    def _sampled(self, part: bytes, bounds: Int64s) -> tuple[int, bytes, Int64s]:
        """A part of an input not set aside: the records at multiples of the stride
        kept, the stride doubled (every other sample dropped) past 2 * SAMPLES - 1, so
        that they lie evenly over the input; and its last record."""
        first, count = self.count, len(bounds) // 2
        self.count += count
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
        count = self.count
        if not self.kept:
            last_in = count == 0 or (count - 1) % self._stride == 0
            return self._samples if last_in else [*self._samples, self._last]
        if count < 2:
            return self.texts(range(count))
        return self.texts(sorted({round(k * (count - 1) / (SAMPLES - 1)) for k in range(SAMPLES)}))

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
        """The records at ``positions`` (any order), read in blocks."""
        return in_any_order(self._texts, positions)

    def _texts(self, positions: Sequence[int]) -> list[bytes]:
        marks = sorted({position // STRIDE for position in positions})
        spans = [self._mark_span(mark) for mark in marks]
        found: list[bytes] = []
        taken = 0
        for k, j in grouped(spans):  # (a group read and split at once, gaps and all)
            start = spans[k][0]
            block = self._read_at(start, spans[j - 1][1] - start)
            if len(block) != spans[j - 1][1] - start:  # (cut short since)
                raise self._changed(marks[k])
            bounds = self._split(marks[k], marks[j - 1], block)
            first = STRIDE * marks[k]
            last = STRIDE * (marks[j - 1] + 1)
            while taken < len(positions) and positions[taken] < last:
                at = 2 * (positions[taken] - first)
                found.append(block[bounds[at] : bounds[at + 1]])
                taken += 1
        return found

    def _mark_span(self, mark: int) -> tuple[int, int]:
        """Where the records from mark ``mark`` to the next lie, delimiters and all."""
        end = self.marks[mark + 1] if mark + 1 < len(self.marks) else self.size
        return self.marks[mark], end

    def _split(self, mark: int, last_mark: int, block: bytes) -> Int64s:
        """The records' bounds in the block from mark ``mark`` to the end of mark
        ``last_mark``'s: as many as were read there, the last ending where the block
        does; else the source changed."""
        bounds = self._bounds(block, self.delimiter)
        last = last_mark + 1 == len(self.marks)
        wanted = (self.count if last else STRIDE * (last_mark + 1)) - STRIDE * mark
        tail = len(self.delimiter) if self._delimited or not last else 0
        if len(bounds) != 2 * wanted or bounds[-1] + tail != len(block):
            raise self._changed(mark)
        return bounds

    def _changed(self, mark: int) -> SeqdedupError:
        name = "the input set aside" if self._source is None else f"'{self._source.name}'"
        return SeqdedupError(
            f"{name} changed while seqdedup diff read it (its records from byte "
            f"{self.marks[mark]:,} are no longer where they were)"
        )

    def close(self) -> None:
        self._spool.close()
        if self._source is not None:
            self._source.close()


def in_any_order(
    read: Callable[[Sequence[int]], list[bytes]], positions: Sequence[int]
) -> list[bytes]:
    """``read`` (of increasing positions) asked for ``positions`` in any order, each
    place read once."""
    if all(map(operator.lt, positions, islice(positions, 1, None))):
        return read(positions)
    ordered = sorted(set(positions))
    text_of = dict(zip(ordered, read(ordered), strict=True))
    return [text_of[position] for position in positions]


def grouped(spans: Sequence[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Spans of increasing places, (start, end), in groups read at once: each group's
    first and past its last, a group at most BLOCK bytes from its first start to its
    last end unless one span is longer."""
    k = 0
    while k < len(spans):
        start, j = spans[k][0], k + 1
        while j < len(spans) and spans[j][1] - start <= BLOCK:
            j += 1
        yield k, j
        k = j


def stored_input(
    name: str, stdin: IO[bytes] | None, delimiter: bytes, engine: Engine, kept: bool = True
) -> tuple[StoredRecords, Iterator[bytes]]:
    """An input to read in parts (:meth:`StoredRecords.read`) and its chunks: a plain
    regular file read back from itself, anything else set aside as it passes."""
    source = open_plain(name, True) if kept else None
    stored = StoredRecords(delimiter, engine, kept, source)
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

    def extend_from(
        self, data: bytes, bounds: Int64s, indices: Int64s, gather: Gather = python_gather
    ) -> None:
        """The records of ``data`` at ``bounds[2k]:bounds[2k + 1]`` for each k of
        ``indices`` added after the last, picked out by ``gather`` (a twin of
        :func:`seqdedup.base.records.python_gather`: the engine's ``gather``)."""
        joined, ends = gather(data, bounds, indices, self._size())
        self._ends.frombytes(ends)
        self._spool.seek(0, os.SEEK_END)
        spooled(self._spool.write, joined)

    def _size(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _item(self, index: int) -> bytes:
        return self.pick([index])[0]

    def pick(self, indices: Sequence[int]) -> list[bytes]:
        """The records at ``indices`` (any order), read in blocks."""
        return in_any_order(self._pick, indices)

    def _pick(self, indices: Sequence[int]) -> list[bytes]:
        ends, found = self._ends, []
        spans = [(ends[k - 1] if k else 0, ends[k]) for k in indices]
        for k, j in grouped(spans):
            start = spans[k][0]
            self._spool.seek(start)
            block = self._spool.read(spans[j - 1][1] - start)
            found += [block[begin - start : end - start] for begin, end in spans[k:j]]
        return found

    def blocks(self, strip_cr: bool = False) -> Iterator[tuple[int, list[bytes]]]:
        """All the records, a block of them at a time (at most BLOCK bytes, unless one
        record is longer), each with the number of its first; with ``strip_cr``, each
        without a final CR."""
        ends, done = self._ends, 0
        while done < len(ends):
            start = ends[done - 1] if done else 0
            last = max(done, bisect_right(ends, start + BLOCK, done) - 1)  # (one at least)
            self._spool.seek(start)
            block = self._spool.read(ends[last] - start)
            at = array("q", [start]) + ends[done : last + 1]
            texts = [block[a - start : b - start] for a, b in pairwise(at)]
            if strip_cr and b"\r" in block:  # (one scan of the block says most have none)
                texts = [text.removesuffix(b"\r") for text in texts]
            yield done, texts
            done = last + 1

    def __iter__(self) -> Iterator[bytes]:
        return chain.from_iterable(texts for _, texts in self.blocks())

    def close(self) -> None:
        self._spool.close()
