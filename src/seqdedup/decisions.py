"""The engine in objects: keys in; one keep flag per record and the closed duplicate
runs out (docs/python-api.md, "Decisions"). What a feature built on the engine uses
instead of records and marker lines: nothing is encoded in record text, nothing
parsed back.

Records are numbered from 0 in the order fed. Each may belong to a stream (any
hashable name; ``None``: all in one); the rule is ``--stream-by``'s, which for one
stream is the plain rule: a window is W consecutive records of one stream, a repeat
when an equal window of any stream ended before it started and is still remembered
(``history``: between the two windows' last records). Flags come back in the order
fed, each as soon as its record and every record before it are decided.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Hashable, Sequence
from types import ModuleType
from typing import NamedTuple

from seqdedup.engine import SEED, load
from seqdedup.hashes import hash_ints
from seqdedup.keys import KeyMaker
from seqdedup.streamby.decider import LIBRARY_END, Entry, Run, SequenceCounts, StreamDecider


class Block(NamedTuple):
    """A closed duplicate run: records ``start`` .. ``end`` of one stream (numbers in
    the order fed; the stream's records between them, other streams' interleaved),
    ``length`` of them, the earlier occurrence of its first window (``source_start`` ..
    ``source_end``; both -1 for a library's), ``seen``: how many times its sequence has
    been seen by now (the first occurrence counts: the first repeat says 2), and the
    sequence's identity (128 bits; equal for equal sequences of keys in one run)."""

    start: int
    end: int
    length: int
    stream: Hashable
    source_start: int
    source_end: int
    seen: int
    identity: int


class Decided(NamedTuple):
    """What one call decided: ``keep[k]`` for record ``first + k``, and the runs that
    closed in it, in the order they closed (a run closes when its stream's next record
    is kept, or the stream ends: its records' flags may have come in earlier calls)."""

    first: int
    keep: list[bool]
    blocks: list[Block]


class Decisions:
    """The rule over keys (bytes compared as they are), fed in batches.

    ``window`` is W; ``history``: windows remembered (None: all); ``idle``: a stream
    without a record for that many records ends, as at the end of input (None: never);
    ``max_streams``: the least recently active stream ends past that many (None: no
    limit); ``sequences``: distinct sequences counted (None: all). ``blocks=False``:
    the flags alone (``Decided.blocks`` stays empty), decided by the compiled kernel
    where it is built (the Python engine's decider otherwise, and always for blocks).

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
        blocks: bool = True,
    ) -> None:
        if window < 1:
            raise ValueError("window must be at least 1")
        kernel = load()
        self._blocks = blocks
        self._keys = KeyMaker(kernel=kernel, seed=SEED)
        self._kernel = (
            None
            if blocks or kernel is None
            else _KernelFlags(kernel, window, history, idle, max_streams)
        )
        self._closed: list[Run] = []
        # (the Python decider only where it decides: the kernel's twin needs none)
        self._decider: StreamDecider | None = None
        if self._kernel is None:
            self._decider = StreamDecider(
                window, history, idle, max_streams, SequenceCounts(sequences), True, SEED
            )
            self._decider.closed = self._closed
        self._queue: deque[Entry] = deque()  # fed, not handed out yet, in order
        self._fed = 0
        self._released = 0

    def feed(self, keys: Sequence[bytes], streams: Sequence[Hashable] | None = None) -> Decided:
        """Add records by their keys (and streams, one per key); what is decided now."""
        if streams is not None and len(streams) != len(keys):
            raise ValueError("one stream per key")
        if self._kernel is not None:
            flags = self._kernel.push(self._keys.hashes(list(keys)), streams, len(keys))
            return self._flagged(flags)
        assert self._decider is not None
        hashes = hash_ints(self._keys.hashes(list(keys)))
        push, queue, number = self._decider.push, self._queue, self._fed
        for k, key_hash in enumerate(hashes):
            name = None if streams is None else streams[k]
            entry = Entry(b"", number + k, name)  # type: ignore[arg-type]
            queue.append(entry)
            push(name, key_hash, entry)  # type: ignore[arg-type]
        self._fed += len(hashes)
        return self._release()

    def pause(self) -> Decided:
        """The input paused: every stream's pending records decided as at the end of
        input (no window spans the pause); the streams go on."""
        if self._kernel is not None:
            return self._flagged(self._kernel.end_all())
        assert self._decider is not None
        self._decider.end_all()
        return self._release()

    def finish(self) -> Decided:
        """End of input: everything still pending."""
        return self.pause()

    @property
    def sequences(self) -> int:
        """Distinct sequences of the runs closed so far (0 where the kernel's twin
        gives the flags alone: it counts none)."""
        counts = None if self._decider is None else self._decider.sequences
        return 0 if counts is None else counts.identified

    def _flagged(self, flags: bytes) -> Decided:
        first = self._released
        self._released += len(flags)
        return Decided(first, [not skipped for skipped in flags], [])

    def _release(self) -> Decided:
        queue, first, keep = self._queue, self._released, []
        while queue and queue[0].decided:
            keep.append(not queue.popleft().skip)
        self._released += len(keep)
        blocks = []
        assert self._decider is not None
        for run in self._closed:  # (counted as they closed)
            self._decider.count(run)
            if self._blocks:
                blocks.append(_block(run))
        self._closed.clear()
        return Decided(first, keep, blocks)


class _KernelFlags:
    """The same rule decided by the kernel's ``StreamMatcher``: each active stream gets a
    small lane number (an ended stream's lane is used again); flags in input order."""

    def __init__(
        self,
        kernel: ModuleType,
        window: int,
        history: int | None,
        idle: int | None,
        max_streams: int | None,
    ) -> None:
        self._matcher = kernel.StreamMatcher(
            window, idle, max_streams, count_runs=False, history=history, seed=SEED
        )
        self._lanes: dict[Hashable, int] = {}  # active streams -> lane
        self._names: list[Hashable] = []  # lane -> stream
        self._free: list[int] = []  # lanes of streams that ended

    def push(self, hashes: bytes, streams: Sequence[Hashable] | None, count: int) -> bytes:
        names = [None] * count if streams is None else streams
        lanes = array("i", map(self._lane, names))
        flags: bytes = self._taken(self._matcher.push(hashes, lanes.tobytes()))
        return flags

    def end_all(self) -> bytes:
        return self._taken(self._matcher.end_all())

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

    def _taken(self, result: tuple[bytes, bytes, bytes]) -> bytes:
        flags, ended, _ = result
        if ended:  # streams that ended and did not begin again: their lanes are free
            for lane in set(array("q", ended)[0::3]):
                if not self._matcher.active(lane) and self._names[lane] in self._lanes:
                    del self._lanes[self._names[lane]]
                    self._free.append(lane)
        return flags


def _block(run: Run) -> Block:
    source = run.source
    library = source is None or source[0] == LIBRARY_END
    return Block(
        run.first.number,
        run.last.number,
        run.length,
        run.first.stream,
        -1 if library else source[1],  # type: ignore[index]
        -1 if library else source[2],  # type: ignore[index]
        run.count,
        run.content,
    )
