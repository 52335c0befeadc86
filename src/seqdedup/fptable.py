"""A numpy open-addressing table: window fingerprint -> first start, for unlimited history.

A Python dict spends ~300 ns per operation on a large table (cache misses on its index,
its entry and the boxed int key) and ~130 bytes per window. Here a whole batch is
looked up and inserted with vectorised linear probing: the keys of a batch are first
made unique (sorted, keeping each one's earliest start), then each probing round
gathers one slot for every key still unresolved. Two new keys racing for the same
empty slot both write it; the one whose write stuck wins, the other probes on. Slots
cost 16 bytes and the table is kept at most half full.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Array = Any  # numpy arrays of int64; numpy's stubs are not needed for this module

_EMPTY = 0  # a slot holding 0 is free; a fingerprint equal to 0 is stored as 1
_MIN_BITS = 12


class FirstStartTable:
    """Map int64 fingerprints to the start of their first window."""

    def __init__(self, expected: int = 0) -> None:
        bits = max(_MIN_BITS, (2 * max(expected, 1)).bit_length())
        self._keys: Array = np.zeros(1 << bits, dtype=np.int64)
        self._values: Array = np.zeros(1 << bits, dtype=np.int64)
        self._shift = np.uint64(64 - bits)
        self.size = 0

    def __len__(self) -> int:
        return self.size

    @property
    def nbytes(self) -> int:
        return int(self._keys.nbytes + self._values.nbytes)

    def first_starts(self, fingerprints: Array, starts: Array) -> Array:
        """For each fingerprint, the first start ever given for it; new ones are added.

        ``starts`` must be increasing; within the batch the earliest start of a repeated
        fingerprint wins, as if the batch had been inserted one by one.
        """
        keys = np.where(fingerprints == _EMPTY, 1, fingerprints)
        # Sorted as unsigned, the keys' home slots (their high bits) ascend: probing then
        # walks the table in address order, which the memory system prefetches well.
        order = np.argsort(keys.view(np.uint64), kind="stable")
        ordered = keys[order]
        boundary = np.empty(len(ordered), dtype=bool)
        boundary[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=boundary[1:])
        heads = np.flatnonzero(boundary)
        unique_keys = ordered[heads]
        earliest = starts[order][heads]  # the stable sort keeps the earliest first
        self._reserve(self.size + len(unique_keys))
        found = self._find_or_insert(unique_keys, earliest)
        firsts = np.empty(len(keys), dtype=np.int64)
        firsts[order] = found[np.cumsum(boundary) - 1]
        return firsts

    def find(self, fingerprints: Array, missing: int = 0) -> Array:
        """The stored value of each fingerprint, or ``missing``; inserts nothing."""
        keys = np.where(fingerprints == _EMPTY, 1, fingerprints)
        table_keys, table_values = self._keys, self._values
        mask = len(table_keys) - 1
        result = np.full(len(keys), missing, dtype=np.int64)
        pending = np.arange(len(keys))
        slots = self._home(keys)
        while pending.size:
            current = table_keys[slots]
            hit = current == keys[pending]
            result[pending[hit]] = table_values[slots[hit]]
            going_on = ~hit & (current != _EMPTY)  # an empty slot ends the probe: absent
            pending = pending[going_on]
            slots = (slots[going_on] + 1) & mask
        return result

    def _find_or_insert(self, keys: Array, values: Array) -> Array:
        """``keys`` distinct; return the stored value of each, inserting missing ones."""
        table_keys, table_values = self._keys, self._values
        mask = len(table_keys) - 1
        result = values.copy()
        pending = np.arange(len(keys))
        slots = self._home(keys)
        while pending.size:
            wanted = keys[pending]
            current = table_keys[slots]
            hit = current == wanted
            if hit.any():
                result[pending[hit]] = table_values[slots[hit]]
            free = current == _EMPTY
            settled = hit
            if free.any():
                free_slots = slots[free]
                table_keys[free_slots] = wanted[free]  # racers: one write sticks per slot
                won = np.zeros(len(pending), dtype=bool)
                won[free] = table_keys[free_slots] == wanted[free]
                table_values[slots[won]] = values[pending[won]]
                self.size += int(won.sum())
                settled = hit | won
            # Everyone else saw (or lost the slot to) another key: probe the next slot.
            pending = pending[~settled]
            slots = (slots[~settled] + 1) & mask
        return result

    def _home(self, keys: Array) -> Array:
        """A key's home slot: its top bits (well mixed in these fingerprints)."""
        return (keys.view(np.uint64) >> self._shift).astype(np.int64)

    def _reserve(self, needed: int) -> None:
        if 2 * needed <= len(self._keys):
            return
        used = self._keys != _EMPTY
        old_keys, old_values = self._keys[used], self._values[used]
        bits = (2 * needed).bit_length()
        self._keys = np.zeros(1 << bits, dtype=np.int64)
        self._values = np.zeros(1 << bits, dtype=np.int64)
        self._shift = np.uint64(64 - bits)
        self.size = len(old_keys)
        self._place_sorted(old_keys, old_values)

    def _place_sorted(self, keys: Array, values: Array) -> None:
        """Insert distinct keys into an empty table in one vectorised pass.

        Sorted (as unsigned), their home slots ascend, and linear probing puts the i-th
        at max(home[i], slot[i-1] + 1) = i + max over k <= i of (home[k] - k). The old
        table holds its keys almost in this order already, so the stable sort (timsort)
        is nearly linear. Keys that would run past the end wrap round by probing.
        """
        order = np.argsort(keys.view(np.uint64), kind="stable")
        keys, values = keys[order], values[order]
        index = np.arange(len(keys), dtype=np.int64)
        slots = np.maximum.accumulate(self._home(keys) - index) + index
        fits = slots < len(self._keys)
        self._keys[slots[fits]] = keys[fits]
        self._values[slots[fits]] = values[fits]
        if not fits.all():
            self.size -= int((~fits).sum())
            self._find_or_insert(keys[~fits], values[~fits])
