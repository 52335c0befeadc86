"""The statistics' sequences counted on a second core: :class:`AttributionThread` runs the
kernel's attributor on a thread of its own, beside the matcher."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from seqdedup.engine.attribution import KernelAttributor
from seqdedup.engine.pieces import Piece

if TYPE_CHECKING:
    from queue import Queue
    from threading import Thread
    from weakref import finalize

    from seqdedup._kernel import Attributor as KernelCore
    from seqdedup._kernel import Matcher as ChunkMatcher
    from seqdedup._kernel import RunsTaken

    # One chunk's attribution: key hashes, size, runs, numbers, the sources, their base
    Call = tuple[list[bytes], int, RunsTaken, bytes | None, bytes, int]


class AttributionThread:
    """Attribution that only counts (the statistics' sequences: nothing reads a piece)
    on a thread of its own, beside the matcher. Each chunk's runs go to the kernel's
    attributor with a copy of the matcher's sources (``Matcher.sources()``), so its call
    lets the GIL go and runs on another core while the matcher decides the next chunk.
    At most ``IN_FLIGHT`` chunks wait for it (their key hashes, runs and sources held);
    every other call, and every answer read, waits for what is queued first. The first
    chunk is attributed at once: an input of one chunk starts no thread."""

    IN_FLIGHT = 2

    def __init__(self, inner: KernelAttributor, matcher: ChunkMatcher) -> None:
        self._inner = inner
        self._matcher = matcher
        self._keys: list[bytes] = []  # key hashes given since the last runs
        self._decided = inner.decided
        self._queue: Queue[Call | None] | None = None  # the calls, once the thread runs
        self._thread: Thread | None = None
        self._ending: finalize[..., object] | None = None  # ends a dropped object's thread
        self._state = _ThreadState()
        self.counts_top = False
        self.set_library_keys = inner.set_library_keys  # (before any record)

    @property
    def threaded_calls(self) -> int:
        """Calls the thread made (tests check that it works)."""
        return self._state.calls

    def append_keys(self, hashes: bytes) -> None:
        self._keys.append(hashes)

    def add_runs(self, size: int, runs: RunsTaken, numbers: bytes | None = None) -> list[Piece]:
        if self._state.failure is not None:
            raise self._state.failure
        base, sources = self._matcher.sources()
        keys, self._keys = self._keys, []
        self._decided += size
        call = (keys, size, runs, numbers, sources, base)
        if self._thread is None and self._decided == size:
            _attribute(self._inner._core, call)  # the first chunk: perhaps the only one
        else:
            self._start().put(call)
        return []

    def _start(self) -> Queue[Call | None]:
        if self._thread is None:
            import queue
            import threading
            import weakref

            calls: Queue[Call | None] = queue.Queue(self.IN_FLIGHT)
            self._queue = calls
            self._thread = threading.Thread(
                target=_attribute_queued,
                args=(self._queue, self._inner._core, self._state),
                name="seqdedup-attribution",
                daemon=True,
            )
            self._thread.start()
            # The thread holds the queue and the kernel's attributor, not this object:
            # one dropped without finish() (an abandoned Deduplicator) ends its thread.
            self._ending = weakref.finalize(self, calls.put, None)
        assert self._queue is not None
        return self._queue

    def _settled(self) -> KernelAttributor:
        """The attributor once everything queued is done (its failure raised here)."""
        if self._queue is not None:
            self._queue.join()
        if self._state.failure is not None:
            raise self._state.failure
        inner = self._inner
        for hashes in self._keys:
            inner.append_keys(hashes)
        self._keys = []
        return inner

    def close(self) -> None:
        """The thread ends (once what is queued is done)."""
        if self._thread is not None:
            assert self._ending is not None and self._queue is not None
            self._ending.detach()
            self._queue.put(None)
            self._thread.join()
            self._thread = None
            self._queue = None

    @property
    def decided(self) -> int:
        return self._decided

    @property
    def identified(self) -> int:
        return self._settled().identified

    @property
    def open_piece(self) -> bool:
        return self._settled().open_piece

    @property
    def open_source(self) -> int | None:
        return self._settled().open_source

    @property
    def work(self) -> int:
        return self._settled().work

    def record_number(self, tracked: int) -> int:
        return int(self._settled().record_number(tracked))

    def add(self, keep: Sequence[bool], numbers: Sequence[int] | None = None) -> list[Piece]:
        pieces = self._settled().add(keep, numbers)
        self._decided = self._inner.decided
        return pieces

    def finish(self) -> list[Piece]:
        pieces = self._settled().finish()
        self.close()
        return pieces

    def new_input(self) -> list[Piece]:
        return self._settled().new_input()

    def take_packed(self) -> bytes:
        return b""  # (a thread serves a run whose pieces nothing reads)


class _ThreadState:
    """What the attribution thread tells the main thread: its first failure, its calls."""

    def __init__(self) -> None:
        self.failure: BaseException | None = None
        self.calls = 0


def _attribute(core: KernelCore, call: Call) -> None:
    """One chunk's attribution: its key hashes, then its runs with the sources' copy."""
    keys, size, runs, numbers, sources, base = call
    for hashes in keys:
        core.append_keys(hashes)
    core.add_runs(size, runs, numbers, sources, base)


def _attribute_queued(calls: Queue[Call | None], core: KernelCore, state: _ThreadState) -> None:
    """The attribution thread: the queued calls in order until None; after a failure
    the rest are dropped (the main thread raises it)."""
    while True:
        call = calls.get()
        try:
            if call is None:
                return
            if state.failure is None:
                _attribute(core, call)
                state.calls += 1
        except BaseException as exc:  # raised on the main thread by _settled
            state.failure = exc
        finally:
            calls.task_done()
