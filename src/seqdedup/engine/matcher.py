"""The exact window engine (docs/engine.md): the only hot loop.

Window j (the W tracked records starting at tracked record j) is a *repeat* when an
equal window i ended before j started (i + W <= j) and i is still remembered
(j - i <= max_history), or when it occurs in a loaded library sequence. A record is
skipped when it lies inside at least one repeat.

How it is computed:

* Each window gets a fingerprint that only names a candidate: one lane per lane of the
  records' 128-bit key hashes h (BLAKE2b keyed with the run's seed),
  sum(low61(h[j+k].lane) * R[lane][k]) mod p, p = 2**61 - 1, R[lane][k] the powers of a
  secret base per lane drawn from the seed (for W = 1, the key hash itself). A window
  repeats a candidate only when their W key hashes are equal (compared one record per
  window along a run of repeats), so a shared fingerprint never skips a record: a
  wrong skip needs two different keys with equal 128-bit keyed hashes.
* Unlimited history: the earliest occurrence of a window is the best candidate, so one
  first-start lookup per window decides (window j repeats iff its fingerprint first
  started at or before j - W), a batch at a time: a dict for small inputs, the numpy
  table of :mod:`seqdedup.engine.fptable` from the first large batch on.
* Limited history: one window at a time, as the rule is stated: admit window j - W,
  then look up window j's latest admitted start (repeat iff within the history). The
  table has two generations, rotated every history-length of windows, so what is
  older than the history is dropped and memory stays bounded on endless streams.
* Each recent repeat window's source start is kept for attribution (``source()``):
  the earliest occurrence, or the earliest still remembered.

Large batches use numpy for fingerprints (W up to 64) and the first-start table; small
ones (a live stream, a one-line input) use the pure-Python twins, which give identical
results and spare the numpy import. Nothing here prints or reads.

This class is the pure-Python engine. The compiled kernel's ``Matcher`` (see
``csrc/``) computes exactly the same rule with the same interface;
:func:`make_matcher` picks one.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import TYPE_CHECKING, Any, Protocol, cast

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import SEED, Engine, numpy_available
from seqdedup.base.hashes import MASK64, hash_words
from seqdedup.engine.choice import compiled
from seqdedup.engine.fingerprints import (
    NUMPY_MAX_WIDTH,
    coefficients,
    fingerprints_np,
    fingerprints_py,
)
from seqdedup.engine.histories import (
    NUMPY_MIN_WINDOWS,
    LimitedHistory,
    UnlimitedHistory,
    _as_list,
    _fingerprint_list,
)

if TYPE_CHECKING:
    from seqdedup._kernel import Matcher as ChunkMatcher
    from seqdedup.base.hashes import Hashes, Starts, Words
    from seqdedup.config.groups import KeyOptions, RuleOptions


MASK63 = (1 << 63) - 1  # (the kernel's decider takes a 64-bit signed seed)
SHARED = 1 | 1 << 64  # force_collisions (tests): every fingerprint of W >= 2 is this one


class Matcher(Protocol):
    """What the other stages use of a matcher, whichever engine provides it."""

    new_material: list[bool] | None

    @property
    def window_size(self) -> int: ...
    @property
    def max_history(self) -> int | None: ...
    @property
    def decided(self) -> int: ...
    @property
    def remembered_windows(self) -> int: ...
    def push(self, hashes: Words, /) -> list[bool]: ...
    @property
    def settled(self) -> int: ...
    @property
    def cover(self) -> int: ...
    def finish(self) -> list[bool]: ...
    def new_input(self) -> None: ...
    def source(self, window: int, /) -> int | None: ...
    def fingerprints(self, hashes: Words, count: int, /) -> Hashes: ...
    def add_library_windows(
        self, fingerprints: array[int], starts: array[int], region: array[int] | None = None, /
    ) -> None: ...


class LibraryWindows:
    """Where a stream run's loaded library windows wait for its decider: what
    ``load_libraries`` needs of a matcher, keeping the windows it is given."""

    def __init__(self, matcher: Matcher) -> None:
        self.window_size = matcher.window_size
        self.fingerprints = matcher.fingerprints  # (the same polynomial per stream)
        self.fps: array[int] | None = None
        self.starts: array[int] | None = None
        self.region: array[int] | None = None
        # A minimum size: the library's sequences (where each lies in the region) and
        # each region record's key size, for the stream decider's stretches
        self.size_unit: str | None = getattr(matcher, "size_unit", None)
        self.sequences: tuple[array[int], array[int], array[int]] | None = None

    def add_library_windows(
        self, fps: array[int], starts: array[int], region: array[int] | None = None
    ) -> None:
        self.fps, self.starts, self.region = fps, starts, region

    def add_library_stretches(
        self, region: array[int], firsts: array[int], lengths: array[int], sizes: array[int]
    ) -> None:
        self.region, self.sequences = region, (firsts, lengths, sizes)


# What a library's windows are given to: the run's matcher, or (--stream-by) a holder
WindowTarget = Matcher | LibraryWindows


def make_matcher(
    window_size: int,
    max_history: int | None,
    engine: Engine,
    min_size: tuple[int, str, bool] = (0, "bytes", False),
    **chunk_options: Any,
) -> Matcher:
    """``engine``'s matcher: the kernel's (``chunk_options``: delimiter, skip_chars,
    byte_mode, inverse, seed, for its chunk path) or the Python one; with a ``min_size``
    (B, unit, whether attribution reads sources) above 0, the sized matcher of that
    engine (around the plain one where sources are read)."""
    seed = chunk_options.get("seed", 0)
    kernel = compiled(engine)
    if kernel is None:
        matcher: Matcher = WindowMatcher(
            window_size,
            max_history,
            chunk_options.get("early", False),
            seed,
            chunk_options.get("force_collisions", False),
        )
    else:
        matcher = kernel.chunk_matcher(window_size, max_history, **chunk_options)
    if not min_size[0]:
        return matcher
    from seqdedup.engine.sized import SizeDecider, SizedMatcher

    size, unit, sources = min_size
    # (the kernel's decider is the Python one's twin: the same calls, the same answers)
    deciders = SizeDecider if kernel is None else cast("type[SizeDecider]", kernel.size_decider)
    decider = deciders(window_size, size, max_history, seed & MASK63)
    return SizedMatcher(decider, matcher if sources else None, window_size, max_history, unit)


class SettledKeys:
    """Which pending records are certain before their window completes.

    A pending record can only be skipped by a window that is not complete either, and
    such a window holds every record from it to the last one read: if one of those has
    a key never seen before, the window cannot equal an earlier one, and the record is
    kept unless a decided repeat already covers it. So the keys seen are noted (the low
    64 bits of each hash: a shared value only makes a new key look seen, which delays a
    record and changes no decision), with a limited history in two generations each a
    history and a window long (what a remembered window can hold is in them; memory
    stays bounded), with an unlimited one up to KEYS_MAX keys (then nothing settles
    early). The kernel does the same in ``csrc/settled.c``.
    """

    KEYS_MAX = 786_432

    def __init__(self, max_history: int | None, window_size: int) -> None:
        self._span = None if max_history is None else max_history + window_size
        self._current: set[int] = set()
        self._older: set[int] = set()
        self._rotated = 0  # tracked index where the current generation began
        self.last_novel = -1  # tracked index of the last record whose key was new
        self.off = False

    def settled(self, decided: int, read: int) -> int:
        if self.off or self.last_novel < decided:
            return decided
        return min(self.last_novel + 1, read)

    def note(self, hashes: Hashes, first: int) -> None:
        """Note the keys of tracked records first, first + 1, ..."""
        if self.off:
            return
        if isinstance(hashes, list):
            lows = [value & MASK64 for value in hashes]
        else:  # (without numpy: the core install has none)
            lows = hash_words(hashes)[0::2].tolist()
        at = 0
        while at < len(lows):
            stop = len(lows)
            if self._span is not None:
                if first + at - self._rotated >= self._span:
                    self._older, self._current = self._current, set()
                    self._rotated = first + at
                stop = min(stop, self._rotated + self._span - first)  # the next rotation
            self._note_part(lows[at:stop], first + at)
            at = stop
        if self._span is None and len(self._current) > self.KEYS_MAX:
            self.off = True
            self._current = set()

    def _note_part(self, lows: list[int], first: int) -> None:
        # Each key's first position in the part (later positions overwrite earlier ones
        # in a dict built from the reversed part).
        firsts = dict(zip(reversed(lows), range(len(lows) - 1, -1, -1), strict=True))
        current, older = self._current, self._older
        new = [at for key, at in firsts.items() if key not in current and key not in older]
        if new:
            self.last_novel = first + max(new)
        current.update(lows)


class KeyLog:
    """The key hashes a confirmation compares: every tracked record's from ``base`` on
    (with a limited history, the oldest go once nothing can be compared with them), and
    a loaded library's key region at negative positions (its last record at -1)."""

    def __init__(self) -> None:
        self.words = array("Q")  # two per record, lo first
        self.base = 0  # position of the first record held
        self.region = array("Q")

    def append(self, hashes: Hashes) -> None:
        self.words.extend(hash_words(hashes))

    def forget_before(self, position: int) -> None:
        drop = position - self.base
        if drop >= 4096 and 2 * drop >= len(self.words) // 2:
            del self.words[: 2 * drop]
            self.base = position

    def keys(self, position: int, count: int) -> array[int] | None:
        """The words of ``count`` records from ``position``, or None where they are not
        all held on one side (which makes the comparison fail)."""
        if position < 0:
            at = len(self.region) + 2 * position
            stop = at + 2 * count
            return self.region[at:stop] if at >= 0 and stop <= len(self.region) else None
        at = 2 * (position - self.base)
        stop = at + 2 * count
        return self.words[at:stop] if at >= 0 and stop <= len(self.words) else None

    def same(self, first: int, second: int, count: int) -> bool:
        mine = self.keys(first, count)
        return mine is not None and mine == self.keys(second, count)


