"""The feeding path of a ``--stream-by`` run: records in, each named by its stream and
decided by :class:`seqdedup.engine.stream_decider.StreamDecider`, written in input order.

A record is written as soon as it and every record before it are decided; it waits
only for later records of its own stream (W - 1 of them), or for its stream to end
(idle, evicted, end of input). With markers or explanations, nothing past a duplicate
run that is still open is written, so that its marker stands right after it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from seqdedup.base.engine import SEED
from seqdedup.base.errors import visible
from seqdedup.base.hashes import hash_bytes, hash_ints
from seqdedup.config.markerfields import (
    DEFAULT_STREAM_ANNOTATION,
    DEFAULT_STREAM_FILES_ANNOTATION,
    DEFAULT_STREAM_LIBRARY_ANNOTATION,
)
from seqdedup.config.timelimit import PatternTimeout
from seqdedup.engine.pieces import Piece
from seqdedup.engine.stream_decider import LIBRARY_END, Entry, Run, StreamCount, StreamDecider
from seqdedup.engine.stream_sized import SizedStreamDecider
from seqdedup.keys.filters import TRACKED, UNMATCHED
from seqdedup.keys.streams import UNNAMED, StreamNamer
from seqdedup.run import stream_rows as rows
from seqdedup.run.feeding import RecordPath
from seqdedup.run.markers import explain_bypassed, explain_unmatched, marker_text, painted

if TYPE_CHECKING:
    from seqdedup.run.ledger import Ledger
    from seqdedup.run.markers import Fields
    from seqdedup.run.plan import Parts
    from seqdedup.run.stream_fold import StreamFolder

INVERTED = bytes.maketrans(b"\x00\x01", b"\x01\x00")


class _StreamFeeding(RecordPath):
    """What both stream paths share: names, filters and keys of a batch, the counts,
    and the ends (of an input, of a pause)."""

    def __init__(self, parts: Parts, ledger: Ledger, ordered: bool) -> None:
        super().__init__(parts, ledger, ordered)
        kernel = parts.plan.engine.kernel
        self._namer = StreamNamer(parts.streams, parts.key_options.byte_mode, kernel)
        self._current = UNNAMED  # the stream of the last record (for continuation lines)
        self._rows = rows.StreamRows()
        self._keyed: list[bytes] = []  # the last batch without its stream names
        self._sizes: Sequence[int] = ()  # a minimum size: its tracked records' key sizes
        assert isinstance(parts.attributor, StreamCount)  # (the plan's: see stages.Stages)
        self.sequences = parts.attributor.sequences
        named = parts.report.inputs.named
        markers = parts.markers
        self._annotation = (
            markers.annotation_format
            or (DEFAULT_STREAM_FILES_ANNOTATION if named else DEFAULT_STREAM_ANNOTATION)
            if markers.annotate
            else None
        )

    def _named(
        self, batch: list[bytes], held: int
    ) -> tuple[list[str | None], bytes, list[int] | None]:
        """The batch's stream names (None: continues the one before), its tracked
        records' key hashes (16 bytes each) and the filter decisions (None: all tracked);
        ``self._keyed``: every record of it without its stream's name. ``held``: records
        fed and not written yet."""
        parts = self._parts
        decisions = None
        try:
            names, keyed = self._namer.split(batch)
            self._keyed = keyed
            if parts.filters:
                decisions = parts.filters.classify(batch)
                keyed = [k for k, d in zip(keyed, decisions, strict=True) if d == TRACKED]
            if parts.rule.min_size:  # (each key made once for its hash and its size)
                hashed, self._sizes = parts.keys.hashes_and_sizes(keyed, parts.rule.size_unit)
                hashes = hash_bytes(hashed)
            else:
                hashes = hash_bytes(parts.keys.hashes(keyed))
        except PatternTimeout as exc:
            raise self._where(exc, held) from None
        return names, hashes, decisions

    def _where(self, exc: PatternTimeout, held: int) -> PatternTimeout:
        """A stream pattern's time-out, saying which line it was (``held``: records fed
        before the batch and not written yet)."""
        number = self._ledger.released + held + 1 + exc.index
        return exc.at(self._parts.report.inputs.line(number).lower())

    def end_records(self) -> list[bytes]:
        """End of an input: every stream ends (no window spans two inputs)."""
        out = self._end_all()
        self._current = UNNAMED
        self._ledger.streams(self._rows.document())
        return out

    def idle(self) -> list[bytes]:
        """The live input is idle: every stream's pending records are decided as at end
        of input; the streams go on (a window never spans the pause)."""
        return self._end_all()

    def idle_bytes(self) -> bytes:
        return self._joined(self.idle(), final=False)

    def _end_all(self) -> list[bytes]:
        raise NotImplementedError

    def _report_run(self, run: Run, out: list[bytes]) -> bool:
        """A closed run's reports as it is written: its sequence counted (in output
        order), ``--top``, its marker (appended to ``out``: True) and explanation."""
        parts = self._parts
        if self.sequences is not None:
            run.count = self.sequences.count(run.content)
        fields = self._fields(run)
        if parts.top is not None:
            self._observe_top(run, fields)
        marked = False
        if self._annotation is not None:
            template = self._annotation
            if "sequence" in fields and parts.markers.annotation_format is None:
                template = DEFAULT_STREAM_LIBRARY_ANNOTATION
            marker = marker_text(template, fields, parts.markers.annotation_format)
            out.append(painted(marker, parts.report.marker_color))
            marked = True
        if parts.report.explain is not None:
            parts.report.explain(explain_stream_run(fields, parts.report.inputs.named))
        return marked

    def _observe_top(self, run: Run, fields: Fields) -> None:
        """``--top``: count the run's sequence; where it was first seen, if it is new."""
        parts = self._parts
        assert parts.top is not None
        piece = Piece(0, run.length - 1, 0, run.count, run.content)
        named = parts.report.inputs.named
        record = run.first.record
        shown = parts.keys.shown_record(record) if record is not None else None
        parts.top.observe(piece, lambda _: fields, shown, named)
        library = run.source is not None and run.source[0] == LIBRARY_END
        self._ledger.stream_run(
            run.first.number, run.last.number, run.length, run.content, run.first.stream, library
        )

    def _fields(self, run: Run) -> Fields:
        """A run's marker and explanation fields: its first and last record, the earliest
        occurrence of its first window (first and last record), the streams."""
        parts = self._parts
        file, start = parts.report.inputs.locate(run.first.number)
        return {
            "start": start,
            "end": start + run.last.number - run.first.number,
            "file": file,
            "stream": visible(run.first.stream),
            "count": run.count,
            "window_size": parts.rule.window_size,
            "variants": 2 if run.differs else 1,
            **self._source_fields(run),
        }

    def _source_fields(self, run: Run) -> Fields:
        """Where the earliest occurrence of a run's first window lies: ``match_file``,
        ``match_start``, ``match_end`` and ``match_stream`` (``sequence`` too when it
        is a loaded library sequence)."""
        parts = self._parts
        streams = parts.report.inputs
        assert run.source is not None
        ended, match_first, match_last, match_stream = run.source
        if ended == LIBRARY_END:  # a loaded sequence: its name, and records inside it
            assert parts.library is not None
            sequence, offset = parts.library.locate(match_first)
            match: Fields = {"sequence": sequence, "match_file": f"library sequence {sequence}"}
            match_stream, match_start = "library", offset + 1
        else:
            match = {}
            match["match_file"], match_start = streams.locate(match_first)
        return {
            **match,
            "match_start": match_start,
            "match_end": match_start + match_last - match_first,
            "match_stream": visible(match_stream),
        }


