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
with a single stream the decisions are exactly those of :mod:`seqdedup.engine.matcher`.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from seqdedup.base.hashes import MASK64, MASK128, python_hash128
from seqdedup.engine.attribution import DecisionCount
from seqdedup.engine.fingerprints import PRIME, coefficients
from seqdedup.engine.matcher import SHARED

if TYPE_CHECKING:
    from hashlib import blake2b


# A run's content hash is keyed with the seed xor this (apart from the key hashes' own)
CONTENT_SALT = 0x72756E2D6B657973_636F6E74656E7473
LIBRARY_END = -1  # where a loaded window "ended": before every window of the run
STRETCH_BATCH = 4096  # a stream's new records are handed to the library this often


class Entry:
    """One record on its way through a stream run, in input order."""

    __slots__ = (
        "decided",
        "differs",
        "index",
        "key",
        "keyed",
        "marker",
        "new",
        "number",
        "position",
        "record",
        "run",
        "skip",
        "source",
        "stream",
        "text",
        "tracked_as",
    )

    def __init__(self, record: bytes, number: int, stream: str) -> None:
        self.record = record
        self.number = number  # run-wide input record number (1-based)
        self.stream = stream
        self.new = False  # in a window that is no repeat (saved to a library)
        self.keyed = record  # without the stream's name: what a library saves
        self.decided = False
        self.skip = False
        self.key = 0
        self.position = -1  # tracked index (a pass-through record has none)
        self.run: Run | None = None  # the duplicate run of a skipped record
        self.index = 0  # its place in that run (0: the first)
        self.source: tuple[int, int, int, str] | None = None  # a repeat window's source
        self.marker: Run | None = None  # the run that ends at this record
        self.tracked_as = -1  # the filter decision (filters.TRACKED for a tracked record)
        # markers under key options: its text's digest, and whether its window's text
        # differs from the occurrence's
        self.text = 0
        self.differs = False


class Run:
    """A duplicate run of one stream: its first and last records, where the earliest
    occurrence of its first window lies, and its sequence's count when it closes."""

    __slots__ = ("_content", "closed", "count", "differs", "first", "last", "length", "source")

    def __init__(self, first: Entry, content: blake2b) -> None:
        self.first = self.last = first
        self.source = first.source
        self.differs = False  # some record's text differs from what it repeats (markers)
        # its records' key hashes, keyed-hashed (a PRF: equal only for equal contents)
        self._content = content
        self.length = 0
        self.count = 0
        self.closed = False

    def add(self, key: int) -> None:
        """The run's next record (its 128-bit key hash)."""
        self._content.update(key.to_bytes(16, "little"))
        self.length += 1

    @property
    def content(self) -> int:
        """The run's content: 128 bits that identify its sequence of key hashes."""
        return int.from_bytes(self._content.digest(), "little")


class _Lane:
    """One stream's window state: its last W key hashes, its undecided records, the
    rolling fingerprint of its last window, and its open duplicate run."""

    __slots__ = (
        "entries",
        "hashes",
        "hi",
        "last",
        "lo",
        "new",
        "open",
        "run",
        "stretch",
        "tag",
        "witness",
    )

    def __init__(self, window: int, tag: int = 0) -> None:
        self.tag = tag  # --per-stream: mixed into its windows' fingerprints (0: shared)
        self.hashes: deque[int] = deque(maxlen=window)
        self.entries: deque[Entry] = deque()
        self.lo = self.hi = 0
        self.last = -1
        self.run: Run | None = None
        self.new: list[bytes] = []  # its latest new records, not handed to the library yet
        self.stretch: Stretch | None = None  # where they go (library.save.Stretches)
        self.open = False  # its stretch goes on (handed over in part)
        # where the window that its last window repeats ends (its key hashes compared):
        # a position, or for a library window its last region index; None: no repeat
        self.witness: int | None = None

    def roll(self, key: int, window: int, base: tuple[int, int], top: tuple[int, int]) -> None:
        """Take the next key hash into the window and its fingerprint: rolled modulo
        PRIME as matcher.fingerprints_py (``base``: B per lane, ``top``: B**(W-1)); a
        1-record window's fingerprint is its key hash."""
        if window == 1:
            self.lo, self.hi = key & MASK64, key >> 64 & MASK64
        else:
            if len(self.hashes) == window:  # the oldest record leaves the window
                old = self.hashes[0]
                self.lo = (self.lo - (old & PRIME) * top[0]) % PRIME
                self.hi = (self.hi - (old >> 64 & PRIME) * top[1]) % PRIME
            self.lo = (self.lo * base[0] + (key & PRIME)) % PRIME
            self.hi = (self.hi * base[1] + (key >> 64 & PRIME)) % PRIME
        self.hashes.append(key)


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


