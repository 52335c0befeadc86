"""``--stream-by`` under a minimum size: the rule of :mod:`seqdedup.engine.sized` per stream,
one history for all streams (docs/design.md, "A minimum size").

A record is skipped when it lies inside a stretch of its stream's consecutive records,
at least W of them and B of size, that equals a stretch of any stream (of its own with
``--per-stream``) which ended before it started, in input order, and within the
history (its end at most ``history`` records after that one's end, as for windows), or
a stretch of a loaded library sequence. As for one stream, only each record's shortest
large-enough stretch ending there (M) and starting there (N) are looked up, each when
its last record arrives, and a record is decided once its N stretch is complete.

A stretch is known by a keyed 128-bit BLAKE2b digest of its records' key hashes: a
pseudo-random function of its content, so two contents share a digest with
probability 2^-128 (the runs' contents are compared the same way).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from seqdedup.base.hashes import MASK128
from seqdedup.engine.sized import CAP, sequence_stretches
from seqdedup.engine.stream_decider import (
    LIBRARY_END,
    Entry,
    SequenceCounts,
    StreamDecider,
    _Lane,
    forget_before,
)

if TYPE_CHECKING:
    from array import array
    from collections.abc import Sequence
    from hashlib import blake2b

Occurrence = tuple[int, int, int, str]  # (end position, first, last record number, stream)
STRETCH_SALT = 0x7374726574636865_732D6F662D6B6579  # the stretch digest's key: seed xor this


class _SizedLane(_Lane):
    """One stream's records still compared or undecided, from lane index ``base`` on,
    with prefix sums of their sizes; its last M stretch's start, its next record whose
    N stretch is not complete, and the last records a repeating N, or M, stretch covers."""

    __slots__ = (
        "base",
        "cover",
        "held",
        "m_start",
        "marked",
        "n_next",
        "released",
        "skipped_until",
        "sums",
    )

    def __init__(self, window: int, tag: int) -> None:
        super().__init__(1, tag)  # (no window of its own)
        self.held: list[Entry] = []
        self.sums = [0]
        self.base = 0
        self.m_start = 0
        self.n_next = 0
        self.cover = -1
        self.skipped_until = -1
        self.released = 0  # the next record handed on (decided, its new flag final)
        self.marked = [-1, -1]  # the last record flagged new by an M (0), an N (1) stretch

    def count(self) -> int:
        return self.base + len(self.held)


class StretchHistory:
    """The stretches every stream has shown, by digest: the earliest occurrence
    (unlimited history) or those still within the history; and the library's."""

    def __init__(self, history: int | None) -> None:
        self.history = history
        self._first: dict[bytes, Occurrence] = {}
        self._recent: dict[bytes, deque[Occurrence]] = {}
        self._admitted: deque[tuple[int, bytes]] = deque()  # (end, digest), oldest first
        self.library: dict[bytes, Occurrence] = {}

    @property
    def remembered(self) -> int:
        return len(self._first) + len(self._admitted) + len(self.library)

    def find(self, digest: bytes, start: int, end: int) -> Occurrence | None:
        """The occurrence the stretch ``start``..``end`` repeats: one that ended before
        it started (the earliest; with a history the latest, within it)."""
        if self.history is None:
            first = self._first.get(digest)
            return first if first is not None and first[0] < start else None
        recent = self._recent
        forget_before(self._admitted, recent, end - self.history)
        for occurrence in reversed(recent.get(digest, ())):
            if occurrence[0] < start:
                return occurrence
        return None

    def note(self, digest: bytes, occurrence: Occurrence) -> None:
        if self.history is None:
            self._first.setdefault(digest, occurrence)
            return
        found = self._recent.setdefault(digest, deque())
        if not found or found[-1] != occurrence:  # (a stretch both an M and an N)
            found.append(occurrence)
            self._admitted.append((occurrence[0], digest))


