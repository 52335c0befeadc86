"""The Python engine's window history: the first start of each remembered window, for all
of the input (a dict, or numpy's table for large batches) or a limited history."""

from __future__ import annotations

from itertools import repeat
from typing import TYPE_CHECKING, Any

from seqdedup.base.engine import numpy_available
from seqdedup.base.hashes import hash_ints, hash_lanes

if TYPE_CHECKING:
    from seqdedup.base.hashes import Hashes, Starts
    from seqdedup.engine.fptable import FirstStartTable


NUMPY_MIN_WINDOWS = 2048


def _as_list(values: Starts) -> list[int]:
    """Plain ints (starts) in list form."""
    return values if isinstance(values, list) else list(values.tolist())


def _fingerprint_list(fingerprints: Hashes) -> list[int]:
    """Fingerprints as 128-bit ints (a list made here is already in that form)."""
    return fingerprints if isinstance(fingerprints, list) else hash_ints(fingerprints)


def _add_first_starts(
    small: dict[int, int], large: FirstStartTable | None, fingerprints: Hashes, starts: Starts
) -> FirstStartTable | None:
    """Record first starts in the dict (without numpy) or the numpy table (made when
    missing); return the table."""
    if not numpy_available():
        for fingerprint, start in zip(hash_ints(fingerprints), _as_list(starts), strict=True):
            small.setdefault(fingerprint, start)
        return large
    import numpy as np

    from seqdedup.engine.fptable import FirstStartTable

    fps = hash_lanes(fingerprints)
    if large is None:
        large = FirstStartTable(len(fps))
    large.first_starts(fps, np.asarray(starts, dtype=np.int64))
    return large


class UnlimitedHistory:
    """Unlimited history: fingerprint -> first start. The earliest occurrence is the
    best witness, so window j repeats iff its fingerprint first started at or before
    j - W. A dict serves small inputs; from the first large batch on, the numpy table
    of :mod:`seqdedup.engine.fptable` (faster, 4x smaller) takes over."""

    def __init__(self, window_size: int) -> None:
        self.window_size = window_size
        self._table: dict[int, int] = {}
        self._first_starts: FirstStartTable | None = None  # replaces _table when large

    def __len__(self) -> int:
        return len(self._first_starts) if self._first_starts is not None else len(self._table)

    def add_library(self, fingerprints: Hashes, starts: Starts) -> None:
        """Library windows are just very early windows."""
        self._first_starts = _add_first_starts(
            self._table, self._first_starts, fingerprints, starts
        )

    def firsts(self, fps: Hashes, start: int) -> Any:
        """The first start of each window's fingerprint, inserting the new ones (a
        list, or an int64 array for a large batch)."""
        end = start + len(fps)
        if self._first_starts is None and (len(fps) < NUMPY_MIN_WINDOWS or not numpy_available()):
            return list(map(self._table.setdefault, _fingerprint_list(fps), range(start, end)))
        import numpy as np

        from seqdedup.engine.fptable import FirstStartTable

        if self._first_starts is None:
            self._first_starts = FirstStartTable(len(self._table) + len(fps))
            if self._table:
                self._first_starts.first_starts(
                    hash_lanes(list(self._table.keys())),
                    np.fromiter(self._table.values(), np.int64, len(self._table)),
                )
            self._table = {}
        return self._first_starts.first_starts(
            hash_lanes(fps), np.arange(start, end, dtype=np.int64)
        )


class LimitedHistory:
    """Limited history, the rule as written, one window at a time: admit window j - W,
    then look window j up.

    ``_chains`` maps a fingerprint to (first, latest): the latest admitted start decides
    (repeat iff j - latest <= history); ``first`` starts the chain of occurrences less
    than a history apart, so while it is within history it is the earliest remembered
    occurrence, which attribution reports (else the latest). Two generations, each at
    least a history long: an entry last written two rotations ago is older than the
    history, so dropping it forgets nothing still remembered, and memory stays bounded
    without scanning the table. Sequential, so nothing depends on how input was cut.
    """

    def __init__(self, window_size: int, max_history: int) -> None:
        self.window_size = window_size
        self.horizon = max_history
        self._chains: dict[int, tuple[int, int]] = {}
        self._older_chains: dict[int, tuple[int, int]] = {}
        self._rotated_at = 0
        self._recent: list[int] = []  # the last W windows, not admitted yet
        self._recent_end = 0  # the window after the last of _recent
        self._library: FirstStartTable | None = None  # library windows
        self._library_dict: dict[int, int] = {}  # the same, when numpy is not installed

    def __len__(self) -> int:
        return len(self._chains) + len(self._older_chains)

    def add_library(self, fingerprints: Hashes, starts: Starts) -> None:
        """Library windows, never forgotten: a table of their own."""
        self._library = _add_first_starts(self._library_dict, self._library, fingerprints, starts)

    def firsts(self, fps: list[int], start: int) -> list[int]:
        """Per window: the start of the occurrence it repeats, or its own start when it
        is not a repeat (so that, as for unlimited history, j - first < W means new)."""
        width, horizon = self.window_size, self.horizon
        windows = self._recent + fps  # windows [low, end)
        low = start - len(self._recent)
        chains = self._chains
        get, get_older = chains.get, self._older_chains.get
        library = None
        if self._library is not None:
            library = self._library.find(hash_lanes(fps)).tolist()
        elif self._library_dict:
            library = list(map(self._library_dict.get, fps, repeat(0)))
        firsts = []
        admit = self._admit
        for j, fp in enumerate(fps, start):
            if j - width >= low:
                admit(windows[j - width - low], j - width)
            chain = get(fp) or get_older(fp)
            if library is not None and library[j - start] < 0:
                firsts.append(library[j - start])  # library windows come first, for good
            elif chain is not None and j - chain[1] <= horizon:
                firsts.append(chain[0] if j - chain[0] <= horizon else chain[1])
            else:
                firsts.append(j)
        self._recent = windows[-width:]
        end = start + len(fps)
        self._recent_end = end
        if end - self._rotated_at >= horizon:
            self._older_chains, self._chains = chains, {}
            self._rotated_at = end
        return firsts

    def _admit(self, fingerprint: int, start: int) -> None:
        """Window ``start`` has ended: later windows may repeat it. A chain goes on
        while occurrences are less than a history apart."""
        chain = self._chains.get(fingerprint) or self._older_chains.get(fingerprint)
        if chain is None or start - chain[1] > self.horizon:
            self._chains[fingerprint] = (start, start)
        else:
            self._chains[fingerprint] = (chain[0], start)

    def new_input(self) -> None:
        """The stream ended: its last windows need not wait W windows to be admitted
        (no later window can overlap them), and the next stream's windows start anew."""
        first = self._recent_end - len(self._recent)
        for offset, fingerprint in enumerate(self._recent):
            self._admit(fingerprint, first + offset)
        self._recent = []
