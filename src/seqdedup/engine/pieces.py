"""Pieces: a stretch of skipped records and the earlier stretch it repeats, the table
that counts their sequences, and the skipped records held until a piece closes."""

from __future__ import annotations

import struct
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from seqdedup.engine.pykernel import python_skip_records
from seqdedup.engine.runs import runs_of

if TYPE_CHECKING:
    pass


class SequenceTable:
    """Distinct sequences seen in this run and their counts, least recently seen evicted.

    A sequence is identified by the hash of its records' key hashes. Its count is how
    many times it has been seen, the first occurrence included.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._counts: OrderedDict[int, int] = OrderedDict()
        self.identified = 0  # distinct sequences identified in this run (evicted ones too)
        self._known: set[int] | None = set() if limit is not None else None

    def __len__(self) -> int:
        return len(self._counts)

    def observe(self, identity: int, first_count: int = 2) -> int:
        """Record one more sighting of a sequence; return its count so far."""
        counts = self._counts
        count = counts.get(identity)
        if count is None:
            count = first_count
            if self._known is None or identity not in self._known:
                self.identified += 1
                if self._known is not None:
                    self._known.add(identity)
        else:
            count += 1
            counts.move_to_end(identity)
        counts[identity] = count
        if self.limit is not None and len(counts) > self.limit:
            counts.popitem(last=False)
        return count


class JoinedSlice(NamedTuple):
    """Records ``skip`` .. ``skip + length - 1`` of ``data``, records joined by the
    run's delimiter (the kernel's chunk path hands a run's records over so). ``data``
    may start inside the run (a view from a record's first byte on): a run's pieces are
    found in one pass over it, not each by walking its records from the first."""

    data: bytes | memoryview
    skip: int
    length: int


# (data, delimiter, offset, count) -> where the record count records on starts, or -1
SkipRecords = Callable[[bytes, bytes, int, int], int]


class PieceContent:
    """Skipped records held until the piece they belong to closes (bounded): as spans
    of consecutive records (one per run, as handed over), each dropped once all its
    records were taken, so that a piece's records are a slice, not a lookup each. A
    span's records may be one string joined by ``delimiter`` (the chunk path's runs):
    a piece inside it is then given as a :class:`JoinedSlice`, never split."""

    def __init__(
        self,
        limit: int,
        delimiter: bytes | None = None,
        skip: SkipRecords = python_skip_records,
    ) -> None:
        self._limit = limit
        self._delimiter = delimiter
        self._skip = skip  # (the kernel's skip_records where it runs)
        self._starts: list[int] = []  # each span's first tracked index, increasing
        # start -> (its records, how many, [how many are still to be taken, and for a
        # joined span the record and byte offset its last piece was found at])
        self._spans: dict[int, tuple[Sequence[bytes] | bytes, int, list[int]]] = {}
        self._held = 0
        self.walked = 0  # records of joined spans walked to find pieces (tests count it)

    def add(self, first: int, tracked: Sequence[bytes], keep: Sequence[bool]) -> None:
        """Hold the skipped ones of the tracked records starting at index ``first``."""
        for start, stop in runs_of(keep, False):
            self._hold(first + start, tracked[start:stop], stop - start)

    def add_runs(self, runs: Sequence[tuple[int, int, Sequence[bytes] | bytes]]) -> None:
        """The same, given as runs ``(start, stop, records)`` of skipped records (their
        records joined by the delimiter, or not)."""
        for start, stop, records in runs:
            self._hold(start, records, stop - start)

    def _hold(self, start: int, records: Sequence[bytes] | bytes, count: int) -> None:
        if not count:
            return
        if self._starts and start <= self._starts[-1]:  # (never so: runs come in order)
            self._spans.clear()
            self._starts.clear()
            self._held = 0
        self._starts.append(start)
        self._spans[start] = (records, count, [count, 0, 0])
        self._held += count

    def take(self, piece: Piece) -> Sequence[bytes] | JoinedSlice | None:
        """The piece's records, or None when some were not held (a huge run)."""
        starts, spans = self._starts, self._spans
        at = bisect_right(starts, piece.start) - 1
        if at >= 0:  # (most pieces lie in one span: one slice)
            start = starts[at]
            records, count, left = spans[start]
            stop = piece.end + 1 - start
            if stop <= count:
                left[0] -= stop - (piece.start - start)
                if at == 0 and left[0] <= 0:
                    self._release()
                if isinstance(records, bytes):
                    skip = piece.start - start
                    return JoinedSlice(*self._joined_from(records, skip, left), stop - skip)
                return records[piece.start - start : stop]
        content: list[bytes] = []
        position = piece.start
        while position <= piece.end:
            if at < 0 or at >= len(starts):
                return None
            start = starts[at]
            records, count, left = spans[start]
            if not start <= position < start + count:
                return None
            if isinstance(records, bytes):  # (a piece across runs: rare)
                assert self._delimiter is not None
                records = records.split(self._delimiter)
            taken = records[position - start : piece.end + 1 - start]
            content += taken
            position += len(taken)
            left[0] -= len(taken)
            at += 1
        self._release()
        return content

    def _joined_from(
        self, records: bytes, skip: int, cursor: list[int]
    ) -> tuple[bytes | memoryview, int]:
        """Records from ``skip`` on: a view from that record's first byte, found from
        where the span's last piece was (``cursor[1:]``: a record and its offset; pieces
        come in order, so each byte of a run is walked once), and 0 records to skip."""
        assert self._delimiter is not None
        record, offset = (cursor[1], cursor[2]) if cursor[1] <= skip else (0, 0)
        found = self._skip(records, self._delimiter, offset, skip - record)
        if found < 0:  # (fewer records than skip: the kernel's call says so)
            return records, skip
        self.walked += skip - record
        cursor[1], cursor[2] = skip, found
        return memoryview(records)[found:], 0

    def _release(self) -> None:
        """Drop the leading spans whose records were all taken."""
        starts, spans = self._starts, self._spans
        done = 0
        while done < len(starts) and spans[starts[done]][2][0] <= 0:
            self._held -= spans.pop(starts[done])[1]
            done += 1
        if done:
            del starts[:done]

    def trim(self) -> None:
        """A run longer than the limit is not held whole: drop what waits."""
        if self._held > self._limit:
            self._spans.clear()
            self._starts.clear()
            self._held = 0


class Piece:
    """A stretch of skipped tracked records and the earlier stretch it repeats.

    Indices are tracked-record indices (0-based, inclusive). A negative
    ``source_start`` lies in the loaded library's key region.
    """

    __slots__ = ("count", "end", "identity", "source_start", "start")

    def __init__(
        self, start: int, end: int, source_start: int, count: int, identity: int = 0
    ) -> None:
        self.start = start
        self.end = end
        self.source_start = source_start
        self.count = count
        self.identity = identity  # the sequence's key in the sequences table

    def __repr__(self) -> str:
        return f"Piece({self.start}, {self.end}, {self.source_start}, {self.count})"

    @property
    def source_end(self) -> int:
        return self.source_start + self.end - self.start


def unpack_pieces(packed: bytes | None) -> list[Piece]:
    """The kernel's pieces: six int64 each (start, end, source, count, and the two
    lanes of the identity)."""
    if not packed:
        return []
    return [
        Piece(start, end, source, count, low | high << 64)
        for start, end, source, count, low, high in struct.iter_unpack("4q2Q", packed)
    ]
