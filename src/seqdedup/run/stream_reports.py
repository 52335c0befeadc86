"""What the kernel's stream matcher hands over for markers, ``--top`` and fold lines
(``report_runs``): its closed runs, or with ``fold`` each run's parts, reported right
after their last records as the output is written; and each position's stream, kept
per batch of records."""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import partial
from heapq import heappop, heappush
from itertools import compress, repeat
from operator import sub
from typing import TYPE_CHECKING

from seqdedup.base.hashes import MASK64
from seqdedup.engine.pykernel import KEY
from seqdedup.engine.stream_decider import Entry, Run
from seqdedup.run.stream_path import INVERTED

if TYPE_CHECKING:
    from seqdedup._kernel import StreamMatcher
    from seqdedup.run.stream_fold import StreamFolder

RUN_FIELDS = 8  # int64 per closed run the kernel hands over (StreamMatcher.closed_runs)
PART_FIELDS = 11  # int64 per folded part (StreamMatcher.folded_parts)
# A record's name index is -1 for a continuation line: its sign byte (its most
# significant) is 0xff then, and below 0x80 for a name; NAMED maps that byte to whether
# the record is named
NAMED = bytes.maketrans(bytes(range(256)), b"\x01" * 255 + b"\x00")


class PositionStreams:
    """Each position's stream (no filters: every record's), kept per batch: the
    positions of its named records and their names (found by the kernel's prefix
    program: nothing made per record), or every record's name (found in Python)."""

    def __init__(self) -> None:
        self._bases: list[int] = []  # each batch's first position
        # (its named records' offsets, their names' indices, the names, the stream
        # before the batch)
        self._batches: list[tuple[Sequence[int], Sequence[int], list[str], str]] = []
        self._end = 0

    def add(self, indices: array[int], names: list[str], before: str) -> tuple[list[str], str]:
        """A batch named by indices into ``names`` (-1: a continuation line);
        ``before``: the stream of the record before it. Its streams in the order they
        first come (``before`` first where the batch begins with a continuation line),
        and the stream of its last record."""
        if not indices:
            return [], before
        # (each index's sign byte: 0xff only for -1; a named record's flag is 1)
        size = indices.itemsize
        sign = size - 1 if sys.byteorder == "little" else 0
        mask = indices.tobytes()[sign::size].translate(NAMED)
        named = list(compress(indices, mask))
        self._add((list(compress(range(len(mask)), mask)), named, names, before), len(mask))
        order = [names[index] for index in dict.fromkeys(named)]
        if not mask[0]:
            order.insert(0, before)
        return order, names[named[-1]] if named else before

    def add_named(self, streams: list[str]) -> None:
        """A batch whose every record's stream is given."""
        if streams:
            every = range(len(streams))
            self._add((every, every, streams, ""), len(streams))

    def _add(self, batch: tuple[Sequence[int], Sequence[int], list[str], str], length: int) -> None:
        self._bases.append(self._end)
        self._batches.append(batch)
        self._end += length

    def __getitem__(self, position: int) -> str:
        at = bisect_right(self._bases, position) - 1
        offsets, indices, names, before = self._batches[at]
        last = bisect_right(offsets, position - self._bases[at]) - 1  # its last named record
        return before if last < 0 else names[indices[last]]


class KernelRun(Run):
    """A duplicate run the kernel's stream matcher closed (its content known)."""

    __slots__ = ("_known",)

    def __init__(
        self,
        first: Entry,
        last: Entry,
        length: int,
        content: int,
        source: tuple[int, int, int, str],
    ) -> None:
        self.first, self.last, self.length = first, last, length
        self.source = source
        self.differs = False
        self.count = 0
        self.closed = True
        self._known = content

    @property
    def content(self) -> int:
        return self._known


