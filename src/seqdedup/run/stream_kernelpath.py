"""The feeding path of a ``--stream-by`` run decided by the kernel's
``StreamMatcher`` (the rule of :mod:`seqdedup.run.stream_path`, which this path shares
its base with), and which of the two stream paths a run takes."""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Iterable
from itertools import accumulate, compress
from operator import not_
from typing import TYPE_CHECKING

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import SEED
from seqdedup.base.hashes import hash_bytes
from seqdedup.config.timelimit import PatternTimeout
from seqdedup.keys.filters import TRACKED
from seqdedup.keys.streams import UNNAMED
from seqdedup.run import stream_rows as rows
from seqdedup.run.stream_path import INVERTED, StreamPath, _StreamFeeding, make_stream_folder
from seqdedup.run.stream_reports import ReportedRuns

if TYPE_CHECKING:
    from seqdedup.engine.stream_decider import SequenceCounts
    from seqdedup.run.ledger import Ledger
    from seqdedup.run.plan import Parts


class KernelStreamPath(_StreamFeeding):
    """The same rule decided by the kernel's ``StreamMatcher`` (markers, ``--top`` and
    fold lines from the runs it hands over; no explanations): each active stream gets a
    small lane number; the kernel hands back the decided records' flags in input order,
    the streams that ended (with their counts) and the closed runs."""

    def __init__(self, parts: Parts, ledger: Ledger, kernel: CEngine) -> None:
        super().__init__(parts, ledger, False)
        rule, streams = parts.rule, parts.streams
        # Markers, --top and fold lines (the plan's "reported"): each closed run handed
        # over whole (with --fold, in parts), its sequence counted as it is written (so
        # not by the matcher as well)
        self._reporting = parts.plan.reported
        folds = self._folds = parts.fold_options.fold
        every = parts.fold_options.fold_every
        assert isinstance(every, int | None)  # (a time is refused with streams)
        self._matcher = kernel.stream_matcher(
            rule.window_size,
            streams.stream_idle,
            streams.max_streams,
            count_runs=parts.sequence_stats and not self._reporting,
            history=rule.max_history,
            seed=SEED,
            report_runs=self._reporting,
            fold=folds,
            fold_every=every if folds else None,
        )
        folder = make_stream_folder(parts, self._source_fields) if folds else None
        self._reports = (
            ReportedRuns(self._matcher, self._report_run, folder) if self._reporting else None
        )
        self._pending_keyed: list[bytes] = []  # with --fold: pending records, unnamed
        self._lanes = StreamLanes(self._rows)
        self._pending: list[bytes] = []
        self._pending_tracked: list[bool] = []  # with filters: which pending are tracked
        # Names found by the kernel where the pattern is a prefix program (no filters),
        # and kept by its matcher (push_named; _current_key: the last one's bytes)
        # (with reports, no filters: the names found by the prefix program, lanes given
        # per batch, see _feed_reported)
        programmed = not parts.filters and self._namer.program() is not None
        self._prefixed = programmed and not self._reporting
        self._reported_programmed = programmed and self._reports is not None
        self._current_key = UNNAMED.encode()

    def feed(self, records: Iterable[bytes]) -> list[bytes]:
        batch = records if isinstance(records, list) else list(records)
        if self._prefixed:
            return self._feed_prefixed(batch)
        if self._reported_programmed:
            assert self._reports is not None
            return self._feed_reported(batch, self._reports)
        names, hashes, decisions = self._named(batch, len(self._pending))
        # each record's stream (a continuation line's: the one before), then each
        # tracked record's lane, new streams given theirs in the order they first come
        filled = list(accumulate(names, _continuing, initial=self._current))
        self._current = filled[-1]
        del filled[0]
        tracked = [d == TRACKED for d in decisions] if decisions is not None else None
        if tracked is not None:
            filled = list(compress(filled, tracked))
        lanes = self._lanes.lanes(filled)
        if self._reports is not None:
            self._reports.streams.add_named(filled)
        self._pending += batch
        if self._folds:
            self._pending_keyed += self._keyed
        if tracked is not None:
            self._pending_tracked += tracked
        return self._taken(self._matcher.push(hashes, lanes))

    def _feed_reported(self, batch: list[bytes], reports: ReportedRuns) -> list[bytes]:
        """``feed`` for markers, ``--top`` and fold lines, with the names the kernel's
        prefix program finds: each distinct name gets its lane here, the matcher maps
        each record to its own, and each position's stream is kept per batch (so
        nothing is done per record in Python)."""
        try:
            found = self._namer.prefixed(batch)
            assert found is not None
            names, indices, keyed = found
            hashes = hash_bytes(self._parts.keys.hashes(keyed))
        except PatternTimeout as exc:
            raise self._where(exc, len(self._pending)) from None
        before = self._current
        order, self._current = reports.streams.add(indices, names, before)
        translate = self._lanes.translation(order, names)
        self._pending += batch
        if self._folds:
            self._pending_keyed += keyed
        initial = self._lanes.of.get(before, -1)
        return self._taken(self._matcher.push(hashes, indices, translate, initial))

    def _feed_prefixed(self, batch: list[bytes]) -> list[bytes]:
        """``feed`` with the names the kernel finds (:meth:`StreamNamer.prefixed_keys`)
        and keeps: its matcher maps them to lanes itself, so a new stream costs no
        Python object; only the rows of the statistics' first streams are named here."""
        try:
            keys, indices, keyed, decoded = self._namer.prefixed_keys(batch)
            hashes = hash_bytes(self._parts.keys.hashes(keyed))
        except PatternTimeout as exc:
            raise self._where(exc, len(self._pending)) from None
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
        _count_runs(self.sequences, runs)
        return self._write(flags)

    def end_records(self) -> list[bytes]:
        out = super().end_records()
        self._current_key = UNNAMED.encode()
        return out

    def _end_all(self) -> list[bytes]:
        if self._prefixed:
            return self._taken_named(self._matcher.end_named(), lambda index: self._current)
        return self._taken(self._matcher.end_all())

    def _taken(self, result: tuple[bytes, bytes, bytes]) -> list[bytes]:
        """Book what the kernel decided and ended; write what is decided."""
        flags, ended, runs = result
        if ended:
            counts = array("q", ended)
            lanes = counts[0::3]
            names = list(map(self._lanes.names.__getitem__, lanes))
            self._rows.add(names, counts[1::3], counts[2::3])
            ended_lanes = list(set(lanes))
            # (those ended and not begun again since)
            gone = list(compress(ended_lanes, map(not_, map(self._matcher.active, ended_lanes))))
            self._lanes.free(gone)
        _count_runs(self.sequences, runs)
        return self._write(flags)

    def _write(self, flags: bytes) -> list[bytes]:
        """The pending records up to the first undecided tracked one: pass-through ones
        as they stand, tracked ones as their flags say."""
        parts, ledger = self._parts, self._ledger
        if self._reports is not None:  # (no filters: every record is tracked)
            cut = len(flags)
            out, marked_last = self._reports.write(self._pending, self._pending_keyed, flags)
            del self._pending[:cut]
            del self._pending_keyed[:cut]
            ledger.count(cut, cut - flags.count(1))
            if cut:
                ledger.written_last(not flags[-1] and not marked_last)
            return out
        inverse = parts.markers.inverse
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