class StreamPath(_StreamFeeding):
    """Records (or raw bytes, split by :class:`RecordPath`) of interleaved streams,
    decided in Python (with markers, explanations or a limited history, and on the
    Python engine)."""

    def __init__(self, parts: Parts, ledger: Ledger, ordered: bool) -> None:
        super().__init__(parts, ledger, ordered)
        rule, streams = parts.rule, parts.streams
        # Each run's source and its count as written: markers, explanations, --top,
        # summary lines (a run is then closed before its last record is written, see
        # _write_decided).
        self._reported = parts.plan.reported
        self._ordered = self._ordered or self._reported
        folds = parts.fold_options.fold
        self._folder = make_stream_folder(parts, self._source_fields) if folds else None
        counted = self.sequences if parts.sequence_stats or self._reported else None
        self._sized: SizedStreamDecider | None = None
        self._decider: StreamDecider
        if rule.min_size:
            self._decider = self._sized = SizedStreamDecider(
                rule.window_size, rule.min_size, rule.max_history, streams.stream_idle,
                streams.max_streams, counted, self._reported, SEED, streams.per_stream,
            )  # fmt: skip
        else:
            self._decider = StreamDecider(
                rule.window_size, rule.max_history, streams.stream_idle, streams.max_streams,
                counted, self._reported, SEED, per_stream=streams.per_stream,
            )  # fmt: skip
        windows = parts.library_windows
        if self._sized is not None and windows.sequences is not None:
            assert windows.region is not None
            self._sized.add_library_stretches(windows.region, *windows.sequences)
        elif windows.fps is not None and windows.starts is not None:
            region = hash_ints(windows.region) if windows.region is not None else None
            self._decider.add_library(hash_ints(windows.fps), list(windows.starts), region)
        if parts.saver is not None:
            reads = bool(parts.libraries.read_sequences)
            self._decider.save_into(parts.saver.stretches, reads)
        self._digest = parts.report.texts.digest if parts.report.texts is not None else None
        if parts.report.texts is not None:
            self._decider.compare_texts(parts.report.texts.library)
        self._queue: deque[Entry] = deque()  # fed, not yet written, in input order

    def feed(self, records: Iterable[bytes]) -> list[bytes]:
        batch = records if isinstance(records, list) else list(records)
        names, packed, decisions = self._named(batch, len(self._queue))
        hashes = iter(hash_ints(packed))
        sizes = iter(self._sizes)
        sized = self._sized.push_sized if self._sized is not None else None
        number = self._ledger.released + len(self._queue) + 1
        queue, push, current = self._queue, self._decider.push, self._current
        parts, digest = self._parts, self._digest
        keyed = self._keyed if parts.saver or self._folder else None
        texts = digest(self._keyed) if digest is not None else None
        for offset, record in enumerate(batch):
            name = names[offset]
            if name is None:
                name = current
            else:
                current = name
            entry = Entry(record, number + offset, name)
            if keyed is not None:
                entry.keyed = keyed[offset]
            if texts is not None:
                entry.text = texts[offset]
            queue.append(entry)
            if decisions is not None and decisions[offset] != TRACKED:
                entry.decided = True
                entry.tracked_as = decisions[offset]
            elif sized is not None:
                sized(name, next(hashes), entry, next(sizes))
            else:
                push(name, next(hashes), entry)
        self._current = current
        return self._write_decided()

    def _end_all(self) -> list[bytes]:
        self._decider.end_all()
        return self._write_decided()

    def _write_decided(self) -> list[bytes]:
        """Write what is decided, up to the first record that is not (or, with markers
        or explanations, that lies in a run still open)."""
        parts, ledger = self._parts, self._ledger
        inverse, ordered, folder = parts.markers.inverse, self._ordered, self._folder
        queue, out = self._queue, []
        released = kept = 0
        last_written = ledger.last_record_written
        while queue:
            entry = queue[0]
            run = entry.run
            if not entry.decided or (
                ordered
                and run is not None
                and not (run.closed if folder is None else folder.releasable(entry))
            ):
                break
            queue.popleft()
            released += 1
            kept += not entry.skip
            self._rows.add([entry.stream], (1,), (entry.skip,))
            # whether the last record released was written: only then does the input's
            # final record, when it had no delimiter, end the output without one
            last_written = entry.skip == inverse
            if last_written:
                out.append(entry.record)
            elif folder is not None and run is not None:
                line = folder.passed(entry)
                if line is not None:
                    out.append(line)
                    last_written = False
            if entry.marker is not None and self._reported:
                if self._report_run(entry.marker, out):
                    last_written = False
            elif entry.tracked_as not in (-1, TRACKED) and parts.report.explain is not None:
                self._explain_passed(entry)
        ledger.count(released, kept)
        ledger.written_last(last_written)
        return out

    def _explain_passed(self, entry: Entry) -> None:
        report = self._parts.report
        assert report.explain is not None
        line = report.inputs.line(entry.number)
        if entry.tracked_as == UNMATCHED:
            report.explain(explain_unmatched(line))
        else:
            patterns = [rule.pattern for rule in self._parts.filters.rules]
            report.explain(explain_bypassed(line, patterns[entry.tracked_as]))


