"""What ``--report`` shows of a run, gathered while it runs (:class:`RunPicture`).

Nothing here runs per record. The picture watches each chunk of input (its bytes,
spooled to an unlinked temporary file so that the page can show a sequence's full text,
and one record's timestamp every ``stride`` bytes), each duplicate piece the run closes
(where it starts, the records it removed, its sequence, its stream, whether a library
held it) and where each input ends. At the end, :func:`page_data` (in ``page.data``)
turns that into the page's data and ``page.html`` draws it.
"""

from __future__ import annotations

import operator
import os
import tempfile
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seqdedup.engine.pieces import Piece
    from seqdedup.run.top import TopSequences

SPOOL_LIMIT = 1 << 30  # input bytes kept for the sequences' texts; past it, first records
SAMPLES = 1024  # records sampled per stride: then every other sample is dropped, the
# stride doubled (so at most SAMPLES are kept, spread over the whole input)
FIRST_STRIDE = 256  # bytes between two sampled records, at first
UNTIMED_AFTER = 32  # sampled records: when under half of these had a timestamp, no more
PIECES_LIMIT = 1 << 20  # pieces kept: past it, neighbours are merged pairwise
SEARCHED = 256  # bytes of a sampled record searched for its timestamp


class PieceLog:
    """The duplicate pieces of a run, as columns (arrays): where each starts, how many
    records it removed, its sequence, its stream, whether a library held it."""

    def __init__(self) -> None:
        # The pieces: first record (0-based, in input order), records removed less one
        # (the kernel's end - start), sequence (the low 64 bits of its key:
        # ``sequence_key``), stream (a lane of ``lane_names``), whether it repeats a
        # library sequence
        self.starts: array[int] = array("q")
        self.extents: array[int] = array("q")
        self.sequences: array[int] = array("q")
        self.lanes: array[int] = array("q")
        self.from_library: array[int] = array("b")
        self._lengths: array[int] = array("q")
        # stream runs only (their records lie among other streams'): first record ->
        # the records from it to the run's last, less one
        self.spans: dict[int, int] = {}
        self.lane_names: dict[str, int] = {}
        self.coarsened = 0  # how many times neighbouring pieces were merged

    def add_packed(self, packed: bytes | None, record_number: Callable[[int], int] | None) -> None:
        """The kernel's pieces as it packs them (six int64 each: start, end, source,
        count, the two lanes of the sequence's key), taken in without a Python object
        per piece; ``record_number``: tracked index -> input record number, where
        filters make them differ (None: they are the same)."""
        if not packed:
            return
        values = array("q")
        values.frombytes(packed)
        starts, ends = values[0::6], values[1::6]
        self.extents += array("q", map(operator.sub, ends, starts))
        if record_number is not None:  # (filters: where each piece starts, by number)
            starts = array("q", (record_number(i) - 1 for i in starts))
        self.starts += starts
        self.sequences += values[4::6]
        self.lanes.frombytes(bytes(8 * len(starts)))
        self.from_library += array("b", map((0).__gt__, values[2::6]))
        self._check_size()

    def add_pieces(self, pieces: Iterable[Piece], record_number: Callable[[int], int]) -> None:
        """Pieces of the Python engine (tracked indices, made input record numbers by
        ``record_number``)."""
        for piece in pieces:
            start = record_number(piece.start) - 1
            self.add(start, piece.end - piece.start, piece.identity, 0, piece.source_start < 0)

    def add_stream_run(
        self,
        number: int,
        last: int,
        length: int,
        sequence: int,
        stream: str,
        from_library: bool,
    ) -> None:
        """A ``--stream-by`` run: its first and last records' numbers (1-based) and how
        many records it removed (they lie among other streams' between the two)."""
        lane = self.lane_names.setdefault(stream, len(self.lane_names))
        if last > number + length - 1:
            self.spans[number - 1] = last - number
        self.add(number - 1, length - 1, sequence, lane, from_library)

    def add(self, start: int, extent: int, sequence: int, lane: int, from_library: bool) -> None:
        """One piece: its first record, the records it removed less one."""
        self.starts.append(start)
        self.extents.append(extent)
        self.sequences.append(sequence_key(sequence))
        self.lanes.append(lane)
        self.from_library.append(from_library)
        self._check_size()

    def _check_size(self) -> None:
        while len(self.starts) >= PIECES_LIMIT:
            self._coarsen()

    @property
    def lengths(self) -> array[int]:
        """The records each piece removed (made once the run has ended)."""
        if len(self._lengths) != len(self.extents):
            self._lengths = array("q", (extent + 1 for extent in self.extents))
        return self._lengths

    def _coarsen(self) -> None:
        """Neighbouring pieces merged pairwise (the first's start, both's records, the
        longer's sequence): the records removed stay exact, where they lie is then
        known to within the two pieces."""
        starts, extents, sequences = self.starts, self.extents, self.sequences
        lanes, library = self.lanes, self.from_library
        merged = (array("q"), array("q"), array("q"), array("q"), array("b"))
        for i in range(0, len(starts) - 1, 2):
            j = i + 1
            longer = i if extents[i] >= extents[j] else j
            merged[0].append(min(starts[i], starts[j]))
            merged[1].append(extents[i] + extents[j] + 1)
            merged[2].append(sequences[longer])
            merged[3].append(lanes[longer])
            merged[4].append(library[longer])
        if len(starts) % 2:
            columns = (starts, extents, sequences, lanes, library)
            for column, source in zip(merged, columns, strict=True):
                column.append(source[-1])
        self.starts, self.extents, self.sequences, self.lanes, self.from_library = merged
        self.spans.clear()  # (merged: each drawn from its first record on)
        self.coarsened += 1


