"""Interleaved sources (``--stream-by``): which stream each record belongs to, and the
skip rule per stream with one shared history (docs/engine.md, "Interleaved streams").

* :class:`StreamNamer` reads each record's stream name (a regular expression's first
  group, or a JSON field) and gives the record its key text without it.
* :class:`StreamDecider` applies the rule: windows are W consecutive records *of one
  stream*; a window is a repeat when an equal window of any stream ended before it
  started (in input order) and is still remembered; a record inside a repeat is
  skipped. Streams idle for ``idle`` records, or beyond ``max_streams``, are ended as at
  end of input. It also forms each stream's duplicate runs and counts their sequences.

Positions count tracked records across the whole run, as the one-stream rule does, so
with a single stream the decisions are exactly those of :mod:`seqdedup.matcher`.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Any

from seqdedup.config import compile_stream_pattern
from seqdedup.engine import MASK64, MASK128
from seqdedup.matcher import coefficients

if TYPE_CHECKING:
    import re

    from seqdedup.config import Config

UNNAMED = "(unnamed)"  # the stream of the records before the first one that names one
CONTENT_BASE = 0x9E3779B97F4A7C15F39CC0605CEDC835  # odd: a run's content hash, rolled


class StreamNamer:
    """Each record's stream name (``None``: the pattern or field is not there, so it
    belongs to the stream of the record before it) and its key text without the name."""

    def __init__(self, config: Config) -> None:
        self._json: tuple[str, ...] | None = None
        self._pattern: re.Pattern[Any] | None = None
        self._twin: re.Pattern[bytes] | None = None  # the pattern on ASCII records' bytes
        self._text = not config.byte_mode
        self._decoded: dict[bytes, str] = {}  # names as text, recently seen
        if config.stream_by_json is not None:
            from seqdedup.jsonkeys import parse_path

            self._json = parse_path(config.stream_by_json, "--stream-by-json")
        elif config.stream_by is not None:
            self._pattern = compile_stream_pattern(config.stream_by, config.byte_mode)
            if self._text:
                from seqdedup.filters import byte_twin

                self._twin = byte_twin(self._pattern)

    def split(self, records: list[bytes]) -> tuple[list[str | None], list[bytes]]:
        """The stream names of ``records`` and the records as their keys see them."""
        if self._json is not None:
            return [self._json_name(record) for record in records], records
        assert self._pattern is not None
        if not self._text:
            return self._split_bytes(records, self._pattern)
        if self._twin is not None and b"".join(records).isascii():
            return self._split_bytes(records, self._twin)
        names: list[str | None] = []
        keyed: list[bytes] = []
        search, group = self._pattern.search, 1 if self._pattern.groups else 0
        for record in records:
            text = record.decode("utf-8", "surrogateescape")
            match = search(text)
            if match is None:
                names.append(None)
                keyed.append(record)
                continue
            names.append(match.group(group) or "")
            start, end = match.span()
            keyed.append((text[:start] + text[end:]).encode("utf-8", "surrogateescape"))
        return names, keyed

    def _split_bytes(
        self, records: list[bytes], pattern: re.Pattern[bytes]
    ) -> tuple[list[str | None], list[bytes]]:
        """The same on the records' bytes (byte mode, or ASCII records in text mode)."""
        names: list[str | None] = []
        keyed: list[bytes] = []
        decoded, group = self._decoded, 1 if pattern.groups else 0
        if len(decoded) > 4096:  # (a cache, not a record of every name)
            decoded.clear()
        for record, match in zip(records, map(pattern.search, records), strict=True):
            if match is None:
                names.append(None)
                keyed.append(record)
                continue
            raw = match.group(group) or b""
            name = decoded.get(raw)
            if name is None:
                name = decoded[raw] = raw.decode("utf-8", "backslashreplace")
            names.append(name)
            start, end = match.span()
            keyed.append(record[end:] if start == 0 else record[:start] + record[end:])
        return names, keyed

    def _json_name(self, record: bytes) -> str | None:
        import json

        try:
            value: Any = json.loads(record)
        except (ValueError, RecursionError):
            return None
        for step in self._json or ():
            if not isinstance(value, dict) or step not in value:
                return None
            value = value[step]
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


