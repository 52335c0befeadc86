"""Per-stream statistics of a ``--stream-by`` run: a row per stream for the first
STREAM_ROWS streams, in order of appearance, the records of any later one summed in
one row (memory stays bounded however many streams come)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from seqdedup.run.stats import CountsRow

STREAM_ROWS = 10_000  # per-stream statistics rows: the first streams; the rest as one


class StreamRows:
    """Per-stream statistics: the first STREAM_ROWS streams in order of appearance, the
    records of any later one summed in one row."""

    def __init__(self) -> None:
        self._rows: dict[str, list[int]] = {}  # name -> [total, skipped]
        self._by_row: list[list[int]] = []  # the kernel's rows (push_named): their lists
        self._other = [0, 0]

    def note(self, names: list[str]) -> None:
        """Streams ``names`` appear, in order (each one's row, if there is room, stands
        where it appears)."""
        rows = self._rows
        for name in names:
            if len(rows) >= STREAM_ROWS:
                return
            if name not in rows:
                rows[name] = [0, 0]

    def add(self, names: list[str], totals: Sequence[int], skipped: Sequence[int]) -> None:
        """Streams ``names`` ended with these records in all, and skipped."""
        rows, other = self._rows, self._other
        if len(rows) >= STREAM_ROWS:  # no room: only the rows held take their own
            held = rows.keys() & set(names)
            if not held:  # (a stream per record: every name new, summed at C speed)
                other[0] += sum(totals)
                other[1] += sum(skipped)
                return
            picked = [k for k, name in enumerate(names) if name in held]
            names = [names[k] for k in picked]
            other[0] += sum(totals) - sum(totals[k] for k in picked)
            other[1] += sum(skipped) - sum(skipped[k] for k in picked)
            totals = [totals[k] for k in picked]
            skipped = [skipped[k] for k in picked]
        for name, total, skip in zip(names, totals, skipped, strict=True):
            row = rows.get(name)
            if row is None:  # (a stream's row is made where it appears, if there is room)
                if len(rows) < STREAM_ROWS:
                    row = rows[name] = [0, 0]
                else:
                    row = other
            row[0] += total
            row[1] += skip

    def add_row(self, row: int, name: str) -> None:
        """The kernel gave stream ``name`` row ``row`` (rows come in order)."""
        assert row == len(self._by_row)
        self._by_row.append(self._rows.setdefault(name, [0, 0]))

    def add_counts(
        self, rows: Sequence[int], totals: Sequence[int], skipped: Sequence[int]
    ) -> None:
        """Streams that hold these rows (the kernel's) ended with these records."""
        by_row = self._by_row
        for row, total, skip in zip(rows, totals, skipped, strict=True):
            by_row[row][0] += total
            by_row[row][1] += skip

    def add_other(self, total: int, skipped: int) -> None:
        """Streams without a row ended with these records in all."""
        self._other[0] += total
        self._other[1] += skipped

    def document(self) -> list[CountsRow]:
        """Per stream: its name and its records (total, emitted, skipped)."""
        rows = [(name, total, skipped) for name, (total, skipped) in self._rows.items()]
        if self._other[0]:
            rows.append(("(other streams)", self._other[0], self._other[1]))
        return [
            {"name": name, "lines": {"total": t, "emitted": t - s, "skipped": s}}
            for name, t, s in rows
        ]
