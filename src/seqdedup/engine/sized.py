"""The rule with a minimum size (``--min-bytes``, ``--min-tokens``, ``-w auto``).

A tracked record is skipped when it lies inside a stretch of consecutive records of one
stream that holds at least W records *and* at least B units of size (a record's size:
its key's bytes, or its key's estimated tokens, plus one for its delimiter) and that
equals a stretch which ended before it started and is still remembered (its start at
most ``max_history`` records before). A stretch of ``CAP`` records (or W, if more) is
large enough whatever its size, so that a stretch to compare is never longer. With
B = 0 this is the plain window rule.

Why it costs two lookups per record (docs/design.md, "A minimum size"): call M(j) the
shortest stretch ending at record j that is large enough, N(s) the shortest starting
at s. Record j lies inside a repeated large-enough stretch S exactly when M(j) repeats
or some N(s) with s <= j <= end(N(s)) does: if N(s) (s the start of S) ends before j,
[s, j] is large enough, so M(j) lies inside S and repeats with it; otherwise N(s) holds
j. Sizes come from keys, so an earlier copy of M(j) is the shortest large-enough stretch
ending at its own end (and likewise for N): one table of each kind, keyed by the
stretch's fingerprint (a polynomial in the key hashes, from prefix sums) and length,
and every candidate confirmed by its key hashes.

:class:`SizeDecider` is the Python twin of the kernel's ``SizeDecider``;
:class:`SizedMatcher` puts either in the run's matcher place, beside a plain W-window
matcher that only names the sources attribution follows (every record the sized rule
skips is skipped by the W rule too, inside a W window that repeats).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Protocol

from seqdedup.base.hashes import hash_bytes

if TYPE_CHECKING:
    from array import array
    from collections.abc import Callable, Iterator, Sequence

    from seqdedup._kernel import Matcher as ChunkMatcher
    from seqdedup.base.hashes import Hashes, Words


class Inner(Protocol):
    """What the sized matcher uses of the plain window matcher beside it (any engine's:
    ``matcher.Matcher`` is one)."""

    @property
    def window_size(self) -> int: ...
    @property
    def max_history(self) -> int | None: ...
    def push(self, hashes: Words, /) -> list[bool]: ...
    def finish(self) -> list[bool]: ...
    def new_input(self) -> None: ...
    def source(self, window: int, /) -> int | None: ...
    def fingerprints(self, hashes: Words, count: int, /) -> Hashes: ...
    def add_library_windows(
        self, fingerprints: array[int], starts: array[int], region: array[int] | None = None, /
    ) -> None: ...


class SizedKeys(Protocol):
    """What the sized matcher's hasher asks of the run's keys (``keys.KeyMaker``)."""

    def hashes_and_sizes(self, records: Sequence[bytes], unit: str) -> tuple[bytes, array[int]]: ...


CAP = 4096  # a stretch of this many records is large enough whatever its size
MODULUS = (1 << 61) - 1  # the fingerprints' prime
AUTO_MIN_BYTES = 64  # -w auto: W = 1 and this --min-bytes (docs/design.md: A minimum size)


def polynomial_base(seed: int) -> int:
    """The secret base of the stretch fingerprints, drawn from the run's seed."""
    from random import Random  # (only runs with a minimum size pay for the import)

    return Random(seed ^ 0x5EED_517E).randrange(1 << 32, MODULUS)


class _Entry:
    """The occurrences a table remembers under one key: one position per distinct
    content (the earliest with unlimited history, the latest admitted with a limit)."""

    __slots__ = ("positions",)

    def __init__(self, position: int) -> None:
        self.positions = [position]


