"""The values in which lines of one kind differ, as ``--budget`` names them: each field
the kind masks (numbers, addresses, ids, paths, quoted values; never a timestamp), read
as a column across the lines, and written the way a reader scans them: the values
listed where they fit, else their range, else the first ones and how many
(docs/llm-context.md).

A value is shown with the name stuck to its front (``vol-17``, ``blk_-42``), and a
column whose lines all say the same word before it is shown once with that word
(``job 5, 10, 15``, ``uid=0, 1``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from seqdedup.base.errors import visible
from seqdedup.config.normalize import TIMESTAMP, ValueMatches

VALUE_WIDTH = 24  # bytes of a value shown
# before a value: a word and its separator (the column's label where every line has
# it), then the name stuck to the value's front
_BEFORE = re.compile(
    rb"(?:(?<![^\s(\[{,;])[A-Za-z][A-Za-z_]{0,15}(?:=|: ?| ))?(?:[A-Za-z][A-Za-z_-]{0,11})?$"
)
_NAME = re.compile(rb"(?:[A-Za-z][A-Za-z_-]{0,11})?$")
BEFORE_MOST = 30  # the longest match of _BEFORE (a word of 16, its separator of 2, a name of 12)


class Column(NamedTuple):
    """One masked field across the lines: the word each line writes before it (where
    they all write the same, else empty) and its distinct values, first met first."""

    label: str
    values: list[str]


def columns(
    records: Sequence[bytes], matches: ValueMatches, noise: frozenset[int] = frozenset()
) -> list[Column]:
    """The fields that differ between ``records`` (the first is the example: only the
    lines with as many fields as it are read), in the order they stand: each record's
    ``matches`` (the engine's ``value_matches``) but a timestamp's and those of the
    classes ``noise`` (their bits)."""
    rows: list[list[tuple[bytes, bytes]]] = []
    for record in records:
        row = []
        for start, end, bit in matches(record):
            if bit == TIMESTAMP or bit in noise:  # (when, not what)
                continue
            before = _BEFORE.search(record, max(0, start - BEFORE_MOST), start)
            said = before.group() if before is not None else b""
            name = _NAME.search(said)
            attached = name.group() if name is not None else b""
            label = said[: len(said) - len(attached)]
            row.append((label, attached + record[start:end]))
        rows.append(row)
    if not rows:
        return []
    width = len(rows[0])
    rows = [row for row in rows if len(row) == width]
    found: list[Column] = []
    for field in range(width):
        values = list(dict.fromkeys(row[field][1] for row in rows))
        if len(values) < 2:
            continue
        labels = {row[field][0] for row in rows}
        common = labels.pop().decode("utf-8", "replace") if len(labels) == 1 else ""
        found.append(Column(visible(common), [_shown(value) for value in values]))
    return found


def _shown(value: bytes) -> str:
    return visible(value[:VALUE_WIDTH].decode("utf-8", "replace"))


def named(column: Column, room: int, complete: bool = True) -> str:
    """A column in at most about ``room`` characters: every value listed; else, where
    they are numbers after one shared name, their range; else the first values that
    fit and how many there are (``complete``: the values are all of the lines', else
    a sample, said with ``+``)."""
    label, values = column
    more = "" if complete else "+"
    listed = ", ".join(values)
    if len(label) + len(listed) <= room and complete:
        return label + listed
    ranged = _range(values)
    if ranged is not None:
        return f"{label}{ranged} ({len(values):,}{more} values)"
    taken: list[str] = []
    used = len(label) + 16
    for value in values:
        if taken and used + len(value) + 2 > room:
            break
        taken.append(value)
        used += len(value) + 2
    return f"{label}{', '.join(taken)}, ... ({len(values):,}{more} values)"


def briefly(column: Column, complete: bool = True) -> str:
    """A column as a marker names it: up to three values listed, else their range (or
    first and last) and how many (``complete``: as in :func:`named`)."""
    values = column.values
    if len(values) <= 3:
        return ", ".join(values)
    ends = _range(values) or f"{values[0]} .. {values[-1]}"
    return f"{ends} ({len(values):,}{'' if complete else '+'} values)"


def _range(values: list[str]) -> str | None:
    """``vol-0 .. vol-143`` where every value is one name and a whole number (None
    where they are not)."""
    prefix = values[0].rstrip("0123456789")
    numbers = []
    for value in values:
        digits = value[len(prefix) :]
        if not value.startswith(prefix) or not digits.isdigit():
            return None
        numbers.append(int(digits))
    return f"{prefix}{min(numbers)} .. {prefix}{max(numbers)}"
