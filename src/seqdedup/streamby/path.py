"""The feeding path of a ``--stream-by`` run: records in, each named by its stream and
decided by :class:`seqdedup.streamby.decider.StreamDecider`, written in input order.

A record is written as soon as it and every record before it are decided; it waits
only for later records of its own stream (W - 1 of them), or for its stream to end
(idle, evicted, end of input). With markers or explanations, nothing past a duplicate
run that is still open is written, so that its marker stands right after it.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from operator import not_
from types import ModuleType
from typing import TYPE_CHECKING

from seqdedup.engine import SEED
from seqdedup.errors import visible
from seqdedup.feeding import RecordPath
from seqdedup.filters import TRACKED, UNMATCHED
from seqdedup.hashes import hash_bytes, hash_ints
from seqdedup.markerfields import (
    DEFAULT_STREAM_ANNOTATION,
    DEFAULT_STREAM_FILES_ANNOTATION,
    DEFAULT_STREAM_LIBRARY_ANNOTATION,
)
from seqdedup.pieces import Piece
from seqdedup.report import explain_bypassed, explain_unmatched, marker_text, painted
from seqdedup.streamby import rows
from seqdedup.streamby.decider import LIBRARY_END, Entry, Run, StreamCount, StreamDecider
from seqdedup.streamby.names import UNNAMED, StreamNamer
from seqdedup.streamby.sized import SizedStreamDecider
from seqdedup.timelimit import PatternTimeout

if TYPE_CHECKING:
    from seqdedup.ledger import Ledger
    from seqdedup.plan import Parts
    from seqdedup.report import Fields
    from seqdedup.streamby.fold import StreamFolder

INVERTED = bytes.maketrans(b"\x00\x01", b"\x01\x00")


class _StreamRun(RecordPath):
    """What both stream paths share: names, filters and keys of a batch, the counts,
    and the ends (of an input, of a pause)."""

    def __init__(self, parts: Parts, ledger: Ledger, ordered: bool) -> None:
        super().__init__(parts, ledger, ordered)
        config = parts.config
        self._namer = StreamNamer(config, parts.plan.kernel)
        self._current = UNNAMED  # the stream of the last record (for continuation lines)
        self._rows = rows.StreamRows()
        self._keyed: list[bytes] = []  # the last batch without its stream names
        self._sizes: Sequence[int] = ()  # a minimum size: its tracked records' key sizes
        assert isinstance(parts.attributor, StreamCount)  # (the plan's: see stages.Stages)
        self.sequences = parts.attributor.sequences

    def _named(
        self, batch: list[bytes], held: int
    ) -> tuple[list[str | None], bytes, list[int] | None]:
        """The batch's stream names (None: continues the one before), its tracked
        records' key hashes (16 bytes each) and the filter decisions (None: all tracked);
        ``self._keyed``: every record of it without its stream's name. ``held``: records
        fed and not written yet."""
        parts, ledger = self._parts, self._ledger
        decisions = None
        try:
            names, keyed = self._namer.split(batch)
            self._keyed = keyed
            if parts.filters:
                decisions = parts.filters.classify(batch)
                keyed = [k for k, d in zip(keyed, decisions, strict=True) if d == TRACKED]
            if parts.config.min_size:  # (each key made once for its hash and its size)
                hashed, self._sizes = parts.keys.hashes_and_sizes(keyed, parts.config.size_unit)
                hashes = hash_bytes(hashed)
            else:
                hashes = hash_bytes(parts.keys.hashes(keyed))
        except PatternTimeout as exc:
            number = ledger.released + held + 1 + exc.index
            raise exc.at(parts.report.inputs.line(number).lower()) from None
        return names, hashes, decisions

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


class StreamPath(_StreamRun):
    """Records (or raw bytes, split by :class:`RecordPath`) of interleaved streams,
    decided in Python (with markers, explanations or a limited history, and on the
    Python engine)."""

    def __init__(self, parts: Parts, ledger: Ledger, ordered: bool) -> None:
        super().__init__(parts, ledger, ordered)
        config = parts.config
        # Each run's source and its count as written: markers, explanations, --top,
        # summary lines (a run is then closed before its last record is written, see
        # _write_decided).
        self._reported = parts.plan.reported
        self._ordered = self._ordered or self._reported
        self._folder = make_stream_folder(parts, self._source_fields) if config.fold else None
        counted = self.sequences if config.sequence_stats or self._reported else None
        self._sized: SizedStreamDecider | None = None
        self._decider: StreamDecider
        if config.min_size:
            self._decider = self._sized = SizedStreamDecider(
                config.window_size, config.min_size, config.max_history, config.stream_idle,
                config.max_streams, counted, self._reported, SEED, config.per_stream,
            )  # fmt: skip
        else:
            self._decider = StreamDecider(
                config.window_size, config.max_history, config.stream_idle, config.max_streams,
                counted, self._reported, SEED, per_stream=config.per_stream,
            )  # fmt: skip
        windows = parts.library_windows
        if self._sized is not None and windows.sequences is not None:
            assert windows.region is not None
            self._sized.add_library_stretches(windows.region, *windows.sequences)
        elif windows.fps is not None and windows.starts is not None:
            region = hash_ints(windows.region) if windows.region is not None else None
            self._decider.add_library(hash_ints(windows.fps), list(windows.starts), region)
        if parts.saver is not None:
            self._decider.save_into(parts.saver.stretches, bool(config.read_sequences))
        self._digest = parts.report.texts.digest if parts.report.texts is not None else None
        if parts.report.texts is not None:
            self._decider.compare_texts(parts.report.texts.library)
        self._queue: deque[Entry] = deque()  # fed, not yet written, in input order
        streams = parts.report.inputs
        self._annotation = (
            config.annotation_format
            or (DEFAULT_STREAM_FILES_ANNOTATION if streams.named else DEFAULT_STREAM_ANNOTATION)
            if config.annotate
            else None
        )

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
        inverse, ordered, folder = parts.config.inverse, self._ordered, self._folder
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
                self._decider.count(entry.marker)
                fields = self._fields(entry.marker)
                if parts.top is not None:
                    self._observe_top(entry.marker, fields)
                if self._annotation is not None:
                    template = self._annotation
                    if "sequence" in fields and parts.config.annotation_format is None:
                        template = DEFAULT_STREAM_LIBRARY_ANNOTATION
                    marker = marker_text(template, fields, parts.config.annotation_format)
                    out.append(painted(marker, parts.report.marker_color))
                    last_written = False
                if parts.report.explain is not None:
                    parts.report.explain(explain_stream_run(fields, parts.report.inputs.named))
            elif entry.tracked_as not in (-1, TRACKED) and parts.report.explain is not None:
                self._explain_passed(entry)
        ledger.count(released, kept)
        ledger.written_last(last_written)
        return out

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

    def _explain_passed(self, entry: Entry) -> None:
        report = self._parts.report
        assert report.explain is not None
        line = report.inputs.line(entry.number)
        if entry.tracked_as == UNMATCHED:
            report.explain(explain_unmatched(line))
        else:
            patterns = [rule.pattern for rule in self._parts.filters.rules]
            report.explain(explain_bypassed(line, patterns[entry.tracked_as]))

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
            "window_size": parts.config.window_size,
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


class KernelStreamPath(_StreamRun):
    """The same rule decided by the kernel's ``StreamMatcher`` (no markers,
    explanations or ``--top``): each active stream gets a small lane number; the kernel
    hands back the decided records' flags in input order, the streams that ended (with
    their counts) and the closed runs' contents."""

    def __init__(self, parts: Parts, ledger: Ledger, kernel: ModuleType) -> None:
        super().__init__(parts, ledger, False)
        config = parts.config
        self._matcher = kernel.StreamMatcher(
            config.window_size,
            config.stream_idle,
            config.max_streams,
            count_runs=config.sequence_stats,
            history=config.max_history,
            seed=SEED,
        )
        self._lanes: dict[str, int] = {}  # active stream names -> lane
        self._names: list[str] = []  # lane -> stream name
        self._free: list[int] = []  # lanes of streams that ended
        self._pending: list[bytes] = []
        self._pending_tracked: list[bool] = []  # with filters: which pending are tracked
        # Names found by the kernel where the pattern is a prefix program (no filters),
        # and kept by its matcher (push_named; _current_key: the last one's bytes)
        self._prefixed = not parts.filters and self._namer.program() is not None
        self._current_key = UNNAMED.encode()

    def feed(self, records: Iterable[bytes]) -> list[bytes]:
        batch = records if isinstance(records, list) else list(records)
        if self._prefixed:
            return self._feed_prefixed(batch)
        names, hashes, decisions = self._named(batch, len(self._pending))
        lanes = array("i")
        lane_of, current = self._lanes, self._current
        tracked = [d == TRACKED for d in decisions] if decisions is not None else None
        for offset, name in enumerate(names):
            if name is None:
                name = current
            else:
                current = name
            if tracked is not None and not tracked[offset]:
                continue
            lane = lane_of.get(name)
            lanes.append(self._lane(name) if lane is None else lane)
        self._current = current
        self._pending += batch
        if tracked is not None:
            self._pending_tracked += tracked
        return self._taken(self._matcher.push(hashes, lanes.tobytes()))

    def _feed_prefixed(self, batch: list[bytes]) -> list[bytes]:
        """``feed`` with the names the kernel finds (:meth:`StreamNamer.prefixed_keys`)
        and keeps: its matcher maps them to lanes itself, so a new stream costs no
        Python object; only the rows of the statistics' first streams are named here."""
        try:
            keys, indices, keyed, decoded = self._namer.prefixed_keys(batch)
            hashes = hash_bytes(self._parts.keys.hashes(keyed))
        except PatternTimeout as exc:
            number = self._ledger.released + len(self._pending) + 1 + exc.index
            raise exc.at(self._parts.report.inputs.line(number).lower()) from None
        before = self._current
        self._pending += batch
        result = self._matcher.push_named(
            hashes, indices.tobytes(), keys, self._current_key, rows.STREAM_ROWS
        )
        for index in reversed(indices):
            if index >= 0:
                self._current_key = keys[index]
                self._current = (
                    decoded[index] if decoded else keys[index].decode("utf-8", "backslashreplace")
                )
                break

        def name(index: int) -> str:
            if index < 0:
                return before
            return decoded[index] if decoded else keys[index].decode("utf-8", "backslashreplace")

        return self._taken_named(result, name)

    def _taken_named(
        self, result: tuple[bytes, bytes, tuple[int, int], bytes, bytes], name: Callable[[int], str]
    ) -> list[bytes]:
        """Book what the kernel decided, the rows it gave and the streams that ended;
        write what is decided."""
        flags, ended, other, new_rows, runs = result
        table = self._rows
        if new_rows:
            pairs = array("i", new_rows)
            for row, index in zip(pairs[0::2], pairs[1::2], strict=True):
                table.add_row(row, name(index))
        if ended:
            counts = array("q", ended)
            table.add_counts(counts[0::3], counts[1::3], counts[2::3])
        table.add_other(*other)
        self._count_runs(runs)
        return self._write(flags)

    def end_records(self) -> list[bytes]:
        out = super().end_records()
        self._current_key = UNNAMED.encode()
        return out

    def _lane(self, name: str) -> int:
        lane = self._lanes.get(name)
        if lane is None:
            self._new_lanes([name])
            lane = self._lanes[name]
        return lane

    def _new_lanes(self, new: list[str]) -> None:
        """Lanes for streams that begin (distinct, in order): those of ended streams
        first, the last freed first, then new ones."""
        free, names = self._free, self._names
        reused = free[len(free) - min(len(free), len(new)) :][::-1]
        del free[len(free) - len(reused) :]
        for name, lane in zip(new, reused, strict=False):
            names[lane] = name
        first = len(names)
        names += new[len(reused) :]
        self._lanes.update(zip(new, [*reused, *range(first, len(names))], strict=True))
        self._rows.note(new)

    def _end_all(self) -> list[bytes]:
        if self._prefixed:
            return self._taken_named(self._matcher.end_named(), lambda index: self._current)
        return self._taken(self._matcher.end_all())

    def _count_runs(self, runs: bytes) -> None:
        """Count the closed runs' sequences (their 128-bit contents)."""
        if runs:
            words = array("Q", runs)
            count = self.sequences.count
            for k in range(0, len(words), 2):
                count(words[k] | words[k + 1] << 64)

    def _taken(self, result: tuple[bytes, bytes, bytes]) -> list[bytes]:
        """Book what the kernel decided and ended; write what is decided."""
        flags, ended, runs = result
        if ended:
            counts = array("q", ended)
            names = self._names
            lanes = counts[0::3]
            self._rows.add(list(map(names.__getitem__, lanes)), counts[1::3], counts[2::3])
            ended_lanes = list(set(lanes))
            # (those ended and not begun again since)
            gone = list(compress(ended_lanes, map(not_, map(self._matcher.active, ended_lanes))))
            deque(map(self._lanes.pop, map(names.__getitem__, gone)), maxlen=0)
            self._free += gone
        self._count_runs(runs)
        return self._write(flags)

    def _write(self, flags: bytes) -> list[bytes]:
        """The pending records up to the first undecided tracked one: pass-through ones
        as they stand, tracked ones as their flags say."""
        parts, ledger = self._parts, self._ledger
        inverse = parts.config.inverse
        if not self._pending_tracked and not parts.filters:
            cut = len(flags)
            released = self._pending[:cut]
            written_flags = flags if inverse else flags.translate(INVERTED)
        else:
            cut = written = 0
            tracked = self._pending_tracked
            while cut < len(tracked) and (not tracked[cut] or written < len(flags)):
                written += tracked[cut]
                cut += 1
            released = self._pending[:cut]
            marks = iter(flags)
            written_flags = bytes(
                (next(marks) == inverse) if is_tracked else not inverse
                for is_tracked in tracked[:cut]
            )
            del tracked[:cut]
        del self._pending[:cut]
        out = list(compress(released, written_flags))
        ledger.count(cut, cut - flags.count(1))
        if cut:
            ledger.written_last(bool(written_flags[-1]))
        return out


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
    from seqdedup.streamby.fold import StreamFolder

    report = parts.report
    return StreamFolder(
        parts.config,
        parts.keys,
        report.inputs.locate,
        source_fields,
        report.inputs.named,
        parts.saver.add_sequence if parts.saver is not None else None,
        parts.plan.kernel,
        report.on_fold,
    )


def stream_path(parts: Parts, ledger: Ledger) -> StreamPath | KernelStreamPath:
    """The stream path the plan names: the kernel's where it serves (nothing read per
    run), else the Python decider's."""
    plan = parts.plan
    if plan.stream_decider == "kernel":
        return KernelStreamPath(parts, ledger, plan.compiled)
    return StreamPath(parts, ledger, plan.ordered)