class HeldRecords:
    """The records a decider still compares: their key hashes, and prefix sums of their
    sizes and of the fingerprint polynomial, from record ``_offset`` on; a loaded
    library's key hashes as records -len..-1."""

    def __init__(
        self, window: int, min_size: int, seed: int, cap: int, force_collisions: bool = False
    ) -> None:
        if window < 1 or min_size < 0 or cap < 1:
            raise ValueError("window >= 1, min_size >= 0 and cap >= 1")
        self.window = window
        self.min_size = min_size
        self.cap = max(window, cap)
        self.base = polynomial_base(seed)
        self._powers = [1]
        self._offset = 0  # global index of the first record held
        self._keys = bytearray()  # 16 bytes per record held
        self._size_sums = [0]
        self._poly = [0]
        self._region = b""
        self._total = 0  # records pushed
        self._shared = force_collisions  # (tests) every fingerprint 0
        # What a saved library needs (track_new): per record from _fresh_from on, whether
        # a first-seen M or N stretch holds it; the last record each kind flagged
        self._fresh: bytearray | None = None
        self._fresh_from = 0
        self._marked = [-1, -1]

    def power(self, n: int) -> int:
        powers = self._powers
        while len(powers) <= n:
            powers.append(powers[-1] * self.base % MODULUS)
        return powers[n]

    def _large(self, start: int, end: int) -> bool:
        n = end - start + 1
        if n < self.window:
            return False
        if n >= self.cap:
            return True
        at = self._offset
        return self._size_sums[end + 1 - at] - self._size_sums[start - at] >= self.min_size

    def _key(self, start: int, end: int) -> int:
        at, n = self._offset, end - start + 1
        return self.stretch_key(
            self._poly[end + 1 - at] - self._poly[start - at] * self.power(n), n
        )

    def stretch_key(self, polynomial: int, n: int) -> int:
        """The table key of a stretch of ``n`` records: its fingerprint and length."""
        return (0 if self._shared else polynomial % MODULUS) * (self.cap + 1) + n

    def _content(self, start: int, n: int) -> bytes | bytearray:
        # (a slice of the held keys, not a bytes copy of it: compared, never kept)
        if start < 0:
            at = len(self._region) + 16 * start
            return self._region[at : at + 16 * n]
        at = 16 * (start - self._offset)
        return self._keys[at : at + 16 * n]

    def _index_of(self, positions: list[int], start: int, n: int) -> int:
        """Which of ``positions`` starts a stretch equal to the one at ``start`` (-1:
        none)."""
        wanted, content = self._content(start, n), self._content
        return next((k for k, at in enumerate(positions) if content(at, n) == wanted), -1)

    def _find(self, entry: _Entry | None, start: int, n: int) -> int | None:
        """Where ``entry``'s occurrence equal to the stretch at ``start`` starts."""
        if entry is None:
            return None
        k = self._index_of(entry.positions, start, n)
        return None if k < 0 else entry.positions[k]

    def _append(self, key_hash: bytes, size: int) -> None:
        if size < 0:
            raise ValueError("sizes are not negative")
        self._keys += key_hash
        if self._fresh is not None:
            self._fresh.append(0)
        self._size_sums.append(self._size_sums[-1] + size + 1)  # (and its delimiter)
        x = int.from_bytes(key_hash[:8], "little") % MODULUS
        self._poly.append((self._poly[-1] * self.base + x) % MODULUS)
        self._total += 1

    def _mark_new(self, kind: int, start: int, end: int) -> None:
        """Flag [start, end], a first-seen stretch of ``kind``. Both ends only grow
        within a kind, so what its last stretch flagged need not be flagged again."""
        fresh = self._fresh
        if fresh is not None:
            at = self._fresh_from
            first = max(start, self._marked[kind] + 1)
            fresh[first - at : end + 1 - at] = b"\x01" * max(end + 1 - first, 0)
            self._marked[kind] = max(self._marked[kind], end)

    def _drop_before(self, position: int) -> None:
        drop = position - self._offset
        if drop < 4096:
            return
        del self._keys[: 16 * drop]
        del self._size_sums[:drop]
        del self._poly[:drop]
        self._offset = position