class KeptInput:
    """The run's input kept to be read back, the inputs one after another: a named
    regular file read as it is (not decompressed) from the file itself (``files``: the
    run's inputs, when they stay in place: not --follow), the rest copied into an
    unlinked temporary file (the spool, at most SPOOL_LIMIT bytes)."""

    def __init__(self, files: Sequence[str]) -> None:
        self._files = files
        self._spool: IO[bytes] | None = None
        self.spool_size = 0
        # In order: (where it starts in the kept input, its length, a file's name or
        # None for the spool, where it starts in that file or the spool)
        self._segments: list[list[Any]] = []
        self._reading: dict[str, IO[bytes]] = {}  # (files opened to read back)
        self._input = -1  # the input whose chunks come now
        self.size = 0  # bytes kept

    def keep(self, chunk: bytes, input_number: int) -> bool:
        """Keep a chunk where it can be read back: in its file (an input whose file
        holds these very bytes at its start), else in the spool (False past its limit)."""
        if self._input != input_number:  # an input begins
            self._input = input_number
            name = self._files[self._input] if self._input < len(self._files) else "-"
            if _holds(name, chunk):
                self._segments.append([self.size, 0, name, 0])
            else:
                self._segments.append([self.size, 0, None, self.spool_size])
        segment = self._segments[-1]
        if segment[2] is not None:
            segment[1] += len(chunk)
            self.size += len(chunk)
            return True
        return self.spool(chunk)

    def spool(self, data: bytes) -> bool:
        """Copy bytes to the spool, the last segment's (False past its limit)."""
        if self.spool_size + len(data) > SPOOL_LIMIT:
            return False
        if self._segments[-1][2] is not None:
            self._segments.append([self.size, 0, None, self.spool_size])
        if self._spool is None:
            self._spool = tempfile.TemporaryFile()  # noqa: SIM115  # (see close())
        self._spool.write(data)
        self.spool_size += len(data)
        self._segments[-1][1] += len(data)
        self.size += len(data)
        return True

    def read(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes of the kept input from ``offset`` (less at a segment's
        end; nothing past the last)."""
        segments = self._segments
        which = bisect_right([segment[0] for segment in segments], offset) - 1
        if which < 0 or offset >= segments[which][0] + segments[which][1]:
            return b""
        start, length, name, base = segments[which]
        size = min(size, start + length - offset)
        source = self._spool if name is None else self._opened(name)
        if source is None:
            return b""
        source.seek(base + offset - start)
        return source.read(size)

    def _opened(self, name: str) -> IO[bytes] | None:
        if name not in self._reading:
            try:
                self._reading[name] = open(name, "rb")  # noqa: SIM115  # (see close())
            except OSError:
                return None
        return self._reading[name]

    def close(self) -> None:
        for source in [self._spool, *self._reading.values()]:
            if source is not None:
                source.close()
        self._spool, self._reading = None, {}


class RunPicture(PieceLog):
    """The run as the report page shows it (see the module docstring). ``delimiter``:
    the run's record delimiter (empty in byte mode: then no text and no timestamps).

    While the run runs nothing is counted: samples are kept by their place in the kept
    input; the first read back (:meth:`text_of`, :attr:`sample_at`) counts its records
    once, in C, and numbers them. The kept input is the inputs one after another: a
    named regular file that is read as it is (not decompressed) is read back from the
    file itself (``files``: the run's inputs, when they stay in place: not --follow);
    the rest is copied into the spool."""

    def __init__(self, delimiter: bytes, files: Sequence[str] = ()) -> None:
        super().__init__()
        self.delimiter = delimiter
        self.bytes_read = 0
        self._records = 0  # records of the inputs that ended (the run's own count)
        self.kept = KeptInput(files)
        self._full = False  # the spool stopped at its limit (nothing after it is kept)
        self._ends_delimited = True
        # (record index, spool offset) of records that start a stretch of the spool:
        # reading a record seeks to the nearest one before it (made by _index)
        self._marks: tuple[array[int], array[int]] | None = None
        self.stride = FIRST_STRIDE
        self._next_sample = 0
        self._sample_offsets: array[int] = array("q")  # where each sampled record starts
        self._sample_at: array[int] = array("q")  # its record index (made by _index)
        self.sample_time: array[float] = array("d")  # its time, in seconds
        self.samples_tried = 0
        self.samples_found = 0  # (of those tried, how many had a timestamp)
        self._tried_at_stride = 0
        self.sampling = True  # (False once the records turn out to have no timestamps)
        from seqdedup.engine.choice import chosen_engine

        self._stamp = chosen_engine().first_timestamp
        self.input_ends: list[int] = []  # record index where each input ended
        self.ranking: TopSequences | None = None  # the run's --top ranking (at its end)

    def ranked_by(self, ranking: TopSequences | None) -> None:
        """The run ended: its ``--top`` ranking (which the page's table reads)."""
        self.ranking = ranking

    # -- the input ---------------------------------------------------------------
    def __call__(self, chunk: bytes) -> None:
        """An ``on_chunk`` tap: one chunk of input as decoded."""
        self.bytes_read += len(chunk)
        delimiter = self.delimiter
        if not delimiter or self._full or not self.kept.keep(chunk, len(self.input_ends)):
            self._full = bool(delimiter)
            return
        start = self.kept.size - len(chunk)
        self._marks = None
        size = len(delimiter)
        while self.sampling and self._next_sample < self.kept.size:
            begin = chunk.find(delimiter, max(0, self._next_sample - start - size)) + size
            if begin < size or begin >= len(chunk):
                break
            end = chunk.find(delimiter, begin, begin + SEARCHED)
            self._sample(start + begin, chunk[begin : end if end >= 0 else begin + SEARCHED])
            self._next_sample = start + begin + self.stride
        self._ends_delimited = chunk.endswith(delimiter)

    def _sample(self, offset: int, record: bytes) -> None:
        from seqdedup.config.normalize import timestamp_seconds

        self.samples_tried += 1
        seconds = timestamp_seconds(self._stamp(record))
        if seconds is not None:
            self.samples_found += 1
            self._sample_offsets.append(offset)
            self.sample_time.append(seconds)
        tried = self.samples_tried
        if tried == UNTIMED_AFTER and 2 * self.samples_found < tried:
            self.sampling = False  # (a record-number axis: no time is read any more)
        self._tried_at_stride += 1
        if self._tried_at_stride >= SAMPLES:
            self._tried_at_stride = SAMPLES // 2
            self._sample_offsets = self._sample_offsets[::2]
            self.sample_time = self.sample_time[::2]
            self.stride *= 2

    def end_input(self, released: int) -> None:
        """An input ended after ``released`` records in all (the run's own count: an
        input whose last record had no delimiter is given one in the spool)."""
        if self.kept.size and not self._full and not self._ends_delimited:
            # (a delimiter of its own after the input's last record, in the spool)
            self._full = not self.kept.spool(self.delimiter)
            self._marks = None
            self._ends_delimited = True
        self._records = released
        if not self.input_ends or self.input_ends[-1] != released:
            self.input_ends.append(released)

    # -- reading back ------------------------------------------------------------
    @property
    def records(self) -> int:
        return self._records

    @property
    def spooled(self) -> int:
        """Bytes of input kept to be read back (in their files or the spool)."""
        return self.kept.size

    @property
    def sample_at(self) -> array[int]:
        """The record index of each timestamp sample."""
        self._index()
        return self._sample_at

    def _index(self) -> None:
        """Number the spool's records once: the marks text_of seeks to (one per MiB),
        and each sample's record index."""
        if self._marks is not None:
            return
        marks = (array("q", [0]), array("q", [0]))
        self._marks, self._sample_at = marks, array("q")
        if not self.kept.size:
            return
        delimiter, size = self.delimiter, len(self.delimiter)
        offsets, at = self._sample_offsets, self._sample_at
        records, taken, held, k = 0, 0, b"", 0  # (taken: where held starts)
        while block := self.kept.read(taken + len(held), 1 << 20):
            data = held + block
            cut = data.rfind(delimiter) + size  # (whole delimiters only: they may span)
            counted, done = 0, 0
            while k < len(offsets) and offsets[k] < taken + cut:
                done += data.count(delimiter, counted, offsets[k] - taken)
                counted = offsets[k] - taken
                at.append(records + done)
                k += 1
            first = data.find(delimiter)
            if first >= 0:
                marks[0].append(records + 1)
                marks[1].append(taken + first + size)
            records += done + data.count(delimiter, counted, max(cut, 0))  # (one count)
            held, taken = data[max(cut, 0) :], taken + max(cut, 0)

    def text_of(self, first: int, count: int) -> list[bytes] | None:
        """Records ``first`` .. ``first + count - 1`` (0-based, input order) from the
        spool; None where the spool does not hold them (past its limit)."""
        self._index()
        if count <= 0 or self._marks is None:
            return None
        records, offsets = self._marks
        mark = bisect_right(records, first) - 1
        skip = first - records[mark]
        at = offsets[mark]
        delimiter, found = self.delimiter, list[bytes]()
        data = b""
        while len(found) <= skip + count:
            more = self.kept.read(at, 1 << 16)
            at += len(more)
            if not more:
                break
            parts = (data + more).split(delimiter)
            data = parts.pop()
            found += parts
        found = found[skip : skip + count]
        return found if len(found) == count else None

    def close(self) -> None:
        self.kept.close()


def sequence_key(identity: int) -> int:
    """A sequence's key as the picture keeps it: the low 64 bits, as a signed int64
    (the kernel's first lane)."""
    low = identity & 0xFFFFFFFFFFFFFFFF
    return low - (1 << 64) if low >= 1 << 63 else low


def _holds(name: str, chunk: bytes) -> bool:
    """Whether a named regular file starts with these bytes (then it is read back in
    place: it was not decompressed)."""
    import stat

    if name == "-":
        return False
    try:
        with open(name, "rb") as file:
            return stat.S_ISREG(os.fstat(file.fileno()).st_mode) and file.read(len(chunk)) == chunk
    except OSError:
        return False