class StreamKeys:
    """What a stream window's candidate is compared with (kernel: streamby.c,
    same_as_lane): per position, a record's key hash and the position of its stream's
    record before it (-1 at a stream's start), so that a window known by its end is read
    back; the oldest are dropped once no remembered window can hold them; and a loaded
    library's key region (its last record at index -1)."""

    def __init__(self, window: int, history: int | None, idle: int | None) -> None:
        self.window = window
        # With a history and an idle limit, what a remembered window may hold: positions
        # within the history, and (W-1) times the widest gap before (a stream idle longer
        # has ended). Without either, a window may spread over any length: all are kept.
        self.span: int | None = None
        if history is not None and idle is not None:
            self.span = history + 1 + (window - 1) * idle
        self.keys: list[int] = []
        self.before: list[int] = []
        self.base = 0
        self.region: list[int] = []
        # Markers under key options: each record's text digest, beside its key hash
        # (and the library region's, at its indices)
        self.texts: list[int] | None = None
        self.region_texts: Sequence[int] = ()

    def append(self, position: int, key: int, before: int, text: int = 0) -> None:
        texts = self.texts
        if self.window == 1 and texts is None:  # the fingerprint is the key hash
            return
        drop = position - self.span - self.base if self.span is not None else 0
        if drop > 4096 and 2 * drop > len(self.keys):
            del self.keys[:drop]
            del self.before[:drop]
            if texts is not None:
                del texts[:drop]
            self.base += drop
        self.keys.append(key)
        self.before.append(before)
        if texts is not None:
            texts.append(text)

    def _window(self, end: int, values: list[int] | None = None) -> list[int] | None:
        """The key hashes (or ``values``: the text digests) of the window ending at
        ``end``, oldest first, or None where they are no longer held."""
        held = self.keys if values is None else values
        out = []
        at = end
        for _ in range(self.window):
            if at < self.base:
                return None
            out.append(held[at - self.base])
            at = self.before[at - self.base]
        out.reverse()
        return out

    def text_differs(self, occurrence: tuple[int, int, int, str], end: int, whole: bool) -> bool:
        """Whether the window ending at position ``end`` differs in its text from the
        occurrence it repeats: all W records (``whole``), or only the newest (the ones
        before it were compared with the windows before)."""
        texts = self.texts
        assert texts is not None
        last, count = _last_of(occurrence), self.window if whole else 1
        theirs: Sequence[int] | None
        if occurrence[0] == LIBRARY_END:  # its records lie together in the region
            region = self.region_texts
            at = len(region) + last + 1
            theirs = list(region[at - count : at])
        elif whole:
            theirs = self._window(last, texts)
        else:
            theirs = [texts[last - self.base]] if last >= self.base else None
        ours = self._window(end, texts) if whole else [texts[end - self.base]]
        return ours != theirs

    def same(self, occurrence: tuple[int, int, int, str], lane: _Lane) -> bool:
        """Whether the occurrence's records have the keys of the lane's window: the
        newest only when the lane's last window repeated the occurrence's predecessor,
        else all W (from the log, or the library's region)."""
        width = self.window
        if width == 1:
            return True
        last = _last_of(occurrence)
        if occurrence[0] == LIBRARY_END:  # its records lie together in the region
            region, at = self.region, len(self.region) + occurrence[1]
            if lane.witness == last - 1 and at >= 1:
                return region[at + width - 1] == lane.hashes[-1]
            return at >= 0 and region[at : at + width] == list(lane.hashes)
        held = last - self.base
        witness = lane.witness
        if held >= 0 and witness is not None and witness >= 0 and self.before[held] == witness:
            return self.keys[held] == lane.hashes[-1]
        return self._window(last) == list(lane.hashes)


