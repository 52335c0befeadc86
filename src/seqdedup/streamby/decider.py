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

import re
from array import array
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, AnyStr, NamedTuple, Protocol

from seqdedup.attribution import DecisionCount
from seqdedup.config import compile_stream_pattern
from seqdedup.engine import SEED
from seqdedup.hashes import MASK64, MASK128, python_hash128
from seqdedup.matcher import PRIME, SHARED, coefficients
from seqdedup.timelimit import PatternTimeout, each_within

if TYPE_CHECKING:
    from hashlib import blake2b

    from seqdedup.config import Config

UNNAMED = "(unnamed)"  # the stream of the records before the first one that names one
# A run's content hash is keyed with the seed xor this (apart from the key hashes' own)
CONTENT_SALT = 0x72756E2D6B657973_636F6E74656E7473
LIBRARY_END = -1  # where a loaded window "ended": before every window of the run
STRETCH_BATCH = 4096  # a stream's new records are handed to the library this often


class StreamNamer:
    """Each record's stream name (``None``: the pattern or field is not there, so it
    belongs to the stream of the record before it) and its key text without the name."""

    def __init__(self, config: Config, kernel: Any = None) -> None:
        self._kernel = kernel  # with a prefix program, it finds the names
        self._json: tuple[str, ...] | None = None
        self._pattern: re.Pattern[str] | None = None  # on the records' text
        self._label: str | None = None
        # On the records' bytes: in byte mode, and for ASCII records in text mode
        self._twin: re.Pattern[bytes] | None = None
        self._text = not config.byte_mode
        self._decoded: dict[bytes, str] = {}  # names as text, recently seen
        if config.stream_by_json is not None:
            from seqdedup.jsonkeys import parse_path

            self._json = parse_path(config.stream_by_json, "--stream-by-json")
        elif config.stream_by is not None:
            self._pattern, self._twin = compile_stream_pattern(config.stream_by, config.byte_mode)
            self._label = f"--stream-by '{config.stream_by}'"
            if self._pattern is not None:  # (text mode: the twin, for ASCII records)
                from seqdedup.filters import byte_twin

                self._twin = byte_twin(self._pattern)
        self._program = self.program() if kernel is not None else None

    def split(self, records: list[bytes]) -> tuple[list[str | None], list[bytes]]:
        """The stream names of ``records`` and the records as their keys see them."""
        if self._json is not None:
            return [self._json_name(record) for record in records], records
        prefixed = self.prefixed(records)
        if prefixed is not None:
            names, indices, stripped = prefixed
            return [names[i] if i >= 0 else None for i in indices], stripped
        if self._twin is not None and (not self._text or b"".join(records).isascii()):
            return self._split_bytes(records, self._twin)
        return self._split_text(records)

    def prefixed(self, records: list[bytes]) -> tuple[list[str], array[int], list[bytes]] | None:
        """With a prefix program (None without): the distinct names, each record's
        name as an index into them (-1: none), each record without its match, found by
        the kernel (and by the text pattern for the records it left)."""
        if self._program is None:
            return None
        raw, found, stripped, unread = self._kernel.stream_prefixes(
            records, *self._program, self._text, SEED
        )
        names = [name.decode("utf-8", "backslashreplace") for name in raw]
        indices = array("i", found)
        self.read_rest(records, names, indices, stripped, unread)
        return names, indices, stripped

    def read_rest(
        self,
        records: list[bytes],
        names: list[str],
        indices: array[int],
        keys: list[bytes],
        unread: bytes,
    ) -> None:
        """The records the kernel's prefix program left (``unread``: their positions,
        int32; its bytes twin is exact on ASCII, and their match read a byte beyond):
        named by the text pattern, their names added to ``names`` where new, their
        indices and keys set in place."""
        if not unread:
            return
        positions = array("i", unread)
        try:
            found, keyed = self._split_text([records[k] for k in positions])
        except PatternTimeout as exc:  # (its index in the batch, not in those left)
            raise PatternTimeout(exc.label, positions[exc.index]) from None
        known = {name: index for index, name in reversed(list(enumerate(names)))}
        for position, name, key in zip(positions, found, keyed, strict=True):
            keys[position] = key
            if name is None:
                indices[position] = -1
                continue
            index = known.get(name)
            if index is None:
                index = known[name] = len(names)
                names.append(name)
            indices[position] = index

    def _split_text(self, records: list[bytes]) -> tuple[list[str | None], list[bytes]]:
        """:meth:`split` by the pattern on the records' text."""
        assert self._pattern is not None
        names: list[str | None] = []
        keyed: list[bytes] = []
        group = 1 if self._pattern.groups else 0
        texts = [record.decode("utf-8", "surrogateescape") for record in records]
        matches = self._matches(self._pattern, texts)
        for record, text, match in zip(records, texts, matches, strict=True):
            if match is None:
                names.append(None)
                keyed.append(record)
                continue
            names.append(match.group(group) or "")
            start, end = match.span()
            keyed.append((text[:start] + text[end:]).encode("utf-8", "surrogateescape"))
        return names, keyed

    def program(self) -> PrefixProgram | None:
        """The pattern as a prefix program (on bytes: the pattern itself in byte mode,
        its twin for ASCII records in text mode), if it is one."""
        if self._json is not None or self._twin is None:
            return None
        return prefix_program(self._twin)

    def _matches(
        self, pattern: re.Pattern[AnyStr], texts: list[AnyStr]
    ) -> list[re.Match[AnyStr] | None]:
        """The pattern's first match in each text, under the time limit of user
        patterns (a backtracking pattern is one line, not a hang)."""
        assert self._label is not None
        return each_within(pattern.search, texts, self._label)

    def _split_bytes(
        self, records: list[bytes], pattern: re.Pattern[bytes]
    ) -> tuple[list[str | None], list[bytes]]:
        """The same on the records' bytes (byte mode, or ASCII records in text mode)."""
        names: list[str | None] = []
        keyed: list[bytes] = []
        decoded, group = self._decoded, 1 if pattern.groups else 0
        if len(decoded) > 4096:  # (a cache, not a record of every name)
            decoded.clear()
        for record, match in zip(records, self._matches(pattern, records), strict=True):
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
            value: object = json.loads(record)
        except (ValueError, RecursionError):
            return None
        for step in self._json or ():
            if not isinstance(value, dict) or step not in value:
                return None
            value = value[step]
        return _writable(value) if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _writable(name: str) -> str:
    """A stream name that can be written: a lone surrogate (a JSON string may escape
    one) has no UTF-8, so it stays the escape it was read as (backslash, u, 4 digits)."""
    try:
        name.encode("utf-8", "surrogateescape")
        return name
    except UnicodeEncodeError:
        return "".join(
            f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" and not "\udc80" <= c <= "\udcff" else c
            for c in name
        )


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
        admitted, recent, horizon = self._admitted, self._recent, end - self.history
        while admitted and admitted[0][0] < horizon:  # forget what left the history
            _, old = admitted.popleft()
            occurrences = recent[old]
            occurrences.popleft()
            if not occurrences:
                del recent[old]
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
        self.closed: list[Run] | None = None  # a list: every run appended as it closes
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
            lane = _Lane(self.window, stream_tag(name) if self.per_stream else 0)
        lanes[name] = lane
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
        while lane.entries:
            self._decide(lane, lane.entries.popleft())
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


