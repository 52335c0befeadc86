"""The Python engine's attribution index: where each window occurred (bounded, in input
order), the key hashes a source is compared with, and how far a candidate source
matches."""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from seqdedup.base.hashes import hash_ints, hash_words

if TYPE_CHECKING:
    from seqdedup.base.hashes import Hashes, Words


TRIM_SLACK = 65536  # key hashes held past what a limited history needs, before trimming


INDEX_LIMIT = 1 << 19  # windows indexed for attribution (per history, or in all)


LOCKSTEP = 8  # records compared at once while many candidates are narrowed


KeySlice = Callable[[int, int], "array[int]"]  # (start, stop) -> those records' key hashes


def stream_end(stream_ends: Sequence[int], position: int) -> int:
    """Where the stream holding tracked record ``position`` ends (``stream_ends``: the
    ends of the earlier streams, in order); sys.maxsize for the current stream and the
    library region (which its sentinels separate)."""
    if not stream_ends or position < 0 or position >= stream_ends[-1]:
        return sys.maxsize

    return stream_ends[bisect_right(stream_ends, position)]


class OccurrenceIndex:
    """Every remembered occurrence of a window, for attribution's candidates.

    The matcher knows one occurrence of a window, its earliest remembered. Every later
    one is a repeat window, and so lies inside a duplicate run, or overlaps an earlier
    occurrence (periodic content). So the windows of duplicate runs are indexed by
    fingerprint as they are decided (the earliest ``max_candidates`` per content, at
    most INDEX_LIMIT windows, in input order so that nothing depends on how input was
    cut), and from each occurrence its periodic neighbours are checked.
    """

    def __init__(
        self,
        window_size: int,
        max_candidates: int | None,
        max_history: int | None,
        fingerprints: Callable[[Words, int], Hashes],
    ) -> None:
        self.window_size = window_size
        self.max_candidates = max_candidates
        self._history = max_history
        self._fingerprints = fingerprints  # (key hashes, count) -> window fingerprints
        # With a limited history, two generations, the older dropped every history.
        self._occurring: dict[int, list[int]] = {}
        self._occurring_before: dict[int, list[int]] = {}
        self._generation_end = max_history
        self._run_start = -1  # where the skipped run reaching the last batch's end began
        self._indexed = 0  # windows before this start are indexed (or not in a run)
        self._index_size = 0  # windows indexed (in the current generation)
        self._full: dict[int, list[int]] = {}  # complete answers, see find()
        self.stream_ends: list[int] = []  # where each earlier stream ended

    def new_input(self) -> None:
        """No skipped run goes on across a stream boundary."""
        self._run_start = -1

    def end_batch(self, runs: Sequence[tuple[int, int]], base: int, size: int) -> None:
        """Remember where a skipped run that reaches the end of this batch began."""
        self._run_start = open_run_start(runs, base, size, self._run_start)

    def rotate(self, decided: int) -> None:
        """With a limited history, start a new generation of the window index every
        history length; the one before the last is dropped."""
        if self._history is None or self._generation_end is None:
            return
        while decided > self._generation_end:
            self._occurring_before = self._occurring
            self._occurring = {}
            self._generation_end += self._history
            self._index_size = 0

    def add_run(self, start: int, stop: int, base: int, key_slice: KeySlice) -> None:
        """Index by fingerprint the windows lying wholly inside the skipped run
        [start, stop) (which may go on from the last batch): later occurrences of what
        the matcher knows the earliest of."""
        width = self.window_size
        if start == base and self._run_start >= 0:
            start = self._run_start  # the run goes on from the last batch
        first = max(start, self._indexed)
        # Memory: at most INDEX_LIMIT windows, the earliest (per generation). Windows
        # are taken in order, so the index never depends on how input was cut.
        count = min(stop - width + 1 - first, INDEX_LIMIT - self._index_size)
        if count <= 0:
            return
        self._index_size += count
        cap = sys.maxsize if self.max_candidates is None else self.max_candidates
        prints = self._fingerprints(key_slice(first, stop), count)
        occurring = self._occurring
        get = occurring.get
        for window, fingerprint in enumerate(_as_ints(prints), start=first):
            known = get(fingerprint)
            if known is None:
                occurring[fingerprint] = [window]
            elif len(known) < cap:
                known.append(window)
        self._indexed = first + count

    def find(
        self, earliest: int, window: int, readable_from: int, key_slice: KeySlice
    ) -> list[int]:
        """The remembered occurrences of the window at ``earliest`` that end before
        ``window`` starts, earliest first (at most max_candidates): ``earliest``, the
        indexed windows of duplicate runs with its content, and where the content is
        periodic, the occurrences overlapping those."""
        import heapq

        width = self.window_size
        limit = self.max_candidates
        history = self._history
        full = self._full.get(earliest)
        if full is not None and full[-1] + width <= window:
            # Already the earliest ``limit`` (unlimited history): later copies come
            # after all of them, so the answer cannot change any more.
            return full
        pattern = key_slice(earliest, earliest + width)
        fingerprint = _as_ints(self._fingerprints(pattern, 1))[0]
        indexed = self._occurring.get(fingerprint, []) + self._occurring_before.get(fingerprint, [])
        periods = [d for d in range(1, width) if pattern[2 * d :] == pattern[: 2 * (width - d)]]

        # Before the window, readable and remembered. (A fingerprint collision would
        # only add a candidate that matches nothing: following it finds that.)
        lowest = readable_from if history is None else max(readable_from, window - history)
        highest = window - width

        ends = self.stream_ends

        def usable(position: int) -> bool:
            return lowest <= position <= highest and (
                not ends or position + width <= stream_end(ends, position)  # in one stream
            )

        heap = sorted({earliest, *(p for p in indexed if lowest <= p <= highest)})
        if not periods:
            return self._remember(earliest, heap if limit is None else heap[:limit])
        seen = set(heap)
        found: list[int] = []
        # Popped in position order, and a periodic neighbour lies after what it
        # neighbours: the first ``limit`` popped are the earliest occurrences.
        while heap and (limit is None or len(found) < limit):
            position = heapq.heappop(heap)
            found.append(position)
            for period in periods:
                again = position + period
                if (
                    again not in seen
                    and usable(again)
                    and key_slice(again, again + width) == pattern
                ):
                    seen.add(again)
                    heapq.heappush(heap, again)
        return self._remember(earliest, found)

    def _remember(self, earliest: int, found: list[int]) -> list[int]:
        """Keep a complete answer (``limit`` occurrences, unlimited history)."""
        limit = self.max_candidates
        if self._history is None and limit is not None and len(found) >= limit:
            self._full[earliest] = found
        return found


