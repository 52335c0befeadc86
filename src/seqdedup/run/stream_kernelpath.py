"""The feeding path of a ``--stream-by`` run decided by the kernel's
``StreamMatcher`` (the rule of :mod:`seqdedup.run.stream_path`, which this path shares
its base with), and which of the two stream paths a run takes."""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Iterable
from heapq import heappop, heappush
from itertools import compress
from operator import not_
from typing import TYPE_CHECKING

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import SEED
from seqdedup.base.hashes import MASK64, hash_bytes
from seqdedup.config.timelimit import PatternTimeout
from seqdedup.engine.stream_decider import Entry, Run
from seqdedup.keys.filters import TRACKED
from seqdedup.keys.streams import UNNAMED
from seqdedup.run import stream_rows as rows
from seqdedup.run.stream_path import INVERTED, StreamPath, _StreamFeeding

RUN_FIELDS = 8  # int64 per closed run the kernel hands over (StreamMatcher.closed_runs)

if TYPE_CHECKING:
    from seqdedup.run.ledger import Ledger
    from seqdedup.run.plan import Parts


class KernelStreamPath(_StreamFeeding):
    """The same rule decided by the kernel's ``StreamMatcher`` (no markers,
    explanations or ``--top``): each active stream gets a small lane number; the kernel
    hands back the decided records' flags in input order, the streams that ended (with
    their counts) and the closed runs' contents."""

    def __init__(self, parts: Parts, ledger: Ledger, kernel: CEngine) -> None:
        super().__init__(parts, ledger, False)
        rule, streams = parts.rule, parts.streams
        # Markers and --top (the plan's "reported"): each closed run handed over whole,
        # its sequence counted as it is written (so not by the matcher as well)
        self._reporting = parts.plan.reported
        self._matcher = kernel.stream_matcher(
            rule.window_size,
            streams.stream_idle,
            streams.max_streams,
            count_runs=parts.sequence_stats and not self._reporting,
            history=rule.max_history,
            seed=SEED,
            report_runs=self._reporting,
        )
        self._reports = (
            ReportedRuns(self._matcher.closed_runs, self._report_run) if self._reporting else None
        )
        self._lanes: dict[str, int] = {}  # active stream names -> lane
        self._names: list[str] = []  # lane -> stream name
        self._free: list[int] = []  # lanes of streams that ended
        self._pending: list[bytes] = []
        self._pending_tracked: list[bool] = []  # with filters: which pending are tracked
        # Names found by the kernel where the pattern is a prefix program (no filters),
        # and kept by its matcher (push_named; _current_key: the last one's bytes)
        self._prefixed = (
            not self._reporting and not parts.filters and self._namer.program() is not None
        )
        self._current_key = UNNAMED.encode()

    def feed(self, records: Iterable[bytes]) -> list[bytes]:
        batch = records if isinstance(records, list) else list(records)
        if self._prefixed:
            return self._feed_prefixed(batch)
        names, hashes, decisions = self._named(batch, len(self._pending))
        lanes = array("i")
        lane_of, current = self._lanes, self._current
        streams = self._reports.streams if self._reports is not None else None
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
            if streams is not None:
                streams.append(name)
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
        if self._reports is not None:  # (no filters: every record is tracked)
            cut = len(flags)
            out, marked_last = self._reports.write(self._pending, flags)
            del self._pending[:cut]
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
    """Markers and ``--top`` from the runs the kernel's stream matcher hands over whole
    (``report_runs``): each closed run held until its last record is written, then
    reported right after it. The matcher holds back the records of runs still open;
    a closed run's first records may have gone before its last (another stream's record
    not decided yet stops the output), so its first record is kept as it closes."""

    def __init__(
        self, closed_runs: Callable[[], bytes], report: Callable[[Run, list[bytes]], bool]
    ) -> None:
        self.streams: list[str] = []  # each position's stream (no filters: every record)
        self._closed_runs = closed_runs  # StreamMatcher.closed_runs
        self._report = report
        self._written = 0  # positions written so far
        # closed runs not written yet, by last position (output order), first record last
        self._closed: list[tuple[int, int, int, int, int, int, int, bytes]] = []

    def write(self, pending: list[bytes], flags: bytes) -> tuple[list[bytes], bool]:
        """The first ``len(flags)`` pending records as their flags say, each run's
        report after its last record; and whether the last line is a report."""
        closed = self._closed_runs()
        if closed:  # (a run closed now was open until now: its first record is pending)
            fields, done = array("q", closed), self._written
            for k in range(0, len(fields), RUN_FIELDS):
                first, last, length, source_end, source_first, lo, hi = fields[k + 1 : k + 8]
                run = (last, length, source_end, source_first, lo, hi, first, pending[first - done])
                heappush(self._closed, run)
        cut, base = len(flags), self._written
        released, written = pending[:cut], flags.translate(INVERTED)
        out: list[bytes] = []
        at, marked_last = 0, False
        while self._closed and self._closed[0][0] < base + cut:
            last, length, source_end, source_first, lo, hi, first, record = heappop(self._closed)
            stop = last - base + 1
            out += compress(released[at:stop], written[at:stop])
            at = stop
            streams = self.streams
            source = (source_end, source_first + 1, source_end + 1, streams[source_end])
            content = (lo & MASK64) | (hi & MASK64) << 64
            start = Entry(record, first + 1, streams[first])  # (a number: position + 1)
            end = Entry(b"", last + 1, streams[last])
            marked_last = self._report(KernelRun(start, end, length, content, source), out)
            marked_last = marked_last and stop == cut
        out += compress(released[at:], written[at:])
        self._written += cut
        return out, marked_last


def stream_path(parts: Parts, ledger: Ledger) -> StreamPath | KernelStreamPath:
    """The stream path the plan names: the kernel's where it serves (nothing read per
    run), else the Python decider's."""
    plan = parts.plan
    if plan.stream_decider == "kernel":
        return KernelStreamPath(parts, ledger, plan.compiled)
    return StreamPath(parts, ledger, plan.ordered)