class Entry:
    """One record on its way through a stream run, in input order."""

    __slots__ = (
        "decided",
        "key",
        "marker",
        "number",
        "position",
        "record",
        "run",
        "skip",
        "source",
        "stream",
        "tracked_as",
    )

    def __init__(self, record: bytes, number: int, stream: str) -> None:
        self.record = record
        self.number = number  # run-wide input record number (1-based)
        self.stream = stream
        self.decided = False
        self.skip = False
        self.key = 0
        self.position = -1  # tracked index (a pass-through record has none)
        self.run: Run | None = None  # the duplicate run of a skipped record
        self.source: tuple[int, int, int, str] | None = None  # a repeat window's source
        self.marker: Run | None = None  # the run that ends at this record
        self.tracked_as = -1  # the filter decision (filters.TRACKED for a tracked record)


class Run:
    """A duplicate run of one stream: its first and last records, where the earliest
    occurrence of its first window lies, and its sequence's count when it closes."""

    __slots__ = ("closed", "content", "count", "first", "last", "length", "source")

    def __init__(self, first: Entry) -> None:
        self.first = self.last = first
        self.source = first.source
        self.content = 0
        self.length = 0
        self.count = 0
        self.closed = False


class _Lane:
    """One stream's window state: its last W key hashes, its undecided records, the
    rolling fingerprint of its last window, and its open duplicate run."""

    __slots__ = ("entries", "hashes", "hi", "last", "lo", "run")

    def __init__(self, window: int) -> None:
        self.hashes: deque[int] = deque(maxlen=window)
        self.entries: deque[Entry] = deque()
        self.lo = self.hi = 0
        self.last = -1
        self.run: Run | None = None


class SequenceCounts:
    """How often each duplicate run's content has been seen (the first occurrence
    counts), least recently seen evicted past ``limit``; ``identified``: contents new
    to the table so far."""

    def __init__(self, limit: int | None) -> None:
        self._counts: OrderedDict[int, int] = OrderedDict()
        self._limit = limit
        self.identified = 0

    def count(self, content: int) -> int:
        counts = self._counts
        seen = counts.pop(content, None)
        if seen is None:
            self.identified += 1
            seen = 1
        counts[content] = seen + 1
        if self._limit is not None and len(counts) > self._limit:
            counts.popitem(last=False)
        return seen + 1