class KeyHistory:
    """The key hashes attribution reads: of the tracked records (with a limited history
    only the recent part), and of the loaded library region (indices -len .. -1); and
    the records' input numbers when filters make them differ from ``tracked + 1``.

    Hashes are held as their 64-bit lanes, two per record (``array("Q")``), so a slice
    of records compares and hashes at C speed."""

    def __init__(self, keep_back: int | None) -> None:
        self.keys = array("Q")
        self.offset = 0  # tracked index of the record whose lanes start keys
        self.library = array("Q")  # key region of loaded sequences: indices [-len, -1]
        self._keep_back = keep_back  # None: keep everything
        self._numbers: array[int] | None = None

    def append(self, hashes: Hashes) -> None:
        """Key hashes of the next tracked records, as they are fed, in any 128-bit form
        (:mod:`seqdedup.engine.choice`)."""
        self.keys += hash_words(hashes)

    def set_library(self, region: Hashes) -> None:
        """The loaded sequences' key hashes, ending at index -1 (before the run)."""
        self.library = hash_words(region)

    def add_numbers(self, numbers: Sequence[int]) -> None:
        if self._numbers is None:
            self._numbers = array("q")
        self._numbers.extend(numbers)

    def record_number(self, tracked: int) -> int:
        """The 1-based input record number of a tracked record (recent or a source)."""
        if self._numbers is None:
            return tracked + 1
        return self._numbers[tracked - self.offset]

    def slice(self, start: int, stop: int) -> array[int]:
        """The lanes of records [start, stop)."""
        if start >= 0:
            return self.keys[2 * (start - self.offset) : 2 * (stop - self.offset)]
        library = self.library
        part = library[len(library) + 2 * start : len(library) + 2 * min(stop, 0)]
        if stop > 0:
            part += self.keys[: 2 * (stop - self.offset)]
        return part

    def key(self, index: int) -> int:
        """The key hash of one record, as a 128-bit int."""
        at = 2 * (index - self.offset) if index >= 0 else len(self.library) + 2 * index
        lanes = self.keys if index >= 0 else self.library
        return lanes[at] | lanes[at + 1] << 64

    def trim(self, decided: int, readable: Iterable[int]) -> None:
        """With a limited history: drop what no later piece can read (``readable``:
        what an open piece still needs)."""
        if self._keep_back is None or len(self.keys) // 2 <= 2 * self._keep_back + TRIM_SLACK:
            return
        oldest = min([decided - self._keep_back, *readable])
        drop = max(0, oldest - self.offset)
        del self.keys[: 2 * drop]
        if self._numbers is not None:
            del self._numbers[:drop]
        self.offset += drop