class Confirmation:
    """A fingerprint names a candidate; this says whether the window repeats it, by
    its key hashes (kernel: matcher.c, confirm). Along a run of repeats only the newest
    record is compared; when a candidate differs (a fingerprint shared by two windows),
    the window after the one that the last window repeated still may count."""

    def __init__(self, window_size: int, max_history: int | None) -> None:
        self.window_size = window_size
        self.max_history = max_history
        self.log = KeyLog()
        # the last window confirmed a repeat, its source, and where the source's stream
        # ends (a window that follows it must not run into the next stream)
        self._witness = (-1, -1, 0)
        self._stream_starts: list[int] = []  # where each stream after the first begins

    def note(self, hashes: Hashes, decided: int) -> None:
        """The key hashes of the next tracked records (``decided`` records decided)."""
        if self.window_size > 1:
            if self.max_history is not None:
                self.log.forget_before(decided - 1 - self.max_history)
            self.log.append(hashes)

    def new_input(self, position: int) -> None:
        self._stream_starts.append(position)

    def _stream_limit(self, position: int) -> int:
        """Where the stream holding ``position`` ends (the library's region: at 0)."""
        if position < 0:
            return 0
        at = bisect_right(self._stream_starts, position)
        return self._stream_starts[at] if at < len(self._stream_starts) else 1 << 62

    def confirm(self, start: int, firsts: list[int]) -> list[int]:
        """Per window from ``start``: the start of the window it repeats (its candidate
        in ``firsts``, checked), or its own start."""
        width = self.window_size
        if width == 1:  # the fingerprint is the key hash
            return firsts
        same = self.log.same
        witness_window, witness_source, limit = self._witness
        for offset, first in enumerate(firsts):
            j = start + offset
            if j - first >= width:
                if witness_window == j - 1 and witness_source == first - 1:
                    if same(first + width - 1, j + width - 1, 1):
                        witness_window, witness_source = j, first
                        continue
                elif same(first, j, width):
                    witness_window, witness_source = j, first
                    limit = self._stream_limit(first)
                    continue
            if (
                witness_window == j - 1
                and witness_source + width < limit
                and same(witness_source + width, j + width - 1, 1)
            ):
                witness_window, witness_source = j, witness_source + 1
                firsts[offset] = witness_source
                continue
            firsts[offset] = j
        self._witness = (witness_window, witness_source, limit)
        return firsts


