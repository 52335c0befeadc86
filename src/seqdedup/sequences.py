"""Duplicate runs -> sequences: identification and the bounded, LRU sequences table."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence


class SequenceTable:
    """Distinct sequences seen in this run and their counts, least recently seen evicted.

    A sequence is identified by the hash of its records' key hashes. Its count is how
    many times it has been seen, the first occurrence included.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._counts: OrderedDict[int, int] = OrderedDict()
        self.identified = 0  # distinct sequences identified in this run (evicted ones too)
        self._known: set[int] | None = set() if limit is not None else None

    def __len__(self) -> int:
        return len(self._counts)

    def observe(self, identity: int, first_count: int = 2) -> int:
        """Record one more sighting of a sequence; return its count so far."""
        counts = self._counts
        count = counts.get(identity)
        if count is None:
            count = first_count
            if self._known is None or identity not in self._known:
                self.identified += 1
                if self._known is not None:
                    self._known.add(identity)
        else:
            count += 1
            counts.move_to_end(identity)
        counts[identity] = count
        if self.limit is not None and len(counts) > self.limit:
            counts.popitem(last=False)
        return count


class RunCollector:
    """Cut the decided tracked records into duplicate runs (maximal skipped stretches).

    Fed the keep flags and key hashes of decided records in order; calls
    ``table.observe`` once per completed run. Works per run, not per record: the runs
    are found with ``list.index`` scans.
    """

    def __init__(self, table: SequenceTable) -> None:
        self.table = table
        self._open: list[int] = []  # key hashes of a run still open at the batch end

    def add(self, keep: list[bool], hashes: Sequence[int]) -> None:
        size = len(keep)
        pos = 0
        while pos < size:
            try:
                start = keep.index(False, pos)
            except ValueError:
                start = size
            if start > pos:  # a kept record ends any run left open
                self.finish()
            if start == size:
                return
            try:
                stop = keep.index(True, start)
            except ValueError:
                stop = size
            self._open.extend(hashes[start:stop])
            if stop < size:
                self.finish()
            pos = stop

    def finish(self) -> None:
        """Close the open run, if any (a kept record or the end of input ends it)."""
        if self._open:
            self.table.observe(hash(tuple(self._open)))
            self._open = []