def _count_runs(sequences: SequenceCounts, runs: bytes) -> None:
    """Count the closed runs' sequences (their 128-bit contents)."""
    if runs:
        words = array("Q", runs)
        for k in range(0, len(words), 2):
            sequences.count(words[k] | words[k + 1] << 64)


class StreamLanes:
    """The small numbers the kernel's matcher knows the active streams by: a stream
    that begins takes the lane of one that ended (the last freed first), or a new one."""

    __slots__ = ("_free", "_rows", "names", "of")

    def __init__(self, table: rows.StreamRows) -> None:
        self.of: dict[str, int] = {}  # active stream names -> lane
        self.names: list[str] = []  # lane -> stream name
        self._free: list[int] = []  # lanes of streams that ended
        self._rows = table  # (a stream that begins is noted for its statistics row)

    def lanes(self, streams: list[str]) -> array[int]:
        """Each record's lane (``streams``: each record's), streams that begin given
        theirs in the order they first come."""
        self._give([name for name in dict.fromkeys(streams) if name not in self.of])
        return array("i", map(self.of.__getitem__, streams))

    def translation(self, order: list[str], names: list[str]) -> array[int]:
        """The lane of each of ``names`` (-1: none), streams of ``order`` that begin
        (distinct, in the order they first come) given theirs."""
        self._give([name for name in order if name not in self.of])
        return array("i", [self.of.get(name, -1) for name in names])

    def _give(self, new: list[str]) -> None:
        """Lanes for streams that begin (distinct, in order)."""
        if not new:
            return
        self._rows.note(new)
        free, names = self._free, self.names
        reused = free[len(free) - min(len(free), len(new)) :][::-1]
        del free[len(free) - len(reused) :]
        for name, lane in zip(new, reused, strict=False):
            names[lane] = name
        first = len(names)
        names += new[len(reused) :]
        self.of.update(zip(new, [*reused, *range(first, len(names))], strict=True))

    def free(self, gone: list[int]) -> None:
        """The streams of lanes ``gone`` ended."""
        deque(map(self.of.pop, map(self.names.__getitem__, gone)), maxlen=0)
        self._free += gone


def _continuing(before: str, name: str | None) -> str:
    """A record's stream: its own name, or a continuation line's the one before."""
    return before if name is None else name


def stream_path(parts: Parts, ledger: Ledger) -> StreamPath | KernelStreamPath:
    """The stream path the plan names: the kernel's where it serves (nothing read per
    run), else the Python decider's."""
    plan = parts.plan
    if plan.stream_decider == "kernel":
        return KernelStreamPath(parts, ledger, plan.compiled)
    return StreamPath(parts, ledger, plan.ordered)
