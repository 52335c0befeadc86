"""What a run has decided so far, booked by whichever path feeds it.

:class:`Ledger` keeps the run's accounting: the statistics, how many records were
released (record numbers are 1-based), whether the output ends with a record or a
marker, ``--top``'s run heads and counts, each input's counts, and what the library
session observes. A feeding path (``feeding``, ``streamby.path``) hands its decisions
to it; nothing else writes these figures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from seqdedup.engine.attribution import RunHeads
from seqdedup.engine.runs import runs_of
from seqdedup.run.attribution_thread import AttributionThread
from seqdedup.run.markers import PieceReport
from seqdedup.run.stats import Stats
from seqdedup.run.top import HEAD_SEARCH, TopSequences, shown_head

if TYPE_CHECKING:
    from seqdedup.engine.attribution import Attribution
    from seqdedup.engine.matcher import Matcher
    from seqdedup.engine.pieces import Piece
    from seqdedup.library.save import RunSaver
    from seqdedup.run.stats import CountsRow


class RunObserver(Protocol):
    """What watches a run as it goes (a report page's picture: ``page.picture``). The
    run's ledger is its one caller: the input as it is fed, every piece (packed by the
    kernel's attribution, or as Pieces), each stream run, where each input ends, and
    the ``--top`` ranking at the end."""

    def __call__(self, chunk: bytes, /) -> None: ...
    def add_packed(
        self, packed: bytes | None, record_number: Callable[[int], int] | None, /
    ) -> None: ...
    def add_pieces(
        self, pieces: Iterable[Piece], record_number: Callable[[int], int], /
    ) -> None: ...
    def add_stream_run(
        self, first: int, last: int, length: int, content: int, stream: str, library: bool, /
    ) -> None: ...
    def end_input(self, released: int, /) -> None: ...
    def ranked_by(self, ranking: TopSequences | None, /) -> None: ...


class DecidedStep(NamedTuple):
    """What one step of the record path decided, handed on as one object: tracked
    records ``first`` .. ``first + len(keep) - 1``, whether each is kept, their bytes
    (for ``--top`` and the library; empty when neither reads them), which of them
    first-seen windows cover (with a library saved) and the pieces attribution closed.
    (A NamedTuple: dataclasses would cost every start-up 12 ms of imports.)"""

    first: int
    keep: list[bool]
    records: list[bytes]
    new_material: list[bool] | None
    pieces: list[Piece]


class Ledger:
    """The run's accounting, over the stages that read or feed it."""

    def __init__(
        self,
        stats: Stats,
        attributor: Attribution,
        matcher: Matcher,
        report: PieceReport,
        top: TopSequences | None,
        saver: RunSaver | None,
        shown: Callable[[bytes], bytes] | None = None,
        observer: RunObserver | None = None,
        filtered: bool = False,
    ) -> None:
        self.stats = stats
        self._shown = shown  # what --top shows of a record (the JSON key compared)
        self._attributor = attributor
        self._matcher = matcher
        self._report = report
        self.top = top
        self._observer = observer  # --report: the run's picture
        # (with filters a piece's tracked index is not its record number)
        self._numbers = attributor.record_number if filtered else None
        self._saver = saver
        self.run_heads = RunHeads()  # with --top: each duplicate run's first record
        self.released = 0  # records released so far (record numbers are 1-based)
        # Whether the last thing released was the last released record (not a marker);
        # after the end of input this tells whether its final record ends the output.
        self.last_record_written = False
        self._input_counted = (0, 0, 0)  # the counts at the start of the current input

    @property
    def reads_records(self) -> bool:
        """Whether booking needs the decided records' bytes (``--top``, a library)."""
        return self.top is not None or self._saver is not None

    def written_last(self, record: bool) -> None:
        """What the output released last is: a record (True) or a marker."""
        self.last_record_written = record

    def lines(self, placed: list[tuple[int, bytes]]) -> list[bytes]:
        """Summary lines written on their own (not placed among records)."""
        if placed:
            self.last_record_written = False  # a line ends this output
        return [text for _, text in placed]

    def count(self, released: int, kept: int) -> None:
        """Statistics for ``released`` more records, ``kept`` of them kept (normal mode)."""
        stats = self.stats
        stats.total += released
        stats.emitted += kept
        stats.skipped += released - kept
        if not isinstance(self._attributor, AttributionThread):  # (that one: at the end)
            stats.unique_sequences = self._attributor.identified
        self.released += released

    def note_pieces(self, pieces: list[Piece]) -> None:
        """``--top``: count each closed piece, with its first record when it starts a
        duplicate run (the same on the kernel's chunk path and the record path)."""
        if self.top is None:
            return
        if self._observer is not None:
            packed = self._attributor.take_packed()  # (the kernel's: every piece)
            if packed:
                self._observer.add_packed(packed, self._numbers)
            else:
                self._observer.add_pieces(pieces, self._attributor.record_number)
        heads, fields, top = self.run_heads, self._report.source_of, self.top
        # (when the kernel counts, the pieces here are each sequence's first)
        observe = top.first_seen if top.counted_elsewhere else top.observe
        named = self._report.inputs.named
        shown = self._shown
        for piece in pieces:
            head = heads.get(piece.start)
            if head is not None and shown is not None:
                head = shown(head)
            observe(piece, fields, head, named)
        heads.trim()

    def run_heads_of(self, base: int, size: int, runs: Sequence[tuple[int, int, bytes]]) -> None:
        """``--top`` on the chunk path: each duplicate run of the next ``size`` tracked
        records from ``base`` on, with its first record (before its pieces close)."""
        self.run_heads.add(base, size, runs)

    def take_new_material(self) -> list[bool] | None:
        """With a library saved: which records decided since the last call first-seen
        windows cover (the matcher notes them as it decides)."""
        if self._saver is None:
            return None
        taken = self._matcher.new_material
        self._matcher.new_material = []
        return taken

    def book(self, decided: DecidedStep) -> None:
        """The record path's decisions, for ``--top`` and the library."""
        if self.top is not None:
            base = decided.first
            heads = [
                (base + a, base + b, shown_head(decided.records[a : min(b, a + HEAD_SEARCH)]))
                for a, b in runs_of(decided.keep, False)
            ]
            self.run_heads.add(base, len(decided.keep), heads)
            self.note_pieces(decided.pieces)
        if self._saver is not None:
            assert decided.new_material is not None
            self._saver.observe(
                decided.records, decided.keep, decided.new_material, decided.first, decided.pieces
            )

    def finish(self, top: int | None) -> None:
        """End of input: the last input's counts, the ``top`` sequences asked for
        (``--top N``) and the sequences found; a report page gets the run's ranking."""
        self.end_input()
        if self.top is not None and top:
            self.stats.top_sequences = self.top.top(top)
        self.stats.unique_sequences = self._attributor.identified
        if self._observer is not None:
            self._observer.ranked_by(self.top)

    def loaded(self, sequences: int) -> None:
        """The libraries read hold ``sequences`` sequences."""
        self.stats.library_loaded = sequences

    def saved(self, sequences: int) -> None:
        """The run's library was saved with ``sequences`` new ones (0 while saving)."""
        self.stats.library_saved = sequences

    def streams(self, document: list[CountsRow]) -> None:
        """--stream-by: the counts of each stream so far."""
        self.stats.streams = document

    def read(self, chunk: bytes) -> None:
        """Raw input, as it is fed (a report page samples it and keeps its text)."""
        if self._observer is not None:
            self._observer(chunk)

    def stream_run(
        self, first: int, last: int, length: int, content: int, stream: str, library: bool
    ) -> None:
        """--stream-by: a duplicate run closed (a report page draws it)."""
        if self._observer is not None:
            self._observer.add_stream_run(first, last, length, content, stream, library)

    def interrupted(self, stopped: int | None) -> None:
        """The signal that cut the run short (None: none did)."""
        self.stats.interrupted = stopped

    def end_input(self) -> None:
        """With several inputs, the counts of the input that ended; ``--top`` starts
        its run heads again."""
        self.run_heads = RunHeads()
        if self._observer is not None:
            self._observer.end_input(self.released)
        inputs = self._report.inputs
        if not inputs.named:
            return
        stats = self.stats
        total, emitted, skipped = self._input_counted
        if stats.files is None:
            stats.files = []
        stats.files.append(
            {
                "name": inputs.name(len(stats.files)),
                "lines": {
                    "total": stats.total - total,
                    "emitted": stats.emitted - emitted,
                    "skipped": stats.skipped - skipped,
                },
            }
        )
        self._input_counted = (stats.total, stats.emitted, stats.skipped)
