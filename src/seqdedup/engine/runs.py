"""Runs of equal flags: the maximal stretches of kept (or skipped) records, found at C
speed. Used wherever decisions become stretches: attribution, fold lines, the library's
new material, the Dask engine's staging and the window suggestion."""

from __future__ import annotations

from collections.abc import Sequence


def runs_of(flags: Sequence[bool], value: bool) -> list[tuple[int, int]]:
    """The maximal runs ``(start, stop)`` (half-open) of ``value`` in ``flags``, found
    with ``index`` (C speed) rather than a loop per flag."""
    runs: list[tuple[int, int]] = []
    size = len(flags)
    pos = 0
    while True:
        try:
            start = flags.index(value, pos)
        except ValueError:
            return runs
        try:
            pos = flags.index(not value, start)
        except ValueError:
            pos = size
        runs.append((start, pos))