class SizedStreamDecider(StreamDecider):
    """:class:`StreamDecider` with the minimum-size rule: its runs, counts, library
    saving and stream ends as they are; each lane decides by stretches, not windows."""

    lane_type = _SizedLane

    def __init__(
        self,
        window: int,
        min_size: int,
        history: int | None,
        idle: int | None,
        max_streams: int | None,
        sequences: SequenceCounts | None,
        sources: bool,
        seed: int = 0,
        per_stream: bool = False,
    ) -> None:
        super().__init__(
            window, history, idle, max_streams, sequences, sources, seed, per_stream=per_stream
        )
        self.min_size = min_size
        self.cap = max(window, CAP)
        self._stretches_seen = StretchHistory(history)
        from hashlib import blake2b

        key = (seed ^ STRETCH_SALT).to_bytes(16, "little")
        self._stretch_digest: blake2b = blake2b(digest_size=16, key=key)
        self._region_texts: Sequence[int] = ()
        self._text_digests: dict[Occurrence, bytes] = {}  # markers under key options

    @property
    def remembered_windows(self) -> int:
        return self._stretches_seen.remembered

    def compare_texts(self, region: Sequence[int]) -> None:
        self._texts = True
        self._region_texts = region

    # -- a loaded library ------------------------------------------------------------
    def add_library_stretches(
        self, region: array[int], firsts: Sequence[int], lengths: Sequence[int], sizes: array[int]
    ) -> None:
        """Every large-enough M and N stretch of the loaded sequences (``region``: their
        key hashes, two 64-bit lanes per record; ``sizes``: each record's key size), seen
        by every stream for the whole run. Call before any push."""
        records = len(region) // 2
        keys = [region[2 * k] | region[2 * k + 1] << 64 for k in range(records)]
        library = self._stretches_seen.library
        for first, length in zip(firsts, lengths, strict=True):
            part, weights = keys[first : first + length], sizes[first : first + length]
            ending, starting = sequence_stretches(weights, self.window, self.min_size, self.cap)
            for start, end in ending + starting:
                occurrence = (LIBRARY_END, first + start - records, first + end - records, "")
                library.setdefault(self._digest_of(part[start : end + 1]), occurrence)

    # -- feeding ---------------------------------------------------------------------
    def push_sized(self, name: str, key: int, entry: Entry, size: int) -> None:
        """One tracked record of stream ``name``: its key hash, its key's size."""
        lane = self._lane_of(name, key, entry)
        assert isinstance(lane, _SizedLane)
        lane.last = entry.position
        lane.held.append(entry)
        lane.sums.append(lane.sums[-1] + size + 1)
        self._step(lane, lane.count() - 1)
        self._release(lane, lane.m_start)

    def _large(self, lane: _SizedLane, start: int, end: int) -> bool:
        n = end - start + 1
        if n < self.window:
            return False
        base, sums = lane.base, lane.sums
        return n >= self.cap or sums[end + 1 - base] - sums[start - base] >= self.min_size

    def _step(self, lane: _SizedLane, j: int) -> None:
        """Record ``j`` of the lane ends its M stretch and may complete N stretches."""
        m = lane.m_start
        source = None
        m_large = self._large(lane, m, j)
        held, base = lane.held, lane.base
        if m_large:
            while self._large(lane, m + 1, j):
                m += 1
            lane.m_start = m
            source = self._repeat(lane, m, j, 0)
            if source is not None:  # its records go (none of them is released yet)
                for entry in held[max(m, lane.skipped_until + 1) - base : j + 1 - base]:
                    entry.skip = True
                lane.skipped_until = j
                held[m - base].source = held[m - base].source or source
        while lane.n_next <= j and self._large(lane, lane.n_next, j):
            s = lane.n_next
            # (N(s) is M(j) itself: the same answer)
            found = source if m_large and s == m else self._repeat(lane, s, j, 1)
            entry = held[s - base]
            if found is not None:
                lane.cover = j
                entry.source = entry.source or found  # (a run that starts here names it)
            entry.skip = entry.skip or lane.cover >= s
            lane.n_next = s + 1

    def _repeat(self, lane: _SizedLane, start: int, end: int, kind: int) -> Occurrence | None:
        """Look the stretch up and note it; flag its records new where it repeats
        nothing (a library is saved) and mark a text that differs (markers)."""
        base = lane.base
        members = lane.held[start - base : end + 1 - base]
        content = self._digest_of([e.key for e in members])
        digest = content
        if lane.tag:  # --per-stream: its own stretches, and the library's
            digest = self._digest_of([lane.tag, int.from_bytes(content, "little")])
        seen = self._stretches_seen
        found = seen.library.get(content) or seen.find(
            digest, members[0].position, members[-1].position
        )
        occurrence = (
            members[-1].position,
            members[0].number,
            members[-1].number,
            members[0].stream,
        )
        seen.note(digest, occurrence)
        if self._texts:
            texts = self._digest_of([e.text for e in members])
            self._text_digests[occurrence] = texts
            if found is not None and self._texts_of(found) != texts:
                members[0].differs = True
        if found is None and self._stretches is not None:
            first = max(start, lane.marked[kind] + 1)
            for entry in lane.held[first - base : end + 1 - base]:
                entry.new = True
            lane.marked[kind] = max(lane.marked[kind], end)
        return found

    def _digest_of(self, values: Sequence[int]) -> bytes:
        digest = self._stretch_digest.copy()
        for value in values:
            digest.update((value & MASK128).to_bytes(16, "little"))
        return digest.digest()

    def _texts_of(self, occurrence: Occurrence) -> bytes | None:
        if occurrence[0] != LIBRARY_END:
            return self._text_digests.get(occurrence)
        region = self._region_texts
        return self._digest_of(
            region[len(region) + occurrence[1] : len(region) + occurrence[2] + 1]
        )

    def _release(self, lane: _SizedLane, until: int) -> None:
        """Hand on the lane's records before ``until`` (decided, their new flags final)
        and drop what no stretch looks at any more."""
        until = min(until, lane.n_next)
        held, base = lane.held, lane.base
        while lane.released < until:
            self._decide(lane, held[lane.released - base])
            lane.released += 1
        drop = min(lane.m_start, lane.released) - base
        if drop > 4096:
            del held[:drop]
            del lane.sums[:drop]
            lane.base += drop

    def _drain(self, lane: _Lane) -> None:
        """The stream ends: its records left are decided (no N stretch starts there)."""
        assert isinstance(lane, _SizedLane)
        base = lane.base
        for s in range(lane.n_next, lane.count()):
            entry = lane.held[s - base]
            entry.skip = entry.skip or lane.cover >= s
        lane.n_next = lane.m_start = lane.count()
        self._release(lane, lane.count())