def _last_of(occurrence: tuple[int, int, int, str]) -> int:
    """Where an occurrence's window ends: its end position, or for a library window
    its last region index (negative: never a position)."""
    return occurrence[2] if occurrence[0] == LIBRARY_END else occurrence[0]


Key = TypeVar("Key")
Seen = TypeVar("Seen")


def forget_before(
    admitted: deque[tuple[int, Key]], recent: dict[Key, deque[Seen]], horizon: int
) -> None:
    """Forget the occurrences that ended before ``horizon`` (``admitted``: (end, key),
    oldest first; ``recent``: each key's occurrences, oldest first): they left the
    history, and lookups' ends only grow."""
    while admitted and admitted[0][0] < horizon:
        _, old = admitted.popleft()
        occurrences = recent[old]
        occurrences.popleft()
        if not occurrences:
            del recent[old]


class WindowHistory:
    """The windows every stream has shown, in one table: the earliest occurrence of
    each fingerprint (unlimited history), or each occurrence still within the history,
    and the loaded library's windows. An occurrence is (end, first, last, stream); a
    candidate counts only when ``same`` finds its records' keys equal the window's."""

    def __init__(
        self, history: int | None, same: Callable[[tuple[int, int, int, str], _Lane], bool]
    ) -> None:
        self.history = history
        self._same = same
        self._first: dict[int, tuple[int, int, int, str]] = {}  # unlimited history
        self._recent: dict[int, deque[tuple[int, int, int, str]]] = {}  # limited history
        self._admitted: deque[tuple[int, int]] = deque()  # (end, fingerprint), oldest first
        self._library: dict[int, tuple[int, int, int, str]] = {}  # limited history

    @property
    def remembered(self) -> int:
        return len(self._first) + len(self._admitted)

    def add_library(self, fingerprints: list[int], starts: list[int], width: int) -> None:
        table = self._first if self.history is None else self._library
        for fingerprint, start in zip(fingerprints, starts, strict=True):
            table.setdefault(fingerprint, (LIBRARY_END, start, start + width - 1, ""))

    def lookup(
        self, fingerprint: int, start: int, end: int, lane: _Lane
    ) -> tuple[int, int, int, str] | None:
        """The remembered occurrence that makes the window ``start``..``end`` a repeat:
        one that ended before it started (the earliest; with a history, the latest),
        whose records' keys are those of the lane's window."""
        same = self._same
        if self.history is None:
            earliest = self._first.get(fingerprint)
            if earliest is not None and earliest[0] < start and same(earliest, lane):
                return earliest
            return None
        library = self._library.get(fingerprint)
        if library is not None and same(library, lane):
            return library
        recent = self._recent
        forget_before(self._admitted, recent, end - self.history)
        for occurrence in reversed(recent.get(fingerprint, ())):
            if occurrence[0] < start and same(occurrence, lane):
                return occurrence
        return None

    def in_library(self, fingerprint: int, lane: _Lane) -> tuple[int, int, int, str] | None:
        """--per-stream: a loaded library window with this (unmixed) fingerprint, seen by
        every stream."""
        table = self._first if self.history is None else self._library
        found = table.get(fingerprint)
        if found is not None and found[0] == LIBRARY_END and self._same(found, lane):
            return found
        return None

    def admit(
        self, fingerprint: int, end: int, occurrence: tuple[int, int, int, str] | None
    ) -> None:
        """Remember the window ending at ``end`` (``occurrence``: where it lies, when
        reports need it)."""
        occurrence = occurrence or (end, 0, 0, "")
        if self.history is None:
            self._first.setdefault(fingerprint, occurrence)
            return
        self._admitted.append((end, fingerprint))
        found = self._recent.get(fingerprint)
        if found is None:
            self._recent[fingerprint] = deque((occurrence,))
        else:
            found.append(occurrence)


