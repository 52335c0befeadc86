"""Duplicate runs -> sequences: identification and the bounded, LRU sequences table."""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import SEED, Engine
from seqdedup.base.hashes import python_hash128
from seqdedup.engine.choice import compiled
from seqdedup.engine.occurrences import (
    KeyHistory,
    OccurrenceIndex,
    longest_match,
    open_run_start,
    stream_end,
)
from seqdedup.engine.pieces import Piece, SequenceTable, unpack_pieces
from seqdedup.engine.runs import runs_of

if TYPE_CHECKING:
    from seqdedup._kernel import RunsTaken
    from seqdedup.base.hashes import Hashes, Words
    from seqdedup.config.groups import RuleOptions
    from seqdedup.engine.matcher import Matcher


class RunHeads:
    """The first record of each duplicate run, kept until the pieces that start there
    have closed (``--top`` shows it). Fed per batch: the runs of skipped records with
    their first record; a run that goes on from the last batch keeps its head."""

    def __init__(self) -> None:
        self._heads: dict[int, bytes] = {}
        self._open = -1  # the start of the run reaching the end of the last batch

    def add(self, base: int, size: int, runs: Sequence[tuple[int, int, bytes]]) -> None:
        for start, _, record in runs:
            if not (start == base and self._open >= 0):
                self._heads[start] = record
        self._open = open_run_start(runs, base, size, self._open)

    def get(self, start: int) -> bytes | None:
        return self._heads.get(start)

    def trim(self) -> None:
        """After the batch's pieces: only the open run's head can still be asked for."""
        open_head = self._heads.get(self._open)
        self._heads = {} if open_head is None else {self._open: open_head}


class Attribution(Protocol):
    """What every attributor offers the run: this module's two (Python, kernel),
    the kernel's on a thread (``attribution_thread``), a count of the decisions
    (:class:`DecisionCount`) and the stream path's (``streamby.decider``)."""

    @property
    def decided(self) -> int: ...
    @property
    def open_piece(self) -> bool: ...
    @property
    def open_source(self) -> int | None: ...
    @property
    def identified(self) -> int: ...
    def record_number(self, tracked: int) -> int: ...
    def set_library_keys(self, region: array[int]) -> None: ...
    def append_keys(self, hashes: bytes) -> None: ...
    def add(self, keep: Sequence[bool], numbers: Sequence[int] | None = None) -> list[Piece]: ...
    def finish(self) -> list[Piece]: ...
    def new_input(self) -> list[Piece]: ...
    def take_packed(self) -> bytes: ...


class ChunkAttribution(Attribution, Protocol):
    """An attributor the kernel's chunk path feeds with whole runs."""

    def add_runs(self, size: int, runs: RunsTaken, numbers: bytes | None = None) -> list[Piece]: ...


class DecisionCount:
    """The attributor's interface for a run in which nothing reads attribution (no
    markers, explanations, ``--top``, library or sequence statistics): it only counts
    the decided records, and closes no piece. Attribution is the costly part of a run
    with many short repeats; this makes such a run as fast as its decisions."""

    open_piece = False
    open_source = None

    @property
    def identified(self) -> int:
        """No sequence is identified."""
        return 0

    def __init__(self) -> None:
        self.decided = 0

    def record_number(self, tracked: int) -> int:  # pragma: no cover - nothing reports
        return tracked + 1

    def set_library_keys(self, region: array[int]) -> None:
        pass

    def append_keys(self, hashes: Hashes) -> None:
        pass

    def add(self, keep: Sequence[bool], numbers: Sequence[int] | None = None) -> list[Piece]:
        self.decided += len(keep)
        return []

    def add_runs(self, size: int, runs: RunsTaken, numbers: bytes | None = None) -> list[Piece]:
        self.decided += size
        return []

    def finish(self) -> list[Piece]:
        return []

    def new_input(self) -> list[Piece]:
        return []

    def take_packed(self) -> bytes:
        return b""  # (nothing packed: only the kernel's attribution packs its pieces)


