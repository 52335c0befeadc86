"""The engine in objects: keys in; one keep flag per record and the closed pieces
out (docs/python-api.md, "Decisions"). What a feature built on the engine
uses instead of records and marker lines: nothing is encoded in record text, nothing
parsed back.

Records are numbered from 0 in the order fed. Each may belong to a stream (any
hashable name; ``None``: all in one); the rule is ``--stream-by``'s, which for one
stream is the plain rule: a window is W consecutive records of one stream, a repeat
when an equal window of any stream ended before it started and is still remembered
(``history``: between the two windows' last records). Flags come back in the order
fed, each as soon as its record and every record before it are decided.

Three twins decide, chosen once at construction behind :class:`_Twin`: the run's
matcher and attribution (one stream, ``pieces=True``: the kernel's where it is built),
the kernel's stream matcher (flags alone) and the Python stream decider (runs).
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Hashable, Sequence
from typing import NamedTuple, Protocol, cast

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import SEED, Engine
from seqdedup.base.errors import whole_number
from seqdedup.base.hashes import hash_ints
from seqdedup.config.groups import DEFAULT_CANDIDATES, MAX_STREAM_WINDOW, RuleOptions
from seqdedup.engine.attribution import make_attribution
from seqdedup.engine.choice import chosen_engine, compiled
from seqdedup.engine.matcher import rule_matcher
from seqdedup.engine.pieces import Piece as TrackedPiece
from seqdedup.engine.stream_decider import LIBRARY_END, Entry, Run, SequenceCounts, StreamDecider
from seqdedup.keys.maker import KeyMaker


class Piece(NamedTuple):
    """A closed piece: a stretch of skipped records and the earlier stretch it repeats.
    By default each duplicate run is one piece (its source: its first window's); with
    ``pieces=True`` the pieces tile the runs, each repeating its source record for
    record. Records ``start`` .. ``end`` of one stream (numbers
    in the order fed; the stream's records between them, other streams' interleaved),
    ``length`` of them; ``source_start`` .. ``source_end``: the earlier occurrence of
    its first window (a run's), or of the whole stretch (a piece's: record for record);
    both -1 for a library's; ``seen``: how many times its sequence has been seen by now
    (the first occurrence counts: the first repeat says 2), and the sequence's identity
    (128 bits; equal for equal sequences of keys in one run)."""

    start: int
    end: int
    length: int
    stream: Hashable
    source_start: int
    source_end: int
    seen: int
    identity: int


Block = Piece  # (its name before the vocabulary was one: kept for code that uses it)


class Decided(NamedTuple):
    """What one call decided: ``keep[k]`` for record ``first + k``, and the pieces
    that closed in it, in the order they closed (a run closes when its stream's next
    record is kept, or the stream ends: its records' flags may have come in earlier
    calls)."""

    first: int
    keep: list[bool]
    pieces: list[Piece]

    @property
    def blocks(self) -> list[Piece]:
        """``pieces``, by its name before the vocabulary was one."""
        return self.pieces


class _Twin(Protocol):
    """One way of deciding: key hashes (and lanes or names) in, flags and pieces out."""

    @property
    def sequences(self) -> int: ...

    def push(
        self, hashes: bytes, streams: Sequence[Hashable] | None
    ) -> tuple[list[bool], list[Piece]]: ...

    def pause(self) -> tuple[list[bool], list[Piece]]: ...

    def finish(self) -> tuple[list[bool], list[Piece]]: ...


class Decisions:
    """The rule over keys (bytes compared as they are), fed in batches.

    ``window`` is W; ``history``: windows remembered (None: all); ``idle``: a stream
    without a record for that many records ends, as at the end of input (None: never);
    ``max_streams``: the least recently active stream ends past that many (None: no
    limit); ``sequences``: distinct sequences counted (None: all); ``candidates``: with
    ``pieces``, the earlier occurrences each piece's source is chosen among, as
    ``--max-candidates`` (10; None: all, which costs time that grows with the square of
    a log of a few distinct lines).

    What ``Decided.pieces`` hold: by default each closed *run* (a stream's maximal
    stretch of skipped records) as one piece, with the source of its first window,
    decided by the Python engine's stream decider. ``pieces=True`` (one stream:
    ``feed()`` takes no streams): the pieces that tile the runs, each a record-for-record
    repeat of one earlier stretch (what ``--annotate`` marks), decided by the run's
    matcher and attribution, the compiled kernel's where it is built. ``closed=False``:
    the flags alone (no pieces), decided by the kernel's stream matcher where it is
    built. (``blocks`` is ``closed``'s name before the vocabulary was one.)

    >>> d = Decisions(2)
    >>> done = d.feed([b"a", b"b", b"c", b"a", b"b"])
    >>> done.keep + d.finish().keep
    [True, True, True, False, False]
    """

    def __init__(
        self,
        window: int = 10,
        history: int | None = None,
        idle: int | None = None,
        max_streams: int | None = None,
        sequences: int | None = None,
        closed: bool = True,
        pieces: bool = False,
        candidates: int | None = DEFAULT_CANDIDATES,
        *,
        blocks: bool | None = None,
    ) -> None:
        closed = closed if blocks is None else blocks
        # (a stream's window is held per stream: the command line's bound with --stream-by)
        whole_number("window (--window-size)", window, 1, MAX_STREAM_WINDOW)
        for name, value in (
            ("history (--max-history)", history),
            ("idle (--stream-idle)", idle),
            ("max_streams (--max-streams)", max_streams),
            ("sequences (--max-unique-sequences)", sequences),
            ("candidates (--max-candidates)", candidates),
        ):
            if value is not None:
                whole_number(name, value, 1)
        if pieces and not closed:
            raise ValueError("pieces=True asks for the pieces closed=False leaves out")
        engine = chosen_engine()
        self._keys = KeyMaker(kernel=engine.kernel, seed=SEED)
        self._pieces = pieces
        self._twin: _Twin
        kernel = compiled(engine)
        if pieces:
            self._twin = _Pieces(engine, window, history, sequences, candidates)
        elif not closed and kernel is not None:
            self._twin = _KernelFlags(kernel, window, history, idle, max_streams)
        else:
            self._twin = _StreamRuns(window, history, idle, max_streams, sequences, closed)
        self._released = 0

    def feed(self, keys: Sequence[bytes], streams: Sequence[Hashable] | None = None) -> Decided:
        """Add records by their keys (and streams, one per key); what is decided now."""
        if streams is not None:
            if self._pieces:
                raise ValueError("pieces are of one stream: feed() takes no streams")
            if len(streams) != len(keys):
                raise ValueError("one stream per key")
        return self._decided(self._twin.push(self._keys.hashes(list(keys)), streams))

    def pause(self) -> Decided:
        """The input paused: every stream's pending records decided as at the end of
        input (no window spans the pause); the streams go on."""
        return self._decided(self._twin.pause())

    def finish(self) -> Decided:
        """End of input: everything still pending."""
        return self._decided(self._twin.finish())

    @property
    def sequences(self) -> int:
        """Distinct sequences of the pieces closed so far (0 where the kernel's stream
        matcher gives the flags alone: it counts none)."""
        return self._twin.sequences

    def _decided(self, result: tuple[list[bool], list[Piece]]) -> Decided:
        keep, pieces = result
        first = self._released
        self._released += len(keep)
        return Decided(first, keep, pieces)


class _Pieces:
    """One stream, by the run's matcher and attribution (the kernel's where built)."""

    def __init__(
        self,
        engine: Engine,
        window: int,
        history: int | None,
        sequences: int | None,
        candidates: int | None,
    ) -> None:
        rule = RuleOptions(window, 0, "bytes", history, sequences, candidates)
        self._matcher = rule_matcher(rule, engine)
        self._attribution = make_attribution(engine, self._matcher, rule)

    @property
    def sequences(self) -> int:
        return self._attribution.identified

    def push(self, hashes: bytes, streams: object) -> tuple[list[bool], list[Piece]]:
        self._attribution.append_keys(hashes)
        keep = self._matcher.push(hashes)
        return keep, _public_pieces(self._attribution.add(keep))

    def pause(self) -> tuple[list[bool], list[Piece]]:
        keep = self._matcher.finish()
        pieces = self._attribution.add(keep) + self._attribution.new_input()
        self._matcher.new_input()
        return keep, _public_pieces(pieces)

    def finish(self) -> tuple[list[bool], list[Piece]]:
        keep = self._matcher.finish()
        return keep, _public_pieces(self._attribution.add(keep) + self._attribution.finish())


def _public_pieces(pieces: list[TrackedPiece]) -> list[Piece]:
    return [
        Piece(
            p.start,
            p.end,
            p.end - p.start + 1,
            None,
            max(p.source_start, -1),
            p.source_end if p.source_start >= 0 else -1,
            p.count,
            p.identity,
        )
        for p in pieces
    ]


class _StreamRuns:
    """Streams, by the Python engine's stream decider: runs with their sources."""

    def __init__(
        self,
        window: int,
        history: int | None,
        idle: int | None,
        max_streams: int | None,
        sequences: int | None,
        closed: bool,
    ) -> None:
        self._closed: list[Run] = []
        self._decider = StreamDecider(
            window,
            history,
            idle,
            max_streams,
            SequenceCounts(sequences),
            True,
            SEED,
            closed=self._closed,
        )
        self._closed_wanted = closed
        self._queue: deque[Entry] = deque()  # fed, not handed out yet, in order
        self._fed = 0

    @property
    def sequences(self) -> int:
        counts = self._decider.sequences
        return 0 if counts is None else counts.identified

    def push(
        self, hashes: bytes, streams: Sequence[Hashable] | None
    ) -> tuple[list[bool], list[Piece]]:
        ints = hash_ints(hashes)
        push, queue, number = self._decider.push, self._queue, self._fed
        # (the decider takes any hashable name: it only hashes and compares them)
        names = cast("Sequence[str]", [None] * len(ints) if streams is None else streams)
        for k, key_hash in enumerate(ints):
            entry = Entry(b"", number + k, names[k])
            queue.append(entry)
            push(names[k], key_hash, entry)
        self._fed += len(ints)
        return self._release()

    def pause(self) -> tuple[list[bool], list[Piece]]:
        self._decider.end_all()
        return self._release()

    finish = pause

    def _release(self) -> tuple[list[bool], list[Piece]]:
        queue, keep = self._queue, []
        while queue and queue[0].decided:
            keep.append(not queue.popleft().skip)
        pieces = []
        for run in self._closed:  # (counted as they closed)
            self._decider.count(run)
            if self._closed_wanted:
                pieces.append(_run_piece(run))
        self._closed.clear()
        return keep, pieces


