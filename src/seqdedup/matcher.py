"""The exact window engine (DESIGN sections 2-3): the only hot loop.

Window j (the W tracked records starting at tracked record j) is a *repeat* when an
equal window i ended before j started (i + W <= j) and i is still remembered
(j - i <= max_history), or when it occurs in a loaded library sequence. A record is
skipped when it lies inside at least one repeat.

How it is computed, per batch of windows [s, e):

* Each window gets a 64-bit fingerprint, sum(h[j+k] * R[k]) mod 2**64, where h are the
  records' key hashes (SipHash, randomised per process) and R fixed odd constants. It
  is a linear hash with independent coefficients (no polynomial structure to attack);
  two different windows collide with probability about 2**-64.
* ``_table`` maps the fingerprint of every *admitted* window (one that ended before
  the batch: i <= s - W) to its latest start, or to 0 when history is unlimited (the
  position is then never needed, and sharing one int object saves memory).
* Windows inside the batch and the W-1 before it ("local" windows) are matched with
  a first-occurrence dictionary: window j has a local match iff the first local
  occurrence of its fingerprint starts at or before j - W. With limited history the
  batch is kept short enough (at most N - W + 2 windows) that every local match is
  within history.
* Memory: with limited history, entries older than the history are purged whenever
  the table grows past twice the history, so it stays bounded on endless streams.

Large batches use numpy for fingerprints and marking; small ones (a live stream, a
one-line input) use the pure-Python twins, which give identical results and spare the
numpy import. Nothing here prints or reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import mul
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from seqdedup.fptable import FirstStartTable

MASK64 = (1 << 64) - 1
SIGN64 = 1 << 63
NUMPY_MIN_WINDOWS = 2048
_UNLIMITED_HORIZON = 1 << 61
_NEVER = -(1 << 62)  # "no admitted occurrence": j - _NEVER exceeds every horizon
LIBRARY_SOURCE = -1  # the source of a window that repeats a loaded library sequence


def coefficients(count: int) -> list[int]:
    """``count`` fixed odd 64-bit constants (splitmix64), as signed ints."""
    out = []
    state = 0x9E3779B97F4A7C15
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z = (z ^ (z >> 31)) | 1
        out.append(z - (1 << 64) if z & SIGN64 else z)
    return out


def _signed(value: int) -> int:
    value &= MASK64
    return value - (1 << 64) if value & SIGN64 else value


def fingerprints_py(hashes: Sequence[int], count: int, coeffs: Sequence[int]) -> list[int]:
    """Fingerprints of the first ``count`` windows of ``hashes`` (pure Python)."""
    width = len(coeffs)
    return [_signed(sum(map(mul, hashes[j : j + width], coeffs))) for j in range(count)]


def fingerprints_np(hashes: Sequence[int], count: int, coeffs: Sequence[int]) -> Any:
    """The same fingerprints as :func:`fingerprints_py`, vectorised with numpy."""
    import numpy as np

    values = np.asarray(hashes, dtype=np.int64).view(np.uint64)
    factors = np.array(coeffs, dtype=np.int64).view(np.uint64)
    acc = values[:count] * factors[0]
    if len(coeffs) > 1:
        term = np.empty(count, dtype=np.uint64)
        for k in range(1, len(coeffs)):
            np.multiply(values[k : k + count], factors[k], out=term)
            acc += term
    return acc.view(np.int64)


def _as_list(values: Any) -> list[int]:
    return values if isinstance(values, list) else list(values.tolist())


class WindowMatcher:
    """Feed key hashes of tracked records in order; get keep/skip decisions back.

    ``push`` returns one flag per newly decidable record (True = keep), oldest first; a
    record is decidable once the window starting at it is complete, i.e. W-1 records
    later. ``finish`` decides the last W-1 records at end of input.
    """

    def __init__(self, window_size: int, max_history: int | None) -> None:
        self.window_size = window_size
        self.max_history = max_history
        self._horizon = _UNLIMITED_HORIZON if max_history is None else max_history
        # With limited history a batch must keep every local match within history.
        self._batch_limit = (
            1 << 62 if max_history is None else max(1, max_history - window_size + 2)
        )
        self._coeffs = coefficients(window_size)
        self._table: dict[int, int] = {}
        self._first_starts: FirstStartTable | None = None  # replaces _table when large
        self._library: set[int] = set()
        self._tail: list[int] = []  # hashes of the records whose window is not complete
        self._recent: list[int] = []  # fingerprints of the last W-1 windows, not admitted yet
        self._next = 0  # index of the next window to decide (= next undecided record)
        self._skip_until = -1  # last record covered by a repeat so far
        # When a dict, every repeat window's start maps to the start of the earlier
        # window it repeats (LIBRARY_SOURCE for a library match): attribution reads it.
        self.repeat_sources: dict[int, int] | None = None

    # -- state that other stages read -------------------------------------------------
    @property
    def decided(self) -> int:
        """How many tracked records have been decided."""
        return self._next

    @property
    def remembered_windows(self) -> int:
        """How many window fingerprints the history currently holds."""
        if self._first_starts is not None:
            return len(self._first_starts)
        return len(self._table)

    def fingerprints(self, hashes: Sequence[int], count: int) -> Any:
        """Fingerprints of the first ``count`` windows (a list, or an int64 array if large)."""
        if count >= NUMPY_MIN_WINDOWS:
            return fingerprints_np(hashes, count, self._coeffs)
        return fingerprints_py(_as_list(hashes), count, self._coeffs)

    def add_library_windows(self, fingerprints: Iterable[int]) -> None:
        """Make these windows "already seen" for the whole run, never forgotten."""
        self._library.update(_as_list(fingerprints))

    # -- the decision ----------------------------------------------------------------
    def push(self, hashes: Any) -> list[bool]:
        """Add the key hashes of the next tracked records (a list or an int64 array);
        return the newly decided flags."""
        width = self.window_size
        pending: Any
        if isinstance(hashes, list):
            pending = self._tail + hashes if self._tail else hashes
        else:
            import numpy as np

            pending = np.concatenate([np.array(self._tail, dtype=np.int64), hashes])
        complete = len(pending) - width + 1
        if complete < NUMPY_MIN_WINDOWS and not isinstance(pending, list):
            pending = pending.tolist()
        if complete <= 0:
            self._tail = pending
            return []
        keep: list[bool] = []
        for start in range(0, complete, self._batch_limit):
            stop = min(complete, start + self._batch_limit)
            fps = self.fingerprints(pending[start : stop + width - 1], stop - start)
            keep += self._decide(fps)
        self._tail = _as_list(pending[complete:])
        return keep

    def finish(self) -> list[bool]:
        """Decide the records left at end of input (no window starts at them)."""
        first = self._next
        count = len(self._tail)
        self._next += count
        self._tail = []
        return [first + k > self._skip_until for k in range(count)]

    def _decide(self, fps: Any) -> list[bool]:
        start = self._next
        end = start + len(fps)
        latest: list[int] | None = None
        if self.max_history is None:
            firsts = self._match_unlimited(fps, start, end)
        else:
            firsts, latest = self._match_limited(_as_list(fps), start, end)
        in_library = list(map(self._library.__contains__, _as_list(fps))) if self._library else None
        if len(fps) >= NUMPY_MIN_WINDOWS:
            keep = self._mark_np(start, firsts, latest, in_library)
        else:
            keep = self._mark_py(start, _as_list(firsts), latest, in_library)
        self._next = end
        return keep

    def _match_unlimited(self, fps: Any, start: int, end: int) -> Any:
        # Unlimited history: the earliest occurrence is the best candidate, so the first
        # start of each fingerprint ever seen decides. A dict serves small inputs; from
        # the first large batch on, the numpy table (faster, 4x smaller) takes over.
        if self._first_starts is None and len(fps) < NUMPY_MIN_WINDOWS:
            return list(map(self._table.setdefault, fps, range(start, end)))
        import numpy as np

        from seqdedup.fptable import FirstStartTable

        if self._first_starts is None:
            self._first_starts = FirstStartTable(len(self._table) + len(fps))
            if self._table:
                self._first_starts.first_starts(
                    np.fromiter(self._table.keys(), np.int64, len(self._table)),
                    np.fromiter(self._table.values(), np.int64, len(self._table)),
                )
            self._table = {}
        return self._first_starts.first_starts(
            np.asarray(fps, dtype=np.int64), np.arange(start, end, dtype=np.int64)
        )

    def _match_limited(self, fps: list[int], start: int, end: int) -> tuple[list[int], list[int]]:
        width = self.window_size
        recent = self._recent
        local = recent + fps  # windows [low, end)
        low = start - len(recent)
        first_seen: dict[int, int] = {}
        firsts = list(map(first_seen.setdefault, local, range(low, end)))[len(recent) :]
        latest = list(map(self._table.get, fps, repeat(_NEVER)))
        # Admit the windows that have now ended: those starting at or before end - W.
        admitted = max(0, len(local) - width + 1)
        table = self._table
        table.update(zip(local[:admitted], range(low, low + admitted), strict=False))
        self._recent = local[admitted:]
        if len(table) > 2 * self.max_history + 1024:  # type: ignore[operator]
            oldest = end - self.max_history  # type: ignore[operator]
            self._table = {fp: pos for fp, pos in table.items() if pos >= oldest}
        return firsts, latest

    def _mark_py(
        self, start: int, firsts: list[int], latest: list[int] | None, in_library: list[bool] | None
    ) -> list[bool]:
        width, horizon = self.window_size, self._horizon
        cover = self._skip_until
        sources = self.repeat_sources
        keep = []
        for offset, first in enumerate(firsts):
            j = start + offset
            if j - first >= width:
                source = first
            elif latest is not None and j - latest[offset] <= horizon:
                source = latest[offset]
            elif in_library is not None and in_library[offset]:
                source = LIBRARY_SOURCE
            else:
                keep.append(j > cover)
                continue
            cover = j + width - 1
            if sources is not None:
                sources[j] = source
            keep.append(False)
        self._skip_until = cover
        return keep

    def _mark_np(
        self, start: int, firsts: Any, latest: list[int] | None, in_library: list[bool] | None
    ) -> list[bool]:
        import numpy as np

        width = self.window_size
        position: Any = np.arange(start, start + len(firsts), dtype=np.int64)
        first_starts = np.asarray(firsts, dtype=np.int64)
        repeat_mask = (position - first_starts) >= width
        source = first_starts
        if latest is not None:
            latest_starts = np.array(latest, dtype=np.int64)
            by_latest = ~repeat_mask & ((position - latest_starts) <= self._horizon)
            source = np.where(by_latest, latest_starts, source)
            repeat_mask |= by_latest
        if in_library is not None:
            by_library = ~repeat_mask & np.array(in_library, dtype=bool)
            source = np.where(by_library, LIBRARY_SOURCE, source)
            repeat_mask |= by_library
        if self.repeat_sources is not None:
            self.repeat_sources.update(
                zip(position[repeat_mask].tolist(), source[repeat_mask].tolist(), strict=True)
            )
        # cover[r] = last record covered by a repeat starting at or before r.
        cover = np.where(repeat_mask, position + (width - 1), -1)
        np.maximum.accumulate(cover, out=cover)
        np.maximum(cover, self._skip_until, out=cover)
        self._skip_until = int(cover[-1])
        keep: list[bool] = (position > cover).tolist()
        return keep
