"""``--fold`` with ``--stream-by``: one summary line for each duplicate run of a stream.

A stream's run is attributed as a whole (its source is the earliest occurrence of its
first window, see :mod:`seqdedup.engine.stream_decider`), so its sequence is the shortest period
of the whole run, fixed when the run ends (or when HELD_MAX of its records are held).
Its line stands right after the run's last record in the output (where its marker
would stand), before the next record written. A run that goes on past ``--fold-every``
records gets a line for each full part, written once the run has gone on past it: the
records of a part wait for that (other streams' records after them wait too, the
output stays in input order), so a storm in one stream holds back at most one part.

Records come one by one from the Python decider (:meth:`StreamFolder.passed`), or a part
at a time from the kernel's stream matcher (:meth:`StreamFolder.folded`); both take the
same records in the same order, so their lines are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from seqdedup.base.engine import Engine
from seqdedup.base.errors import visible
from seqdedup.base.hashes import MASK128
from seqdedup.engine.pyengine import PYTHON
from seqdedup.engine.pykernel import KEY
from seqdedup.keys.maker import text_digest
from seqdedup.run.fold import FoldedCounts, part_fields
from seqdedup.run.foldlines import line_text
from seqdedup.run.foldruns import HELD_MAX, FoldRun, Sequences

if TYPE_CHECKING:
    from seqdedup.config.groups import FoldOptions, KeyOptions, RuleOptions
    from seqdedup.engine.stream_decider import Entry, Run
    from seqdedup.keys.maker import KeyMaker
    from seqdedup.run.markers import Fields


class _Part(FoldRun):
    """A stream run being folded, and the input numbers of its current part's first
    and last records (a stream's records are not consecutive lines)."""

    __slots__ = ("first_number", "last_number")

    def __init__(self) -> None:
        super().__init__(0, None)
        self.first_number = self.last_number = 0


class StreamFolder:
    """Summary lines for the duplicate runs of interleaved streams, one call per
    skipped record as it is passed in output order (:meth:`passed`)."""

    def __init__(
        self,
        options: FoldOptions,
        rule: RuleOptions,
        key_options: KeyOptions,
        color: bool,
        keys: KeyMaker,
        locate: Callable[[int], tuple[str, int]],
        source_fields: Callable[[Run], Fields],
        named: bool,
        on_sequence: Callable[[bytes, list[bytes]], None] | None = None,
        engine: Engine = PYTHON,
        on_fold: Callable[[Fields], None] | None = None,
    ) -> None:
        self._format, self._color, self._window_size = options.fold_format, color, rule.window_size
        self._on_fold = on_fold
        self._every = options.fold_every
        # (a stream run's source is known from its first window: never an open piece)
        self._sequences = Sequences(keys, lambda: 0, on_sequence, engine)
        self._stamp = engine.first_timestamp
        self._locate = locate  # run-wide record number -> (input name, number inside it)
        self._source_fields = source_fields  # a run's match_* fields (and sequence)
        self._named = named
        self._folded = FoldedCounts(rule.max_unique_sequences)
        # the runs with records passed, not ended, by their first record's number
        self._runs: dict[int, _Part] = {}
        # (the records' texts, without the stream name)
        self._text = text_digest(key_options, engine.kernel)

    def releasable(self, entry: Entry) -> bool:
        """Whether a skipped record may be passed: its run has ended, or has gone on
        past the ``--fold-every`` part the record belongs to."""
        run = entry.run
        assert run is not None
        if run.closed:
            return True
        every = self._every
        return every is not None and run.length > (entry.index // every + 1) * every

    def passed(self, entry: Entry) -> bytes | None:
        """A skipped record is passed (in output order): the line due right after it
        (the last of its run, or of a full part of a run that goes on), if any."""
        run = entry.run
        assert run is not None
        key = (entry.key & MASK128).to_bytes(KEY, "little")
        part = self._take(run, key, [entry.keyed], (entry.number, entry.number))
        if run.closed and entry is run.last:
            return self._line(run, part, ends=True)
        every = self._every
        if every is not None and part.stop - part.part_start >= every and run.length > part.stop:
            return self._line(run, part, ends=False)
        return None

    def folded(
        self, run: Run, keys: bytes, records: list[bytes], numbers: tuple[int, int], ends: bool
    ) -> bytes:
        """A part of a run as the kernel hands it over (``--fold-every`` records once
        the run goes on past them, or the rest of the run as it ends: their key hashes,
        the records without the stream's name, the first and last input numbers): its
        line. ``run.length``: the records of the run so far."""
        return self._line(run, self._take(run, keys, records, numbers), ends)

    def _take(self, run: Run, keys: bytes, records: list[bytes], numbers: tuple[int, int]) -> _Part:
        """The run's next skipped records (``numbers``: the first's and the last's),
        taken as one by one would be: the sequence is fixed at HELD_MAX records held."""
        part = self._runs.get(run.first.number)
        if part is None:
            part = self._runs[run.first.number] = _Part()
        if part.stop == part.part_start:
            part.first_number = numbers[0]
        part.last_number = numbers[1]
        if self._text is not None:
            part.note_texts(records, self._text)
        at, match = 0, self._sequences.match
        while at < len(records):
            stop = len(records) if part.unit is not None else at + HELD_MAX - len(part.records)
            if part.take(keys[at * KEY : stop * KEY], records[at:stop], match):
                self._sequences.of(part, fix=True)
            at = stop
        return part

    def _line(self, run: Run, part: _Part, ends: bool) -> bytes:
        """The line of the part just taken: the run's last one, or an interim one."""
        if ends:
            del self._runs[run.first.number]
            from seqdedup.engine.pieces import Piece

            part.first_piece = Piece(0, run.length - 1, 0, 0)  # the whole run, complete
        unit = part.unit if part.unit is not None else self._sequences.of(part)
        variants = self._sequences.variants(part, unit.length)
        file, start = self._locate(part.first_number)
        fields: Fields = {
            "file": file,
            "start": start,
            "end": start + part.last_number - part.first_number,
            "stream": visible(run.first.stream),
            **part_fields(part, unit, self._folded, self._stamp, not ends, variants),
            "window_size": self._window_size,
            **self._source_fields(run),
        }
        if self._on_fold is not None:
            self._on_fold(fields.copy())
        return line_text(self._format, fields, self._named, self._color)