class ReportedRuns:
    """Markers, ``--top`` and fold lines from the runs the kernel's stream matcher hands
    over (``report_runs``): each closed run (or with ``fold``, each part of a run) held
    until its last record is written, then reported right after it. The matcher holds
    back the records of runs (parts) still open; a closed run's first records may have
    gone before its last (another stream's record not decided yet stops the output),
    so what a report needs of its records is taken as the matcher hands it over."""

    def __init__(
        self,
        matcher: StreamMatcher,
        report: Callable[[Run, list[bytes]], bool],
        folder: StreamFolder | None,
    ) -> None:
        self.streams = PositionStreams()
        self._matcher = matcher
        self._report = report
        self._folder = folder
        self._written = 0  # positions written so far
        # what is due right after a position (output order): a closed run's report, or a
        # part's fold line (and its run's report when it ends the run)
        self._due: list[tuple[int, Callable[[list[bytes]], bool]]] = []
        self._firsts: dict[int, bytes] = {}  # fold: each open run's first record

    def write(
        self, pending: list[bytes], keyed: list[bytes], flags: bytes
    ) -> tuple[list[bytes], bool]:
        """The first ``len(flags)`` pending records as their flags say, each report
        after its last record; and whether the last line is a report. ``keyed``: the
        pending records without their streams' names (fold)."""
        if self._folder is None:
            self._take_closed(pending)
        else:
            self._take_parts(pending, keyed)
        cut, base = len(flags), self._written
        released, written = pending[:cut], flags.translate(INVERTED)
        out: list[bytes] = []
        at, marked_last = 0, False
        while self._due and self._due[0][0] < base + cut:
            last, report = heappop(self._due)
            stop = last - base + 1
            out += compress(released[at:stop], written[at:stop])
            at = stop
            marked_last = report(out) and stop == cut
        out += compress(released[at:], written[at:])
        self._written += cut
        return out, marked_last

    def _take_closed(self, pending: list[bytes]) -> None:
        """The runs closed since the last call (open until now: their first records are
        pending)."""
        closed = self._matcher.closed_runs()
        fields, done = array("q", closed), self._written
        for k in range(0, len(fields), RUN_FIELDS):
            first, last, length, source_end, source_first, lo, hi = fields[k + 1 : k + 8]
            record = pending[first - done]
            run = self._run(record, (first, last, length), (source_end, source_first), lo, hi)
            report: Callable[[list[bytes]], bool] = partial(self._report, run)
            heappush(self._due, (last, report))

    def _take_parts(self, pending: list[bytes], keyed: list[bytes]) -> None:
        """The parts handed over since the last call (held until now: their records are
        pending), each with its records and key hashes."""
        fields, positions, keys = self._matcher.folded_parts()
        numbers, places, done = array("q", fields), array("q", positions), self._written
        at = 0
        for k in range(0, len(numbers), PART_FIELDS):
            run_first, last, length, source_end, source_first, lo, hi, first, n, ends = numbers[
                k + 1 : k + PART_FIELDS
            ]
            if first == run_first:
                self._firsts[run_first] = pending[first - done]
            record = self._firsts.pop(run_first) if ends else self._firsts[run_first]
            run = self._run(record, (run_first, last, length), (source_end, source_first), lo, hi)
            records = _picked(keyed, places[at : at + n], done)
            part = (keys[at * KEY : (at + n) * KEY], records, (first + 1, last + 1), bool(ends))
            fold: Callable[[list[bytes]], bool] = partial(self._fold, run, part)
            heappush(self._due, (last, fold))
            at += n

    def _fold(
        self,
        run: KernelRun,
        part: tuple[bytes, list[bytes], tuple[int, int], bool],
        out: list[bytes],
    ) -> bool:
        assert self._folder is not None
        out.append(self._folder.folded(run, *part))
        if part[3]:  # (the run ends: its sequence counted, --top)
            self._report(run, out)
        return True

    def _run(
        self, record: bytes, span: tuple[int, int, int], source: tuple[int, int], lo: int, hi: int
    ) -> KernelRun:
        """The run of positions ``span`` (first, last, length) whose first record is
        ``record``, repeating the window of positions ``source`` (last, first)."""
        streams, (first, last, length), (source_end, source_first) = self.streams, span, source
        start = Entry(record, first + 1, streams[first])  # (a number: position + 1)
        end = Entry(b"", last + 1, streams[last])
        content = (lo & MASK64) | (hi & MASK64) << 64
        where = (source_end, source_first + 1, source_end + 1, streams[source_end])
        return KernelRun(start, end, length, content, where)


def _picked(records: list[bytes], positions: array[int], done: int) -> list[bytes]:
    """The records at ``positions`` (``done``: the position of ``records[0]``); one
    slice where they follow each other (a stream alone in its stretch)."""
    first = positions[0] - done
    if positions[-1] - done - first == len(positions) - 1:
        return records[first : first + len(positions)]
    return list(map(records.__getitem__, map(sub, positions, repeat(done))))