class StreamDecider:
    """The rule per stream, the history shared (see the module's docstring)."""

    def __init__(
        self,
        window: int,
        history: int | None,
        idle: int | None,
        max_streams: int | None,
        sequences: SequenceCounts | None,
        sources: bool,
    ) -> None:
        self.window = window
        self.history = history
        self.idle = idle
        self.max_streams = max_streams
        coeffs = coefficients(window)
        # B per lane (the coefficient before the last); any value rolls a 1-record window
        self._base = (coeffs[window - 2], coeffs[2 * window - 2]) if window > 1 else (1, 1)
        self._top = (coeffs[0], coeffs[window])  # B**(W-1) per lane: the leaving record's
        self._lanes: OrderedDict[str, _Lane] = OrderedDict()  # least recently active first
        self._first: dict[int, tuple[int, int, int, str]] = {}  # unlimited history
        self._recent: dict[int, deque[tuple[int, int, int, str]]] = {}  # limited history
        self._admitted: deque[tuple[int, int]] = deque()  # (end, fingerprint), oldest first
        self._sources = sources  # keep where each window first occurred (for reports)
        self.position = 0
        self.sequences = sequences  # None: runs are not counted (nothing reads it)

    def push(self, name: str, key: int, entry: Entry) -> None:
        """One tracked record of stream ``name`` with key hash ``key``."""
        position = self.position
        self.position = position + 1
        entry.position = position
        entry.key = key
        lanes = self._lanes
        if self.idle is not None:
            while lanes:
                oldest = next(iter(lanes.values()))
                if position - oldest.last <= self.idle:
                    break
                self._end(next(iter(lanes)))
        lane = lanes.pop(name, None)
        if lane is None:
            if self.max_streams is not None and len(lanes) >= self.max_streams:
                self._end(next(iter(lanes)))
            lane = _Lane(self.window)
        lanes[name] = lane
        lane.last = position
        window = self.window
        lo, hi = key & MASK64, key >> 64
        if len(lane.hashes) == window:  # the oldest record leaves the window
            old = lane.hashes[0]
            lane.lo = (lane.lo - (old & MASK64) * self._top[0]) & MASK64
            lane.hi = (lane.hi - (old >> 64) * self._top[1]) & MASK64
        lane.lo = (lane.lo * self._base[0] + lo) & MASK64
        lane.hi = (lane.hi * self._base[1] + hi) & MASK64
        lane.hashes.append(key)
        entries = lane.entries
        entries.append(entry)
        if len(lane.hashes) < window:
            return
        first = entries[0]
        fingerprint = lane.lo | lane.hi << 64
        source = self._lookup(fingerprint, first.position, position)
        if source is not None:
            first.source = source
            for member in entries:
                member.skip = True
        self._admit(fingerprint, position, first.number, entry.number, name)
        self._decide(lane, entries.popleft())

    def _lookup(self, fingerprint: int, start: int, end: int) -> tuple[int, int, int, str] | None:
        """The remembered occurrence that makes the window ``start``..``end`` a repeat:
        one that ended before it started (the earliest; with a history, the latest)."""
        if self.history is None:
            earliest = self._first.get(fingerprint)
            return earliest if earliest is not None and earliest[0] < start else None
        admitted, recent, horizon = self._admitted, self._recent, end - self.history
        while admitted and admitted[0][0] < horizon:  # forget what left the history
            _, old = admitted.popleft()
            occurrences = recent[old]
            occurrences.popleft()
            if not occurrences:
                del recent[old]
        for occurrence in reversed(recent.get(fingerprint, ())):
            if occurrence[0] < start:
                return occurrence
        return None

    def _admit(self, fingerprint: int, end: int, first: int, last: int, name: str) -> None:
        occurrence = (end, first, last, name) if self._sources else (end, 0, 0, "")
        if self.history is None:
            self._first.setdefault(fingerprint, occurrence)
            return
        self._admitted.append((end, fingerprint))
        found = self._recent.get(fingerprint)
        if found is None:
            self._recent[fingerprint] = deque((occurrence,))
        else:
            found.append(occurrence)

    def _decide(self, lane: _Lane, entry: Entry) -> None:
        entry.decided = True
        run = lane.run
        if not entry.skip:
            if run is not None:
                self._close(lane)
            return
        if run is None:
            run = lane.run = Run(entry)
        run.last = entry
        run.length += 1
        run.content = (run.content * CONTENT_BASE + entry.key) & MASK128
        entry.run = run

    def _close(self, lane: _Lane) -> None:
        run = lane.run
        assert run is not None
        lane.run = None
        run.closed = True
        run.last.marker = run
        if not self._sources:  # (with reports, counted as written: see count())
            self.count(run)

    def count(self, run: Run) -> None:
        """Count a closed run's sequence (with reports, in output order: its marker says
        how often it has been seen by then)."""
        if self.sequences is not None:
            run.count = self.sequences.count(run.content)

    def _end(self, name: str) -> None:
        """Stream ``name`` ends: decide what it holds; its next record starts it anew."""
        lane = self._lanes.pop(name)
        while lane.entries:
            self._decide(lane, lane.entries.popleft())
        if lane.run is not None:
            self._close(lane)

    def end_all(self) -> None:
        """End of input (or of one input file): every stream ends."""
        for name in list(self._lanes):
            self._end(name)

    @property
    def remembered_windows(self) -> int:
        return len(self._first) + len(self._admitted)