def longest_match(
    candidates: list[int],
    offset: int,
    start: int,
    stop: int,
    key_slice: KeySlice,
    key: Callable[[int], int],
    ends: Sequence[int],
) -> tuple[int, list[int]]:
    """How far from ``start`` (before ``stop``) the best candidates match, and which
    match that far. Many candidates are narrowed a block of records at a time (those
    matching the whole block beat the rest; if none does, record by record inside it);
    the last few gallop (:func:`match_length`). ``ends``: where each earlier stream
    ended (a candidate is followed only inside its own)."""
    length = 0
    # How many records each candidate has before its stream ends.
    room = (
        {c: stream_end(ends, c) - c for c in candidates}
        if ends
        else dict.fromkeys(candidates, sys.maxsize)
    )
    while len(candidates) > 2 and start + length < stop:
        at = start + length
        step = min(LOCKSTEP, stop - at)
        target = key_slice(at, at + step)
        shift = offset + length
        whole = [
            c
            for c in candidates
            if shift + step <= room[c] and key_slice(c + shift, c + shift + step) == target
        ]
        if whole:
            candidates = whole
            length += step
            continue
        for _ in range(step):  # none matches the whole block: it ends inside
            wanted = key(start + length)
            shift = offset + length
            matching = [c for c in candidates if shift < room[c] and key(c + shift) == wanted]
            if not matching:
                return length, candidates
            candidates = matching
            length += 1
    if start + length == stop:
        return length, candidates
    at = start + length
    shift = offset + length
    lengths = {
        c: match_length(key_slice, c + shift, at, min(stop, at + room[c] - shift))
        for c in candidates
    }
    best = max(lengths.values())
    return length + best, [c for c in candidates if lengths[c] == best]


def match_length(key_slice: KeySlice, source: int, start: int, stop: int) -> int:
    """How many records from ``start`` (before ``stop``) equal those from ``source``.

    Galloping: blocks of doubling size compared as slices (C speed), then a binary
    search inside the first block that differs. The cost follows the length of the
    match, not of the run: a long run cut into many pieces stays linear.
    """
    length, block, total = 0, 16, stop - start
    while length < total:
        size = min(block, total - length)
        at, where = source + length, start + length
        if key_slice(at, at + size) != key_slice(where, where + size):
            low, high = 0, size - 1  # the first difference lies in [low, high]
            while low < high:
                middle = (low + high) // 2
                if key_slice(at, at + middle + 1) == key_slice(where, where + middle + 1):
                    low = middle + 1
                else:
                    high = middle
            return length + low
        length += size
        block *= 2
    return length


def _as_ints(values: Hashes) -> Sequence[int]:
    """Fingerprints in any engine's form, as 128-bit ints."""
    return values if isinstance(values, list) else hash_ints(values)


def open_run_start(
    runs: Sequence[tuple[int, int]] | Sequence[tuple[int, int, object]],
    base: int,
    size: int,
    previous: int,
) -> int:
    """Where the skipped run reaching the end of the batch [base, base + size) began
    (``previous`` when it goes on from the batch before), or -1 when none does. An
    empty batch (the chunk path's end of input when all was decided) changes nothing."""
    if size == 0:
        return previous
    if not runs or runs[-1][1] != base + size:
        return -1
    last = runs[-1][0]
    return previous if last == base and previous >= 0 else last