class _KernelFlags:
    """The same rule decided by the kernel's ``StreamMatcher``: each active stream gets a
    small lane number (an ended stream's lane is used again); flags in input order."""

    @property
    def sequences(self) -> int:
        return 0  # (it counts none)

    def __init__(
        self,
        kernel: CEngine,
        window: int,
        history: int | None,
        idle: int | None,
        max_streams: int | None,
    ) -> None:
        self._matcher = kernel.stream_matcher(
            window, idle, max_streams, count_runs=False, history=history, seed=SEED
        )
        self._lanes: dict[Hashable, int] = {}  # active streams -> lane
        self._names: list[Hashable] = []  # lane -> stream
        self._free: list[int] = []  # lanes of streams that ended

    def push(
        self, hashes: bytes, streams: Sequence[Hashable] | None
    ) -> tuple[list[bool], list[Piece]]:
        if streams is None:  # (one stream: one lane for all, looked up once)
            lanes = array("i", [self._lane(None)]) * (len(hashes) // 16)
        else:
            lanes = array("i", map(self._lane, streams))
        return self._taken(self._matcher.push(hashes, lanes.tobytes()))

    def pause(self) -> tuple[list[bool], list[Piece]]:
        return self._taken(self._matcher.end_all())

    finish = pause

    def _lane(self, name: Hashable) -> int:
        lane = self._lanes.get(name)
        if lane is None:
            if self._free:
                lane = self._free.pop()
                self._names[lane] = name
            else:
                lane = len(self._names)
                self._names.append(name)
            self._lanes[name] = lane
        return lane

    def _taken(self, result: tuple[bytes, bytes, bytes]) -> tuple[list[bool], list[Piece]]:
        flags, ended, _ = result
        if ended:  # streams that ended and did not begin again: their lanes are free
            for lane in set(array("q", ended)[0::3]):
                if not self._matcher.active(lane) and self._names[lane] in self._lanes:
                    del self._lanes[self._names[lane]]
                    self._free.append(lane)
        return [not skipped for skipped in flags], []


def _run_piece(run: Run) -> Piece:
    source = run.source
    start = end = -1  # (a library's)
    if source is not None and source[0] != LIBRARY_END:
        start, end = source[1], source[2]
    return Piece(
        run.first.number,
        run.last.number,
        run.length,
        run.first.stream,
        start,
        end,
        run.count,
        run.content,
    )