class WindowMatcher:
    """Feed key hashes of tracked records in order; get keep/skip decisions back.

    ``push`` returns one flag per newly decidable record (True = keep), oldest first; a
    record is decidable once the window starting at it is complete, i.e. W-1 records
    later. ``finish`` decides the last W-1 records at end of input. What the history
    remembers is :class:`UnlimitedHistory`'s or :class:`LimitedHistory`'s business;
    both answer, per window, where the occurrence it may repeat starts (a candidate,
    found by fingerprint), and :meth:`_confirm` compares their key hashes.
    """

    def __init__(
        self,
        window_size: int,
        max_history: int | None,
        early: bool = False,
        seed: int = 0,
        force_collisions: bool = False,
    ) -> None:
        self.window_size = window_size
        self.max_history = max_history
        self._seed = seed
        self._force_collisions = force_collisions and window_size > 1
        self._coeffs: list[int] | None = None  # made at the first complete window
        self._history: UnlimitedHistory | LimitedHistory = (
            UnlimitedHistory(window_size)
            if max_history is None
            else LimitedHistory(window_size, max_history)
        )
        self._confirmation = Confirmation(window_size, max_history)
        self._tail: list[int] = []  # hashes of the records whose window is not complete
        self._next = 0  # index of the next window to decide (= next undecided record)
        self._skip_until = -1  # last record covered by a repeat so far
        # Every recent repeat window's start maps to the start of the earlier window it
        # repeats (negative: a library window): attribution reads it through source().
        self.repeat_sources: dict[int, int] | None = {}
        # When a list, one flag per decided record goes there: whether a window seen for
        # the first time (not a repeat) covers it. Those records are the new material a
        # library saves.
        self.new_material: list[bool] | None = None
        self._new_until = -1  # last record covered by a non-repeat window so far
        self._keys = SettledKeys(max_history, window_size)
        self._keys.off = not early  # nothing settles early unless asked

    # -- state that other stages read -------------------------------------------------
    @property
    def decided(self) -> int:
        """How many tracked records have been decided."""
        return self._next

    @property
    def remembered_windows(self) -> int:
        """How many window fingerprints the history currently holds."""
        return len(self._history)

    def fingerprints(self, hashes: Hashes, count: int) -> Hashes:
        """Fingerprints of the first ``count`` windows of key hashes in any form, as a
        list of 128-bit ints."""
        if self._force_collisions:
            return [SHARED] * max(count, 0)
        if self._coeffs is None:  # not before: memory follows the records held, not W
            self._coeffs = coefficients(self.window_size, self._seed)
        width = self.window_size
        if count >= NUMPY_MIN_WINDOWS and 1 < width <= NUMPY_MAX_WIDTH and numpy_available():
            return fingerprints_np(hashes, count, self._coeffs)
        return fingerprints_py(hashes, count, self._coeffs)

    def add_library_windows(
        self, fingerprints: Hashes, starts: Starts, region: Hashes | None = None
    ) -> None:
        """Make these windows "already seen" for the whole run, never forgotten.

        ``starts`` are where they start in the library's key ``region`` (whose last
        record is at -1), negative and at most -W - 1, so that every window of the run
        lies at least W after them (and attribution can tell a library source by its
        sign); with W > 1 the region is kept to confirm them. Call before any push.
        """
        listed = _as_list(starts)
        if not listed:
            return
        self._keys.off = True  # library keys are not noted: nothing settles early
        if self.window_size > 1:
            if region is None:
                raise ValueError("library windows need their key region (W > 1)")
            log = self._confirmation.log
            log.region = hash_words(region)
            if min(listed) < -(len(log.region) // 2):
                raise ValueError("library starts must lie in the region")
        if max(listed) > -self.window_size - 1:
            raise ValueError("library starts must be at most -W - 1")
        self._history.add_library(fingerprints, starts)

    # -- the decision ----------------------------------------------------------------
    def source(self, window: int) -> int | None:
        """The start of the earlier window that repeat window ``window`` repeats
        (negative: a library window), or None if it is not a repeat. Answered for the
        windows that cover the records decided by the last push or finish."""
        return None if self.repeat_sources is None else self.repeat_sources.get(window)

    @property
    def settled(self) -> int:
        """The first tracked record not certain yet (see :class:`SettledKeys`)."""
        return self._keys.settled(self._next, self._next + len(self._tail))

    @property
    def cover(self) -> int:
        """The last record a decided repeat covers (-1: none)."""
        return self._skip_until

    def push(self, hashes: Hashes) -> list[bool]:
        """Add the key hashes of the next tracked records (in any 128-bit form);
        return the newly decided flags."""
        width = self.window_size
        self._keys.note(hashes, self._next + len(self._tail))
        self._confirmation.note(hashes, self._next)
        sources = self.repeat_sources
        if sources is not None and len(sources) > 4 * width + 4096:
            # Attribution has read the records decided so far: only windows that can
            # cover the records decided next are still needed.
            oldest = self._next - width + 1
            for window in [w for w in sources if w < oldest]:
                del sources[window]
        pending = self._tail + _fingerprint_list(hashes)
        complete = len(pending) - width + 1
        if complete <= 0:
            self._tail = pending
            return []
        keep = self._decide(self.fingerprints(pending, complete))
        self._tail = pending[complete:]
        return keep

    def finish(self) -> list[bool]:
        """Decide the records left at end of input (no window starts at them)."""
        first = self._next
        count = len(self._tail)
        self._next += count
        self._tail = []
        if self.new_material is not None:
            self.new_material += [first + k <= self._new_until for k in range(count)]
        return [first + k > self._skip_until for k in range(count)]

    def new_input(self) -> None:
        """After :meth:`finish`: what follows is a new stream. Its windows can repeat
        every remembered window of the earlier ones, and none spans the boundary."""
        if self._tail:
            raise RuntimeError("new_input() comes after finish()")
        if isinstance(self._history, LimitedHistory):
            self._history.new_input()
        self._confirmation.new_input(self._next)

    def _decide(self, fps: Hashes) -> list[bool]:
        start = self._next
        history = self._history
        if isinstance(history, LimitedHistory):
            firsts: Any = history.firsts(_fingerprint_list(fps), start)
        else:
            firsts = history.firsts(fps, start)
        keep = self._mark_py(start, self._confirmation.confirm(start, _as_list(firsts)))
        self._next = start + len(fps)
        return keep

    def _mark_py(self, start: int, firsts: list[int]) -> list[bool]:
        width = self.window_size
        cover = self._skip_until
        sources = self.repeat_sources
        keep = []
        for offset, first in enumerate(firsts):
            j = start + offset
            if j - first < width:
                keep.append(j > cover)
                continue
            cover = j + width - 1
            if sources is not None:
                sources[j] = first
            keep.append(False)
        self._skip_until = cover
        if self.new_material is not None:
            self._note_new_material(start, [j - f < width for j, f in enumerate(firsts, start)])
        return keep

    def _note_new_material(self, start: int, fresh: list[bool]) -> None:
        """Flag the records of windows [start, ...) covered by a non-repeat window."""
        assert self.new_material is not None
        width, until = self.window_size, self._new_until
        flags = self.new_material
        for j, is_fresh in enumerate(fresh, start):
            if is_fresh:
                until = j + width - 1
            flags.append(j <= until)
        self._new_until = until


def rule_matcher(
    rule: RuleOptions,
    engine: Engine,
    *,
    sources: bool = False,
    settles_early: bool = False,
    saves: bool = False,
) -> Matcher:
    """The matcher of the ``rule`` (W, a minimum size, the history) on ``engine``, keys
    hashed with the run's secret: what every feature that decides records asks for (a
    run off the chunk path, ``Decisions``, ``--suggest-window``'s trials). ``sources``:
    attribution reads them; ``settles_early``: records certain before their window
    completes are given early; ``saves``: first-seen windows are noted (a library)."""
    size = (rule.min_size, rule.size_unit, sources)
    matcher = make_matcher(
        rule.window_size, rule.max_history, engine, size, early=settles_early, seed=SEED
    )
    if saves:
        matcher.new_material = []
    return matcher


def chunk_matcher(
    rule: RuleOptions,
    keys: KeyOptions,
    kernel: CEngine,
    plan: ChunkPlan,
    normalize: int,
    inverse: bool,
    filtered: bool,
) -> Matcher:
    """The kernel's chunk path (raw bytes in, kept bytes out, no Python object per
    record), for a run its plan feeds so (see :func:`seqdedup.run.plan.plan_run`): the
    ``rule``'s matcher making the ``keys`` itself (``normalize``: its one pass), giving
    out the skipped records where ``inverse``, each chunk's records classified by the
    filters first where ``filtered``. With a minimum size (only where nothing reads a
    source) the kernel's size decider decides, attached to it: the sized matcher of that
    decider is returned, the chunk matcher its ``chunks`` (raw bytes go there, records
    to the decider; a run is fed one or the other)."""
    sized = bool(rule.min_size)
    matcher: ChunkMatcher = kernel.chunk_matcher(
        rule.window_size,
        rule.max_history,
        seed=SEED,
        delimiter=keys.delimiter,
        skip_chars=keys.skip_chars,
        skip_fields=keys.skip_fields,
        byte_mode=keys.byte_mode,
        inverse=inverse,
        run_heads=plan.run_heads,
        normalize=normalize,
        filtered=filtered,
        early=plan.settles_early and not sized,  # (the decider releases what is certain)
    )
    if sized:
        from seqdedup.engine.sized import SizeDecider, SizedMatcher

        decider = kernel.size_decider(
            rule.window_size, rule.min_size, rule.max_history, SEED & MASK63
        )
        matcher.attach_sized(decider)
        return SizedMatcher(
            cast("SizeDecider", decider), None, rule.window_size, rule.max_history, chunks=matcher
        )
    if plan.saves:
        matcher.new_material = []  # (it notes first-seen windows)
    return matcher


class ChunkPlan(Protocol):
    """What the chunk path's matcher reads of the run's plan."""

    @property
    def run_heads(self) -> int: ...
    @property
    def settles_early(self) -> bool: ...
    @property
    def saves(self) -> bool: ...
