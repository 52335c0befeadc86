"""A numpy open-addressing table: window fingerprint -> first start, for unlimited history.

A Python dict spends ~300 ns per operation on a large table (cache misses on its index,
its entry and the boxed int key) and ~150 bytes per window. Here a whole batch is
looked up and inserted with vectorised linear probing: the keys of a batch are first
made unique (sorted, keeping each one's earliest start), then each probing round
gathers one slot for every key still unresolved; keys racing for the same empty slot
are settled before anything is written (the first in batch order takes it, the others
probe on). Keys are 128-bit fingerprints, as an (n, 2) array of uint64 lanes; slots
cost 24 bytes and the table is kept at most half full.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Array = Any  # numpy arrays; numpy's stubs are not needed for this module

_MIN_BITS = 12
_MIX_HIGH = np.uint64(0xC2B2AE3D27D4EB4F)
_MIX = np.uint64(0x9E3779B97F4A7C15)


class FirstStartTable:
    """Map 128-bit fingerprints to the start of their first window.

    A slot whose two lanes are both 0 is free, so the fingerprint 0 is kept beside the
    slots (``_zero``)."""

    def __init__(self, expected: int = 0) -> None:
        self._allocate(max(_MIN_BITS, (2 * max(expected, 1)).bit_length()))
        self.size = 0
        self._zero: int | None = None  # the first start of the fingerprint 0

    def __len__(self) -> int:
        return self.size + (self._zero is not None)

    @property
    def nbytes(self) -> int:
        return int(self._low.nbytes + self._high.nbytes + self._values.nbytes)

    def first_starts(self, fingerprints: Array, starts: Array) -> Array:
        """For each fingerprint, the first start ever given for it; new ones are added.

        ``starts`` must be increasing; within the batch the earliest start of a repeated
        fingerprint wins, as if the batch had been inserted one by one.
        """
        low, high = fingerprints[:, 0], fingerprints[:, 1]
        firsts = np.empty(len(low), dtype=np.int64)
        zero = (low == 0) & (high == 0)
        if zero.any():
            if self._zero is None:
                self._zero = int(starts[zero][0])
            firsts[zero] = self._zero
        rest = np.flatnonzero(~zero)
        low, high, starts = low[rest], high[rest], starts[rest]
        # Sorted by home slot (then by key), probing walks the table in address order,
        # which the memory system prefetches well; equal keys end up side by side, the
        # earliest first (the sort is stable).
        order = np.lexsort((high, low, self._mix(low, high)))
        ordered_low, ordered_high = low[order], high[order]
        boundary = np.empty(len(order), dtype=bool)
        boundary[:1] = True
        np.not_equal(ordered_low[1:], ordered_low[:-1], out=boundary[1:])
        boundary[1:] |= ordered_high[1:] != ordered_high[:-1]
        heads = np.flatnonzero(boundary)
        self._reserve(self.size + len(heads))
        found = self._find_or_insert(ordered_low[heads], ordered_high[heads], starts[order][heads])
        chosen = np.empty(len(order), dtype=np.int64)
        chosen[order] = found[np.cumsum(boundary) - 1]
        firsts[rest] = chosen
        return firsts

    def find(self, fingerprints: Array, missing: int = 0) -> Array:
        """The stored value of each fingerprint, or ``missing``; inserts nothing."""
        low, high = fingerprints[:, 0], fingerprints[:, 1]
        result = np.full(len(low), missing, dtype=np.int64)
        zero = (low == 0) & (high == 0)
        if self._zero is not None:
            result[zero] = self._zero
        mask = len(self._low) - 1
        pending = np.flatnonzero(~zero)
        slots = self._home(low[pending], high[pending])
        while pending.size:
            at_low, at_high = self._low[slots], self._high[slots]
            hit = (at_low == low[pending]) & (at_high == high[pending])
            result[pending[hit]] = self._values[slots[hit]]
            going_on = ~hit & ((at_low != 0) | (at_high != 0))  # a free slot: absent
            pending = pending[going_on]
            slots = (slots[going_on] + 1) & mask
        return result

    def _find_or_insert(self, low: Array, high: Array, values: Array) -> Array:
        """Keys distinct and not 0; return the stored value of each, inserting missing ones."""
        mask = len(self._low) - 1
        result = values.copy()
        pending = np.arange(len(low))
        slots = self._home(low, high)
        while pending.size:
            at_low, at_high = self._low[slots], self._high[slots]
            hit = (at_low == low[pending]) & (at_high == high[pending])
            if hit.any():
                result[pending[hit]] = self._values[slots[hit]]
            settled = hit
            free = np.flatnonzero((at_low == 0) & (at_high == 0))
            if free.size:
                # Of the keys racing for one free slot, the first in batch order takes it.
                _, first = np.unique(slots[free], return_index=True)
                takers = free[first]
                taken = slots[takers]
                self._low[taken] = low[pending[takers]]
                self._high[taken] = high[pending[takers]]
                self._values[taken] = values[pending[takers]]
                self.size += len(takers)
                settled = hit.copy()
                settled[takers] = True
            # Everyone else saw (or lost the slot to) another key: probe the next slot.
            pending = pending[~settled]
            slots = (slots[~settled] + 1) & mask
        return result

    def _mix(self, low: Array, high: Array) -> Array:
        return (low ^ (high * _MIX_HIGH)) * _MIX

    def _home(self, low: Array, high: Array) -> Array:
        """A key's home slot: the top bits of its two lanes mixed."""
        return (self._mix(low, high) >> self._shift).astype(np.int64)

    def _allocate(self, bits: int) -> None:
        self._low: Array = np.zeros(1 << bits, dtype=np.uint64)
        self._high: Array = np.zeros(1 << bits, dtype=np.uint64)
        self._values: Array = np.zeros(1 << bits, dtype=np.int64)
        self._shift = np.uint64(64 - bits)

    def _reserve(self, needed: int) -> None:
        if 2 * needed <= len(self._low):
            return
        used = (self._low != 0) | (self._high != 0)
        old_low, old_high, old_values = self._low[used], self._high[used], self._values[used]
        self._allocate((2 * needed).bit_length())
        self.size = len(old_low)
        self._place_sorted(old_low, old_high, old_values)

    def _place_sorted(self, low: Array, high: Array, values: Array) -> None:
        """Insert distinct keys into an empty table in one vectorised pass.

        Sorted by home slot, linear probing puts the i-th at
        max(home[i], slot[i-1] + 1) = i + max over k <= i of (home[k] - k). The old table
        holds its keys almost in this order already, so the stable sort (timsort) is
        nearly linear. Keys that would run past the end wrap round by probing.
        """
        order = np.argsort(self._mix(low, high), kind="stable")
        low, high, values = low[order], high[order], values[order]
        index = np.arange(len(low), dtype=np.int64)
        slots = np.maximum.accumulate(self._home(low, high) - index) + index
        fits = slots < len(self._low)
        self._low[slots[fits]] = low[fits]
        self._high[slots[fits]] = high[fits]
        self._values[slots[fits]] = values[fits]
        if not fits.all():
            self.size -= int((~fits).sum())
            self._find_or_insert(low[~fits], high[~fits], values[~fits])