class SizeDecider(HeldRecords):
    """Feed the key hashes (16 bytes each) and key sizes of tracked records (each weighs
    one more: its delimiter); get keep flags back in order, each once the shortest
    large-enough stretch starting at its record is complete, or a record with a key never
    seen comes (no stretch holding it can repeat), or the stream ends."""

    def __init__(
        self,
        window: int,
        min_size: int,
        max_history: int | None,
        seed: int = 0,
        cap: int = CAP,
        force_collisions: bool = False,
    ) -> None:
        super().__init__(window, min_size, seed, cap, force_collisions)
        self.max_history = max_history
        self._m_start = 0  # start of the last M stretch (never goes back)
        self._n_next = 0  # the next record whose N stretch is not complete
        self._m_repeats: deque[bool] = deque()  # per undecided record: M repeats
        self._cover = -1  # last record a repeating N stretch covers
        self._released = 0  # the next record without a keep flag
        # Stretches by key: where each distinct content starts (the earliest; with a limited
        # history the latest admitted). A content is an M (or N) stretch by its keys alone:
        # with nothing forgotten one table serves.
        self._m_table: dict[int, _Entry] = {}
        self._n_table = self._m_table if max_history is None else {}
        # limited history: stretches not admitted yet (start, end, key), by end
        self._waiting_m: deque[tuple[int, int, int]] = deque()
        self._waiting_n: deque[tuple[int, int, int]] = deque()
        self._swept = 0  # when the tables were last rid of forgotten stretches
        self._seen: dict[bytes, int] = {}  # each key hash met: where last (a library's: -1)

    # -- what other stages read -----------------------------------------------------
    @property
    def decided(self) -> int:
        return self._released

    @property
    def remembered(self) -> int:  # (stretches the tables hold)
        tables = [self._m_table] + ([self._n_table] if self.max_history is not None else [])
        return sum(len(e.positions) for t in tables for e in t.values())

    # -- new material (a saved library) ----------------------------------------------
    def track_new(self) -> None:
        """Flag the records of every stretch seen first (:meth:`take_new`). Call before
        any push."""
        if self._total:
            raise RuntimeError("track_new() comes before any record")
        self._fresh = bytearray()

    def take_new(self) -> bytes:
        """The flags of the records whose flag is final (no stretch met later can reach
        back to them: they lie before the last M stretch's start and are decided), from
        where the last call stopped; 1: inside a first-seen M or N stretch."""
        fresh = self._fresh
        if fresh is None:
            raise RuntimeError("take_new() needs track_new()")
        final = min(self._m_start, self._n_next) - self._fresh_from
        taken = bytes(fresh[:final])
        del fresh[:final]
        self._fresh_from += final
        return taken

    # -- the tables ------------------------------------------------------------------
    def _remember(self, table: dict[int, _Entry], key: int, start: int, n: int) -> None:
        """Note an occurrence: the first of its content (unlimited history), or the
        latest (limited: it replaces the earlier one of the same content)."""
        entry = table.get(key)
        if entry is None:
            table[key] = _Entry(start)
            return
        k = self._index_of(entry.positions, start, n)
        if k < 0:
            entry.positions.append(start)
        elif self.max_history is not None and entry.positions[k] >= 0:
            entry.positions[k] = start

    def _repeats(self, start: int, end: int, as_end: bool) -> bool:
        """Whether the stretch [start, end] repeats (``as_end``: an M stretch, else N)."""
        n, key = end - start + 1, self._key(start, end)
        table = self._m_table if as_end else self._n_table
        if self.max_history is None:
            found = self._find(table.get(key), start, n)
            if found is None:
                self._remember(table, key, start, n)
                return False
            return found + n - 1 < start
        waiting = self._waiting_m if as_end else self._waiting_n
        while waiting and waiting[0][1] < start:  # ended before this one starts
            w_start, _, w_key = waiting.popleft()
            self._remember(table, w_key, w_start, w_key % (self.cap + 1))
        waiting.append((start, end, key))
        found = self._find(table.get(key), start, n)
        return found is not None and (found < 0 or start - found <= self.max_history)

    # -- feeding ---------------------------------------------------------------------
    def push(self, hashes: Hashes, sizes: list[int] | array[int]) -> list[bool]:
        """Add the next tracked records (key hashes, sizes); return the flags decided
        (True: kept)."""
        data = hash_bytes(hashes)
        if len(data) != 16 * len(sizes):
            raise ValueError("one size per key hash")
        keep: list[bool] = []
        seen = self._seen
        for k, size in enumerate(sizes):
            key_hash = data[16 * k : 16 * k + 16]
            self._append(key_hash, size)
            self._step(keep)
            last = seen.get(key_hash, -2)  # (-1: a library's, never forgotten)
            seen[key_hash] = self._total - 1 if last != -1 else -1
            if last == -2:
                self._release(keep, self._total - 1)
        self._sweep()
        return keep

    def _release(self, keep: list[bool], last: int) -> None:
        """Decide the records up to ``last`` still waiting (no later stretch can repeat)."""
        repeats = self._m_repeats
        while self._released <= last:
            keep.append(not (repeats.popleft() or self._cover >= self._released))
            self._released += 1

    def finish(self) -> list[bool]:
        """End of the stream: decide its last records (no N stretch starts there)."""
        keep: list[bool] = []
        self._release(keep, self._total - 1)
        self._n_next = self._m_start = self._total
        return keep

    def new_input(self) -> None:
        """After :meth:`finish`: a new stream; no stretch spans the boundary."""
        if self._n_next != self._total:
            raise RuntimeError("new_input() comes after finish()")

    def _step(self, keep: list[bool]) -> None:
        """The record just added ends its M stretch and may complete N stretches."""
        j = self._total - 1
        m = self._m_start
        repeat = m_large = self._large(m, j)
        if m_large:
            while self._large(m + 1, j):
                m += 1
            self._m_start = m
            repeat = self._repeats(m, j, True)
            if not repeat:
                self._mark_new(0, m, j)
        self._m_repeats.append(repeat)
        repeats = self._m_repeats
        one_table = self.max_history is None
        while self._n_next <= j and self._large(self._n_next, j):
            s = self._n_next
            # N(s) is M(j) itself: with one table, the same answer (and it is noted)
            if repeat if (m_large and s == m and one_table) else self._repeats(s, j, False):
                self._cover = max(self._cover, j)
            else:
                self._mark_new(1, s, j)
            if s >= self._released:  # (else decided already: its key never seen)
                keep.append(not (repeats.popleft() or self._cover >= s))
                self._released = s + 1
            self._n_next = s + 1

    # -- memory ----------------------------------------------------------------------
    def _sweep(self) -> None:
        """With limited history: forget stretches older than it and the key hashes no
        stretch can be compared with any more."""
        history = self.max_history
        if history is None or self._total - self._swept < max(history, 4096):
            return
        self._swept = self._total
        # a later M stretch starts at _m_start or after, an N stretch at _n_next
        oldest_n = self._n_next - history
        for table, oldest in ((self._m_table, self._m_start - history), (self._n_table, oldest_n)):
            for key in list(table):
                entry = table[key]
                entry.positions = [p for p in entry.positions if p < 0 or p >= oldest]
                if not entry.positions:
                    del table[key]
        keep_from = max(min(oldest_n, self._m_start) - self.cap, self._offset)
        self._drop_before(keep_from)
        # (a key met only before keep_from is in no stretch a later one can repeat)
        self._seen = {k: p for k, p in self._seen.items() if p < 0 or p >= keep_from}

    # -- a loaded library ------------------------------------------------------------
    def add_library(self, sequences: list[tuple[bytes, list[int] | array[int]]]) -> None:
        """Make every large-enough stretch of these sequences (key hashes, sizes) seen
        for the whole run, never forgotten. Call before any push."""
        if self._total:
            raise RuntimeError("libraries are added before any record")
        region = b"".join(hashes for hashes, _ in sequences)
        self._region = region
        first = -(len(region) // 16)
        for hashes, sizes in sequences:
            if len(hashes) != 16 * len(sizes):
                raise ValueError("one size per key hash")
            self._seen.update((hashes[k : k + 16], -1) for k in range(0, len(hashes), 16))
            for as_end, key, start, n in library_stretches(self, hashes, sizes):
                self._remember(self._m_table if as_end else self._n_table, key, first + start, n)
            first += len(sizes)


def library_stretches(
    decider: SizeDecider, hashes: bytes, sizes: list[int] | array[int]
) -> Iterator[tuple[bool, int, int, int]]:
    """The large-enough M and N stretches of one library sequence, as (``as_end``, key,
    start, length), positions counted from its first record."""
    poly = [0]
    for k in range(len(sizes)):
        x = int.from_bytes(hashes[16 * k : 16 * k + 8], "little") % MODULUS
        poly.append((poly[-1] * decider.base + x) % MODULUS)
    stretches = sequence_stretches(sizes, decider.window, decider.min_size, decider.cap)
    for as_end, found in ((True, stretches[0]), (False, stretches[1])):
        for s, e in found:
            key = decider.stretch_key(poly[e + 1] - poly[s] * decider.power(e - s + 1), e - s + 1)
            yield as_end, key, s, e - s + 1


def sequence_stretches(
    sizes: Sequence[int], window: int, min_size: int, cap: int
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The M stretches and the N stretches of one sequence of records of these key sizes
    (each weighs one more), as (start, end) inside it; ``cap``: records that make a
    stretch large whatever its size."""
    sums = [0]
    for size in sizes:
        sums.append(sums[-1] + size + 1)
    count = len(sizes)

    def large(s: int, e: int) -> bool:
        n = e - s + 1
        return n >= window and (n >= cap or sums[e + 1] - sums[s] >= min_size)

    ending: list[tuple[int, int]] = []
    m = 0
    for e in range(count):
        if large(m, e):
            while large(m + 1, e):
                m += 1
            ending.append((m, e))
    starting: list[tuple[int, int]] = []
    e = 0
    for s in range(count):
        e = max(e, s)
        while e < count and not large(s, e):
            e += 1
        if e == count:
            break
        starting.append((s, e))
    return ending, starting


class SizedMatcher:
    """The run's matcher under a minimum size: the decider decides; a plain W-window
    matcher (``inner``), fed in step with it, names the sources that attribution
    follows. Its :meth:`hasher` makes the key hashes it is pushed, noting their sizes."""

    def __init__(
        self,
        decider: SizeDecider,
        inner: Inner | None,
        window_size: int,
        max_history: int | None,
        unit: str = "bytes",
        chunks: ChunkMatcher | None = None,
    ) -> None:
        self.decider = decider
        self.inner = inner  # None: nothing reads a source (no attribution)
        # The kernel's chunk matcher the decider is attached to, where raw bytes go
        # (-w auto on the chunk path; records come here): a run feeds one of the two
        self.chunks = chunks
        self.window_size = window_size
        self.max_history = max_history
        self.size_unit = unit
        self._sizes: deque[array[int]] = deque()  # each hashed batch's, until pushed
        # Saving a library: the records of first-seen stretches, flagged as they are
        # released; a record is released once its flag is final (it may come after its
        # decision: a later M stretch reaches back up to CAP - 1 records)
        self.new_material: list[bool] | None = None
        self._saving = False
        self._unreleased: list[bool] = []  # keep flags decided, not released yet
        self._held = bytearray()  # key hashes the inner matcher has not been given
        self._fed = 0  # records given to it

    @property
    def decided(self) -> int:
        return self.decider.decided - len(self._unreleased)

    @property
    def remembered_windows(self) -> int:
        return self.decider.remembered

    @property
    def settled(self) -> int:
        return self.decided  # nothing is certain before it is decided

    @property
    def cover(self) -> int:
        return self.decided - 1

    def hasher(self, keys: SizedKeys) -> Callable[[Sequence[bytes]], bytes]:
        """``keys.hashes`` for this matcher: each batch's sizes are noted for
        :meth:`push` as its records are hashed (their keys made once)."""
        unit = self.size_unit

        def hashes(records: Sequence[bytes]) -> bytes:
            hashed, sizes = keys.hashes_and_sizes(records, unit)
            self._sizes.append(sizes)
            return hashed

        return hashes

    def push(self, hashes: Hashes, /) -> list[bool]:
        """The next records' key hashes, hashed by :meth:`hasher` (its sizes)."""
        data = hash_bytes(hashes)
        if self.new_material is not None and not self._saving:
            self.decider.track_new()
            self._saving = True
        keep = self._released(self.decider.push(data, self._sizes.popleft()))
        if self.inner is not None:
            self._held += data
            # (up to what is released: a matcher answers for its last push's windows)
            self._feed_inner(self.decided + self.window_size - 1)
        return keep

    def finish(self) -> list[bool]:
        keep = self._released(self.decider.finish())
        self._feed_inner(self._fed + len(self._held) // 16)
        if self.inner is not None:
            self.inner.finish()
        return keep

    def _released(self, keep: list[bool]) -> list[bool]:
        """The keep flags whose new-material flags are final (all, when not saving)."""
        if not self._saving:
            return keep
        fresh = self.decider.take_new()
        assert self.new_material is not None
        self.new_material += map(bool, fresh)
        held = self._unreleased
        held += keep
        released = held[: len(fresh)]
        del held[: len(fresh)]
        return released

    def new_input(self) -> None:
        self.decider.new_input()
        if self.inner is not None:
            self.inner.new_input()
        if self.chunks is not None:
            self.chunks.new_input()

    def source(self, window: int, /) -> int | None:
        return None if self.inner is None else self.inner.source(window)

    def fingerprints(self, hashes: Words, count: int, /) -> Hashes:
        if self.inner is None:
            raise RuntimeError("no attribution runs beside this matcher")
        return self.inner.fingerprints(hashes, count)

    def add_library_windows(
        self, fingerprints: array[int], starts: array[int], region: array[int] | None = None, /
    ) -> None:
        if self.inner is None:
            raise RuntimeError("no attribution runs beside this matcher")
        self.inner.add_library_windows(fingerprints, starts, region)

    def add_library_stretches(
        self, region: array[int], firsts: array[int], lengths: array[int], sizes: array[int]
    ) -> Inner | None:
        """Make every large-enough stretch of the loaded sequences seen (the library's
        key ``region`` with each sequence's place in it, and each record's key size);
        return the matcher beside it, which takes the library's windows as usual."""
        data = hash_bytes(region)
        self.decider.add_library(
            [
                (data[16 * f : 16 * (f + n)], sizes[f : f + n])
                for f, n in zip(firsts, lengths, strict=True)
            ]
        )
        return self.inner

    def _feed_inner(self, until: int) -> None:
        """Give the inner matcher the records up to ``until``, so that it has decided
        (and kept the sources of) the windows of the records decided so far."""
        count = min(until - self._fed, len(self._held) // 16)
        if count > 0 and self.inner is not None:
            self.inner.push(bytes(self._held[: 16 * count]))
            del self._held[: 16 * count]
            self._fed += count