def explain_stream_run(fields: Fields, named: bool) -> str:
    """``EXPLAIN: Lines a-b of stream S skipped (duplicate of lines c-d of stream T, seen
    nx)``, with the input files when there are several."""
    where = f" of {fields['file']}" if named else ""
    source_where = f" of {fields['match_file']}" if named else ""
    start, end = fields["start"], fields["end"]
    lines = f"Line {start}" if start == end else f"Lines {start}-{end}"
    source = f"lines {fields['match_start']}-{fields['match_end']}"
    if "sequence" in fields:
        source = f"library sequence {fields['sequence']} records {source[6:]}"
        return (
            f"EXPLAIN: {lines}{where} (stream {fields['stream']}) skipped (duplicate of "
            f"{source}, seen {fields['count']}x)"
        )
    return (
        f"EXPLAIN: {lines}{where} (stream {fields['stream']}) skipped (duplicate of "
        f"{source}{source_where} (stream {fields['match_stream']}), seen {fields['count']}x)"
    )


def make_stream_folder(parts: Parts, source_fields: Callable[[Run], Fields]) -> StreamFolder:
    """``--fold``'s summary lines for stream runs (and, with a library, each folded
    sequence held under its id)."""
    from seqdedup.run.stream_fold import StreamFolder

    report = parts.report
    return StreamFolder(
        parts.fold_options,
        parts.rule,
        parts.key_options,
        parts.markers.color,
        parts.keys,
        report.inputs.locate,
        source_fields,
        report.inputs.named,
        parts.saver.add_sequence if parts.saver is not None else None,
        parts.plan.engine,
        report.on_fold,
    )
