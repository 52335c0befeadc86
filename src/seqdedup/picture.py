"""What ``--report`` shows of a run, gathered while it runs (:class:`RunPicture`).

Nothing here runs per record. The picture watches each chunk of input (its bytes,
spooled to an unlinked temporary file so that the page can show a sequence's full text,
and one record's timestamp every ``stride`` bytes), each duplicate piece the run closes
(where it starts, the records it removed, its sequence, its stream, whether a library
held it) and where each input ends. At the end, :func:`page_data` (in ``pagedata``)
turns that into the page's data and ``htmlpage`` draws it.
"""

from __future__ import annotations

import tempfile
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from seqdedup.attribution import Piece
    from seqdedup.report import TopSequences

SPOOL_LIMIT = 1 << 30  # input bytes kept for the sequences' texts; past it, first records
SAMPLES = 4096  # timestamp samples kept: past it every other is dropped, the stride doubled
FIRST_STRIDE = 256  # bytes between two sampled records, at first
PIECES_LIMIT = 1 << 20  # pieces kept: past it, neighbours are merged pairwise
SEARCHED = 256  # bytes of a sampled record searched for its timestamp


class RunPicture:
    """The run as the report page shows it (see the module docstring). ``delimiter``:
    the run's record delimiter (empty in byte mode: then no text and no timestamps)."""

    def __init__(self, delimiter: bytes) -> None:
        self.delimiter = delimiter
        self.bytes_read = 0
        self._records = 0  # records begun before the current chunk
        self._spool: IO[bytes] | None = None
        self.spooled = 0
        self._ends_delimited = True
        # (record index, spool offset) of records that start a stretch: reading a
        # record seeks to the nearest one before it
        self._marks: tuple[array[int], array[int]] = (array("q", [0]), array("q", [0]))
        self.stride = FIRST_STRIDE
        self._next_sample = 0
        self.sample_at: array[int] = array("q")  # record index of each timestamp sample
        self.sample_time: array[float] = array("d")  # its time, in seconds
        self.samples_tried = 0
        # The pieces: first record (0-based, in input order), records removed, sequence,
        # stream (a lane of ``lane_names``), whether it repeats a library sequence
        self.starts: array[int] = array("q")
        self.lengths: array[int] = array("q")
        self.sequences: array[int] = array("q")  # (numbered: a sequence's key is any int)
        self.numbers: dict[int, int] = {}  # a sequence's key -> its number in ``sequences``
        self.lanes: array[int] = array("l")
        self.from_library: array[int] = array("b")
        self.lane_names: dict[str, int] = {}
        self.coarsened = 0  # how many times neighbouring pieces were merged
        self.input_ends: list[int] = []  # record index where each input ended
        self.ranking: TopSequences | None = None  # the run's --top ranking (set by the run)

    # -- the input ---------------------------------------------------------------
    def __call__(self, chunk: bytes) -> None:
        """An ``on_chunk`` tap: one chunk of input as decoded."""
        start = self.bytes_read
        self.bytes_read += len(chunk)
        delimiter = self.delimiter
        if not delimiter:
            return
        self._spool_chunk(chunk)
        first = chunk.find(delimiter)
        if first >= 0:  # the record after the first delimiter starts a stretch
            self._mark(self._records + 1, self.spooled - len(chunk) + first + len(delimiter))
        counted, count = 0, 0
        size = len(delimiter)
        while self._next_sample < start + len(chunk):
            begin = chunk.find(delimiter, max(0, self._next_sample - start - size))
            if begin < 0:
                break
            begin += size
            if begin >= len(chunk):
                break
            end = chunk.find(delimiter, begin, begin + SEARCHED)
            count += chunk.count(delimiter, counted, begin)
            counted = begin
            self._sample(
                self._records + count, chunk[begin : end if end >= 0 else begin + SEARCHED]
            )
            self._next_sample = start + begin + self.stride
        self._records += count + chunk.count(delimiter, counted)
        self._ends_delimited = chunk.endswith(delimiter)

    def _spool_chunk(self, chunk: bytes) -> None:
        if self.spooled + len(chunk) > SPOOL_LIMIT:
            return
        if self._spool is None:
            self._spool = tempfile.TemporaryFile()  # noqa: SIM115  # (closed by close())
        self._spool.write(chunk)
        self.spooled += len(chunk)

    def _mark(self, record: int, offset: int) -> None:
        records, offsets = self._marks
        if offset <= self.spooled and record > records[-1]:
            records.append(record)
            offsets.append(offset)

    def _sample(self, index: int, record: bytes) -> None:
        from seqdedup.fold import first_timestamp, timestamp_seconds

        self.samples_tried += 1
        seconds = timestamp_seconds(first_timestamp(record))
        if seconds is None:
            return
        self.sample_at.append(index)
        self.sample_time.append(seconds)
        if len(self.sample_at) > SAMPLES:
            self.sample_at = self.sample_at[::2]
            self.sample_time = self.sample_time[::2]
            self.stride *= 2

    def end_input(self, released: int) -> None:
        """An input ended after ``released`` records in all (the run's own count: an
        input whose last record had no delimiter is given one in the spool)."""
        if self.delimiter and not self._ends_delimited and self._spool is not None:
            if self.spooled + len(self.delimiter) <= SPOOL_LIMIT:
                self._spool.write(self.delimiter)
                self.spooled += len(self.delimiter)
            self._ends_delimited = True
        self._records = released
        self._mark(released, self.spooled)
        if not self.input_ends or self.input_ends[-1] != released:
            self.input_ends.append(released)

    # -- the pieces --------------------------------------------------------------
    def add_pieces(self, pieces: Iterable[Piece], record_number: Callable[[int], int]) -> None:
        """Pieces of the chunk or record path (tracked indices, made input record
        numbers by ``record_number``)."""
        for piece in pieces:
            self.add(
                record_number(piece.start) - 1,
                piece.end - piece.start + 1,
                piece.identity,
                0,
                piece.source_start < 0,
            )

    def add_stream_run(
        self, number: int, length: int, sequence: int, stream: str, from_library: bool
    ) -> None:
        """A ``--stream-by`` run: its first record's number (1-based), its length."""
        lane = self.lane_names.setdefault(stream, len(self.lane_names))
        self.add(number - 1, length, sequence, lane, from_library)

    def add(self, start: int, length: int, sequence: int, lane: int, from_library: bool) -> None:
        self.starts.append(start)
        self.lengths.append(length)
        self.sequences.append(self.numbers.setdefault(sequence, len(self.numbers)))
        self.lanes.append(lane)
        self.from_library.append(from_library)
        if len(self.starts) >= PIECES_LIMIT:
            self._coarsen()

    def _coarsen(self) -> None:
        """Neighbouring pieces merged pairwise: the records removed stay exact, where
        they lie is then known to within the two pieces."""
        starts, lengths, sequences = self.starts, self.lengths, self.sequences
        lanes, library = self.lanes, self.from_library
        merged = (array("q"), array("q"), array("q"), array("l"), array("b"))
        for i in range(0, len(starts) - 1, 2):
            longer = i if lengths[i] >= lengths[i + 1] else i + 1
            merged[0].append(starts[i])
            merged[1].append(lengths[i] + lengths[i + 1])
            merged[2].append(sequences[longer])
            merged[3].append(lanes[longer])
            merged[4].append(library[longer])
        if len(starts) % 2:
            for column, source in zip(
                merged, (starts, lengths, sequences, lanes, library), strict=True
            ):
                column.append(source[-1])
        self.starts, self.lengths, self.sequences, self.lanes, self.from_library = merged
        self.coarsened += 1

    # -- reading back ------------------------------------------------------------
    @property
    def records(self) -> int:
        return self._records

    def text_of(self, first: int, count: int) -> list[bytes] | None:
        """Records ``first`` .. ``first + count - 1`` (0-based, input order) from the
        spool; None where the spool does not hold them (past its limit)."""
        if self._spool is None or count <= 0:
            return None
        records, offsets = self._marks
        mark = bisect_right(records, first) - 1
        skip = first - records[mark]
        self._spool.seek(offsets[mark])
        delimiter, found = self.delimiter, list[bytes]()
        data = b""
        while len(found) < skip + count:
            more = self._spool.read(1 << 16)
            if not more:
                break
            data += more
            parts = data.split(delimiter)
            data = parts.pop()
            found += parts
            if len(found) > skip + count:
                break
        found = found[skip : skip + count]
        if len(found) < count:
            return None
        return found

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None