class Attributor:
    """Cut each duplicate run into pieces, each reported against one earlier occurrence.

    A piece starts at a skipped record r with the candidate sources: every remembered
    earlier occurrence of the window starting at r (when it is a repeat), and the
    earliest remembered occurrence of each other repeat window covering r (aligned to
    r); at most ``max_candidates`` of them, earliest first. The matcher knows the
    earliest (``source``); :class:`OccurrenceIndex` finds the others. All candidates
    are followed while they keep matching; when
    none matches the next record, the piece ends with the earliest of the longest-
    matching candidates and a new piece starts there. A kept record or the end of input
    ends the piece too. Each piece's content is a sequence: its count comes from the
    sequences table.

    Candidates only decide attribution, never what is skipped. Matching compares key
    hashes, in slices (C speed), so a whole run that repeats one earlier occurrence
    costs a few operations, not a Python loop per record.
    """

    def __init__(
        self,
        window_size: int,
        table: SequenceTable,
        source_of: Callable[[int], int | None],
        max_candidates: int | None,
        max_history: int | None,
        fingerprints: Callable[[Words, int], Hashes],
    ) -> None:
        self.window_size = window_size
        self.table = table
        self.source_of = source_of
        self.max_candidates = max_candidates
        self._history = KeyHistory(None if max_history is None else max_history + 2 * window_size)
        self.record_number = self._history.record_number
        self.append_keys = self._history.append
        self.set_library_keys = self._history.set_library
        self._key = self._history.key
        self._decided = 0  # tracked records seen so far
        self._piece_start = -1  # -1: no open piece
        self._candidates: list[int] = []  # sources aligned with _piece_start
        self._piece_end = -1
        self._occurrences = OccurrenceIndex(window_size, max_candidates, max_history, fingerprints)
        # Where each earlier input stream ended: a source is followed only inside its own.
        self._stream_ends = self._occurrences.stream_ends

    @property
    def decided(self) -> int:
        """How many tracked records have been taken so far."""
        return self._decided

    @property
    def open_piece(self) -> bool:
        return self._piece_start >= 0

    @property
    def open_source(self) -> int | None:
        """The open piece's earliest candidate (where it would be reported now)."""
        return self._candidates[0] if self._piece_start >= 0 else None

    @property
    def identified(self) -> int:
        """Distinct sequences identified in this run (evicted ones too)."""
        return self.table.identified

    def add(self, keep: Sequence[bool], numbers: Sequence[int] | None = None) -> list[Piece]:
        """Take the decisions of the next tracked records; return the pieces closed.

        ``numbers`` are their input record numbers, needed when filters let records
        pass through (otherwise tracked record t is record t + 1).
        """
        if numbers is not None:
            self._history.add_numbers(numbers)
        base = self._decided
        runs = [(base + start, base + stop) for start, stop in runs_of(keep, False)]
        return self.add_runs(len(keep), runs)

    def add_runs(self, size: int, runs: Sequence[tuple[int, int]]) -> list[Piece]:
        """Take the next ``size`` tracked records, given as their runs of skipped
        records ``(start, stop)`` (tracked indices, half-open, in order); return the
        pieces closed."""
        base = self._decided
        self._decided += size
        index = self._occurrences
        index.rotate(base + size)
        closed: list[Piece] = []
        if self._piece_start >= 0 and size and not (runs and runs[0][0] == base):
            closed.append(self._close())  # a kept record ends the run left open
        for start, stop in runs:
            if self._piece_start < 0 and stop < base + size:
                # The common case, a run that its window's earliest occurrence covers
                # whole (no candidate can do better): _open, _extend and _close at once.
                source = self.source_of(start)
                assert source is not None, f"skipped record {start} starts no repeat window"
                keys = self._key_slice(start, stop)
                if (
                    not self._stream_ends
                    or source + stop - start <= stream_end(self._stream_ends, source)
                ) and self._key_slice(source, source + stop - start) == keys:
                    identity = python_hash128(keys.tobytes())
                    count = self.table.observe(identity)
                    closed.append(Piece(start, stop - 1, source, count, identity))
                    index.add_run(start, stop, base, self._key_slice)
                    continue
            index.add_run(start, stop, base, self._key_slice)
            if self._piece_start < 0:
                self._open(start, run_start=True)
            self._extend(start, stop, closed)
            if stop < base + size:  # a kept record ends the run
                closed.append(self._close())
        index.end_batch(runs, base, size)
        self._trim()
        return closed

    def finish(self) -> list[Piece]:
        """End of input: close the open piece, if any."""
        return [self._close()] if self._piece_start >= 0 else []

    def new_input(self) -> list[Piece]:
        """The input stream ended (after its last records were added) and another
        begins: close the open piece; no piece or source spans the boundary."""
        closed = self.finish()
        self._stream_ends.append(self._decided)
        self._occurrences.new_input()
        return closed

    def take_packed(self) -> bytes:
        return b""  # (its pieces go on as Pieces)

    # -- internals ------------------------------------------------------------------
    def _key_slice(self, start: int, stop: int) -> array[int]:
        return self._history.slice(start, stop)

    def _open(self, record: int, run_start: bool = False) -> None:
        self._piece_start = record
        self._piece_end = record - 1
        # The first record of a run is covered by one repeat window only, the one
        # starting at it (an earlier one would cover the record before too).
        first = record if run_start else max(record - self.window_size + 1, 0)
        found: set[int] = set()
        for window in range(first, record + 1):
            source = self.source_of(window)
            if source is None:
                continue
            if window == record:  # the window the piece starts with: all its occurrences
                found.update(
                    self._occurrences.find(source, window, self._history.offset, self._key_slice)
                )
            else:  # the others (at a cut inside a run): their earliest, aligned
                found.add(source + record - window)
        if not found:  # cannot happen for a skipped record; keep the invariant loud
            raise AssertionError(f"skipped record {record} is covered by no repeat window")
        candidates = sorted(found)
        if self.max_candidates is not None:
            candidates = candidates[: self.max_candidates]
        self._candidates = candidates

    def _extend(self, start: int, stop: int, closed: list[Piece]) -> int:
        """Extend the open piece over skipped records [start, stop); return where it got."""
        while start < stop:
            best, survivors = longest_match(
                self._candidates,
                start - self._piece_start,
                start,
                stop,
                self._key_slice,
                self._key,
                self._stream_ends,
            )
            if not best and self._piece_end < self._piece_start:
                raise AssertionError(f"no candidate matches skipped record {start}")
            if best:
                self._candidates = survivors
                self._piece_end = start + best - 1
                start += best
            if start == stop:  # the piece may go on with the next records
                return stop
            closed.append(self._close())
            self._open(start)
        return stop

    def _close(self) -> Piece:
        start, end = self._piece_start, self._piece_end
        source = self._candidates[0]
        identity = python_hash128(self._key_slice(start, end + 1).tobytes())
        piece = Piece(start, end, source, self.table.observe(identity), identity)
        self._piece_start = -1
        return piece

    def _trim(self) -> None:
        # An open piece and its sources stay readable.
        readable = [self._piece_start, *(c for c in self._candidates if c >= 0)]
        self._history.trim(self._decided, readable if self._piece_start >= 0 else [])