class StreamDecider:
    """The rule per stream, the history shared (see the module's docstring)."""

    lane_type: type[_Lane] = _Lane

    def __init__(
        self,
        window: int,
        history: int | None,
        idle: int | None,
        max_streams: int | None,
        sequences: SequenceCounts | None,
        sources: bool,
        seed: int = 0,
        force_collisions: bool = False,  # tests: every fingerprint of W > 1 the same
        per_stream: bool = False,
        closed: list[Run] | None = None,
    ) -> None:
        self.window = window
        # --per-stream: each stream's windows carry its name's 128-bit keyed hash, mixed
        # into their fingerprints, so a stream finds only its own earlier windows (and
        # the library's) in the one shared table, bounded by the one history
        self.per_stream = per_stream
        self.history = history
        self.idle = idle
        self.max_streams = max_streams
        coeffs = coefficients(window, seed)
        # B per lane (the coefficient before the last); any value rolls a 1-record window
        self._base = (coeffs[window - 2], coeffs[2 * window - 2]) if window > 1 else (1, 1)
        self._top = (coeffs[0], coeffs[window])  # B**(W-1) per lane: the leaving record's
        self._shared = force_collisions and window > 1
        self._lanes: OrderedDict[str, _Lane] = OrderedDict()  # least recently active first
        self._sources = sources  # keep where each window first occurred (for reports)
        self.position = 0
        self.sequences = sequences  # None: runs are not counted (nothing reads it)
        self._keys = StreamKeys(window, history, idle)  # a candidate's keys, compared
        self._windows = WindowHistory(history, self._keys.same)
        self._stretches: Callable[[], Stretch] | None = None  # makes a stream's Stretches
        self._whole = False  # save every record (not only the new ones)
        self._texts = False  # markers under key options: texts compared
        self.closed = closed  # a list: every run appended as it closes (None: none)
        from hashlib import blake2b  # (here: hashlib loads OpenSSL, milliseconds at start-up)

        salted = (seed ^ CONTENT_SALT).to_bytes(16, "little")
        self._content = blake2b(digest_size=16, key=salted)  # each run's content hash

    def compare_texts(self, region: Sequence[int]) -> None:
        """Markers under key options: tell when a run's records differ in their text
        (each entry's ``text``) from what they repeat (``region``: the loaded library's
        text digests, at its region indices)."""
        self._texts = True
        self._keys.texts = []
        self._keys.region_texts = region

    def add_library(
        self, fingerprints: list[int], starts: list[int], region: list[int] | None = None
    ) -> None:
        """Loaded library windows: seen by every stream, before anything (never
        forgotten); a source's (first, last) are its region indices (``region``: the
        library's key hashes, the last at index -1, against which they are compared)."""
        width = self.window
        self._keys.region = region or []
        self._windows.add_library(fingerprints, starts, width)

    def save_into(self, stretches: Callable[[], Stretch], whole: bool) -> None:
        """Hand each stream's new material (records in windows that are no repeat; with
        ``whole``, every record) to ``stretches()``, one per stream stretch."""
        self._stretches = stretches
        self._whole = whole

    def push(self, name: str, key: int, entry: Entry) -> None:
        """One tracked record of stream ``name`` with key hash ``key``."""
        position = self.position
        lane = self._lane_of(name, key, entry)
        self._keys.append(position, key, lane.last, entry.text)
        lane.last = position
        lane.roll(key, self.window, self._base, self._top)
        entries = lane.entries
        entries.append(entry)
        if len(lane.hashes) < self.window:
            return
        first = entries[0]
        raw = SHARED if self._shared else lane.lo | lane.hi << 64
        fingerprint = raw ^ lane.tag  # (its stream's own, with --per-stream)
        windows = self._windows
        repeated = lane.witness is not None  # (the lane's last window was a repeat)
        source = windows.in_library(raw, lane) if lane.tag else None
        if source is None:
            source = windows.lookup(fingerprint, first.position, position, lane)
        lane.witness = None if source is None else _last_of(source)
        if source is not None:
            first.source = source
            for member in entries:
                member.skip = True
            if self._texts:  # (a window after a repeat: its newest record only)
                whole = not repeated
                if self._keys.text_differs(source, position, whole):
                    (first if whole else entry).differs = True
        elif self._stretches is not None:
            for member in entries:
                member.new = True
        occurrence = (position, first.number, entry.number, name) if self._sources else None
        windows.admit(fingerprint, position, occurrence)
        self._decide(lane, entries.popleft())

    def _lane_of(self, name: str, key: int, entry: Entry) -> _Lane:
        """The next record's position, and its stream's lane (a new one where the
        stream is new, or ended: idle too long, or one too many)."""
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
            lane = self.lane_type(self.window, stream_tag(name) if self.per_stream else 0)
        lanes[name] = lane
        return lane

    def _drain(self, lane: _Lane) -> None:
        """A stream ends: decide its records left."""
        while lane.entries:
            self._decide(lane, lane.entries.popleft())

    def _decide(self, lane: _Lane, entry: Entry) -> None:
        entry.decided = True
        if self._stretches is not None:
            if entry.new or self._whole:
                lane.new.append(entry.keyed)
                if len(lane.new) >= STRETCH_BATCH:
                    self._hand_over(lane, ended=False)
            elif lane.new or lane.open:
                self._hand_over(lane, ended=True)
        run = lane.run
        if not entry.skip:
            if run is not None:
                self._close(lane)
            return
        if run is None:
            run = lane.run = Run(entry, self._content.copy())
        run.last = entry
        run.differs = run.differs or entry.differs
        entry.index = run.length
        run.add(entry.key & MASK128)
        entry.run = run

    def _close(self, lane: _Lane) -> None:
        run = lane.run
        assert run is not None
        lane.run = None
        run.closed = True
        run.last.marker = run
        if self.closed is not None:
            self.closed.append(run)
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
        self._drain(lane)
        if lane.run is not None:
            self._close(lane)
        if lane.new or lane.open:
            self._hand_over(lane, ended=True)

    def _hand_over(self, lane: _Lane, ended: bool) -> None:
        """The stream's new records so far go to its stretches (which end with them
        when a record that is not new, or the stream's end, follows)."""
        if lane.stretch is None:
            assert self._stretches is not None  # (called only with a library saved)
            lane.stretch = self._stretches()
        lane.stretch.add(lane.new, [True] * len(lane.new), True)
        lane.new = []
        lane.open = not ended
        if ended:
            lane.stretch.end()

    def end_all(self) -> None:
        """End of input (or of one input file): every stream ends."""
        for name in list(self._lanes):
            self._end(name)

    @property
    def remembered_windows(self) -> int:
        return self._windows.remembered


class Stretch(Protocol):
    """Where a stream's new records go when a library is saved (``library.save``'s
    ``Stretches``, one per stream stretch)."""

    def add(self, records: list[bytes], flags: list[bool], value: bool) -> None: ...
    def end(self) -> None: ...


def stream_tag(name: str) -> int:
    """A stream's identity for --per-stream: its name's keyed 128-bit hash (never 0)."""
    return python_hash128(name.encode("utf-8", "surrogateescape")) or 1


class StreamCount(DecisionCount):
    """The attributor's place in :class:`Stages` for a stream run: the sequences its
    duplicate runs identified."""

    def __init__(self, sequences: SequenceCounts) -> None:
        super().__init__()
        self.sequences = sequences

    @property
    def identified(self) -> int:
        return self.sequences.identified