class PrefixProgram(NamedTuple):
    """A pattern as steps from the record's start (see :func:`prefix_program`): per step
    a set of bytes (256 bits), how often at least and at most (-1: no limit); the steps
    ``name_from`` .. ``name_to`` - 1 are the name."""

    sets: bytes
    mins: bytes  # int64 each
    maxes: bytes
    name_from: int
    name_to: int


def prefix_program(pattern: re.Pattern[bytes]) -> PrefixProgram | None:
    """The bytes pattern as a prefix program, if greedy steps without backtracking find
    exactly what it finds: anchored at the start (``^`` or ``\\A``), then literals,
    classes and greedy repeats of one class, at most one group of them (the name); a
    repeat whose count may vary must not share a byte with what can follow it up to the
    next required step (so backtracking could never give a byte back). None otherwise."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    if pattern.flags or pattern.groups > 1:
        return None
    items = list(_parser.parse(pattern.pattern, pattern.flags))
    if not items or items[0] not in ((c.AT, c.AT_BEGINNING), (c.AT, c.AT_BEGINNING_STRING)):
        return None
    found = _steps(c, items[1:])
    if found is None or not _greedy_is_exact(found[0]):
        return None
    steps, name = found
    return PrefixProgram(
        b"".join(members.to_bytes(32, "little") for members, _, _ in steps),
        array("q", [low for _, low, _ in steps]).tobytes(),
        array("q", [high for _, _, high in steps]).tobytes(),
        *name,
    )


def _steps(
    c: ModuleType, items: list[tuple[object, ParsedArg]]
) -> tuple[list[tuple[int, int, int]], tuple[int, int]] | None:
    """The items as steps (set as 256 bits, min, max) and the name's steps (the group's,
    or all of them), or None."""
    steps: list[tuple[int, int, int]] = []
    name = (0, 0)
    for op, arg in items:
        inner = [(op, arg)]
        if op is c.SUBPATTERN:
            group, add, remove, inner = arg
            if group != 1 or add or remove or name != (0, 0):
                return None
        first = len(steps)
        for inner_op, inner_arg in inner:
            step = _step(c, inner_op, inner_arg)
            if step is None:
                return None
            steps.append(step)
        if op is c.SUBPATTERN:
            name = (first, len(steps))
            if first == len(steps):
                return None
    if not steps:
        return None
    return steps, name if name != (0, 0) else (0, len(steps))


def _greedy_is_exact(steps: list[tuple[int, int, int]]) -> bool:
    """Whether no step whose count may vary shares a byte with what may follow it, up to
    and including the next step that must match at least once."""
    for k, (members, low, high) in enumerate(steps):
        if low == high:
            continue
        following = 0
        for later, later_low, _ in steps[k + 1 :]:
            following |= later
            if later_low:
                break
        if members & following:
            return False
    return True


# An argument of an item of ``re``'s parser (an int, a pair, a list of items...): the
# parser is private and untyped.
ParsedArg = Any

_CLASSES = {
    "CATEGORY_DIGIT": b"0123456789",
    "CATEGORY_WORD": b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "CATEGORY_SPACE": b" \t\n\r\f\v",
}
_ALL = (1 << 256) - 1


def _members(c: ModuleType, op: object, arg: ParsedArg) -> int | None:
    """The bytes one item matches, as bits; None for what a set cannot say."""
    if op is c.LITERAL:
        return 1 << int(arg)
    if op is c.NOT_LITERAL:
        return _ALL & ~(1 << int(arg))
    if op is c.ANY:
        return _ALL & ~(1 << 10)  # (no DOTALL: any byte but a newline)
    if op is c.RANGE:
        return sum(1 << b for b in range(arg[0], arg[1] + 1))
    if op is c.CATEGORY:
        name = str(arg)
        negated = name.startswith("CATEGORY_NOT_")
        base = _CLASSES.get(name.replace("CATEGORY_NOT_", "CATEGORY_"))
        if base is None:
            return None
        bits = sum(1 << b for b in base)
        return _ALL & ~bits if negated else bits
    if op is c.IN:
        bits, negate = 0, False
        for inner_op, inner_arg in arg:
            if inner_op is c.NEGATE:
                negate = True
                continue
            part = _members(c, inner_op, inner_arg)
            if part is None:
                return None
            bits |= part
        return _ALL & ~bits if negate else bits
    return None


def _step(c: ModuleType, op: object, arg: ParsedArg) -> tuple[int, int, int] | None:
    """One item as a step (bits, min, max), or None."""
    if op is c.MAX_REPEAT:
        low, high, inner = arg
        if len(inner) != 1:
            return None
        members = _members(c, *inner[0])
        if members is None:
            return None
        return members, low, -1 if high is c.MAXREPEAT else high
    members = _members(c, op, arg)
    return None if members is None else (members, 1, 1)


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