class KernelAttributor:
    """The kernel's attribution (``_kernel.Attributor``: the definition of
    :class:`Attributor` in C, with the matcher's sources read in place) behind the same
    interface. It hands its pieces over packed, one bytes object per call; they become
    :class:`Piece` objects only when something reads them (``report``), otherwise the
    kernel only counts them, so a run that shows statistics makes no Python object per
    piece."""

    def __init__(
        self,
        kernel: CEngine,
        matcher: Matcher,
        max_candidates: int | None,
        max_history: int | None,
        max_sequences: int | None,
        seed: int,
        report: bool,
        top: bool = False,
        watched: bool = False,
        run_firsts: bool = False,
    ) -> None:
        assert isinstance(matcher, kernel.chunk_matcher)  # (its matcher's sources, in place)
        self._core = kernel.attributor(
            matcher,
            max_candidates=max_candidates,
            max_history=max_history,
            max_sequences=max_sequences,
            seed=seed,
            report=report or watched,
            top=top,
            run_firsts=run_firsts and not watched,
        )
        # --top counted by the kernel: only each sequence's first piece comes out
        self.counts_top = top and not report
        # A report page's picture takes every piece packed (``watched``: held for
        # take_packed()); with --top counted here, only each sequence's first piece
        # goes on as a Piece
        self._watched = watched
        self._packed: list[bytes] = []
        self._known: set[int] = set()  # (then: the sequences whose first piece went on)
        self._limit = max_sequences
        self.append_keys = self._core.append_keys
        self.set_library_keys = self._core.set_library_keys
        self.record_number = self._core.record_number

    @property
    def decided(self) -> int:
        return int(self._core.decided)

    @property
    def open_piece(self) -> bool:
        return bool(self._core.open_piece)

    @property
    def open_source(self) -> int | None:
        source: int | None = self._core.open_source
        return source

    @property
    def identified(self) -> int:
        return int(self._core.identified)

    @property
    def work(self) -> int:
        """Keys compared or hashed so far (tests check that it grows linearly)."""
        return int(self._core.work)

    def add(self, keep: Sequence[bool], numbers: Sequence[int] | None = None) -> list[Piece]:
        return self._pieces(self._core.add(keep, numbers))

    def add_runs(self, size: int, runs: RunsTaken, numbers: bytes | None = None) -> list[Piece]:
        """``runs``: int64 pairs (bytes), or ``(start, stop, ...)`` tuples; ``numbers``:
        the records' input numbers (int64 bytes) when filters make them differ."""
        return self._pieces(self._core.add_runs(size, runs, numbers))

    @property
    def hands_packed(self) -> bool:
        """Whether :meth:`add_runs_packed` serves: every piece goes to the caller."""
        return not self._watched and not self.counts_top

    def add_runs_packed(self, size: int, runs: bytes) -> bytes:
        """:meth:`add_runs`'s pieces as the kernel packs them (six int64 each: start,
        end, source, count, the two lanes of the identity), no Piece made."""
        assert self.hands_packed
        return self._core.add_runs(size, runs, None) or b""

    def take_packed(self) -> bytes:
        """Made ``watched``: every piece closed since the last call, packed (six int64
        each: start, end, source, count, the two lanes of the identity)."""
        packed, self._packed = b"".join(self._packed), []
        return packed

    def _pieces(self, packed: bytes | None) -> list[Piece]:
        """The pieces a call closed, as Pieces: all of them, or when watched with --top
        counted here, each sequence's first only (take_packed() gives them all)."""
        if not self._watched:
            return unpack_pieces(packed)
        if packed:
            self._packed.append(packed)
        if not self.counts_top:
            return unpack_pieces(packed)
        known, firsts = self._known, []
        if self._limit is not None and len(known) > 2 * self._limit:
            known.intersection_update(self.top_counts())  # (what the kernel evicted)
        for start, end, source, count, low, high in struct.iter_unpack("4q2Q", packed or b""):
            identity = low | high << 64
            if identity not in known:
                known.add(identity)
                firsts.append(Piece(start, end, source, count, identity))
        return firsts

    def top_counts(self) -> dict[int, int]:
        """``--top`` counted by the kernel: each sequence its table holds, with the
        pieces counted since its entry was made."""
        return {
            low | high << 64: pieces
            for low, high, pieces in struct.iter_unpack("2Qq", self._core.top_counts())
        }

    def finish(self) -> list[Piece]:
        return self._pieces(self._core.finish())

    def new_input(self) -> list[Piece]:
        return self._pieces(self._core.new_input())


def make_attribution(
    engine: Engine,
    matcher: Matcher,
    rule: RuleOptions,
    report: bool = True,
    top: bool = False,
    watched: bool = False,
    run_firsts: bool = False,
) -> Attributor | KernelAttributor:
    """``engine``'s attribution under the ``rule`` (its window, history and tables'
    bounds): the kernel's (``matcher`` is then its matcher; ``report``: every piece
    handed out, or with ``run_firsts`` only each run's first, ``top``: --top counted in
    it, ``watched``: every piece handed packed to a watcher), else the Python engine's
    (which hands out every piece)."""
    history, sequences, candidates = (
        rule.max_history,
        rule.max_unique_sequences,
        rule.max_candidates,
    )
    kernel = compiled(engine)
    if kernel is not None:
        return KernelAttributor(
            kernel,
            matcher,
            candidates,
            history,
            sequences,
            SEED,
            report,
            top,
            watched,
            run_firsts=run_firsts,
        )
    return Attributor(
        rule.window_size,
        SequenceTable(sequences),
        matcher.source,
        candidates,
        history,
        matcher.fingerprints,
    )
