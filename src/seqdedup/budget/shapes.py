"""The note of an error shape (docs/llm-context.md): where a log repeats one error with
other values (a disk quota on 144 volumes, a lease not renewed for 30 .. 381 seconds),
``--budget`` shows one of them verbatim and, right after it, one line that counts them
all and names the values in which they differ:

    [seqdedup: 144 like line 6 in lines 6-7250: on vol-0, vol-1, ...; job 0 .. 715 (144 values)]

A note is a line of the reduced text that stands for no input (dropped on expanding).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from seqdedup.base.engine import Engine
from seqdedup.base.errors import visible
from seqdedup.budget.events import Units, mask_noise
from seqdedup.budget.input import WholeInput
from seqdedup.budget.values import Column, columns, named
from seqdedup.config.normalize import CLASSES, ValueMatches
from seqdedup.keys.kind import ANY, kinds_of

READ = 1024  # lines of a shape read for its values (both ends)
FIELDS = 2  # the fields a note names
RESERVE = 48  # characters kept for each field after the first


class ShapeNote(NamedTuple):
    first: int  # the example's first record
    last: int  # and its last: the note follows it
    text: bytes
    lines: list[int]  # the first record of each of the shape's events


def lines_named(first: int, last: int) -> str:
    """Records ``first`` .. ``last`` (0-based) as the lines they are (1-based)."""
    return f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"


def _family_words(shape: bytes, records: list[bytes], engine: Engine) -> Column | None:
    """Where the shape is a family (a word of its kind a value: ``Invalid user <...>
    from <IP>``), that word of each record, with the word before it (None where it is
    not; a record whose kind has other words is passed over)."""
    words = shape.split()
    if ANY not in words:
        return None
    at = words.index(ANY)
    found = [kind.split() for kind in kinds_of(records, engine)]
    taken = [row[at].decode("utf-8", "replace") for row in found if len(row) == len(words)]
    before = words[at - 1].decode("utf-8", "replace") + " " if at else ""
    return Column(visible(before), [visible(v) for v in dict.fromkeys(taken)])


def shape_notes(
    log: WholeInput,
    units: Units,
    groups: dict[int, list[int]],
    room: int,
    event_fields: Sequence[str],
    values: ValueMatches,
) -> list[ShapeNote]:
    """The notes of the shapes ``groups`` (see events.shape_groups), in its order:
    ``room`` characters of values at most, found by ``values``, except the
    ``event_fields`` (what tells copies of one event apart, not two events)."""
    noise = frozenset(CLASSES[name] for name in event_fields if name in CLASSES)
    notes = []
    for example, lines in groups.items():
        first, last = units.starts[example], units.ends[example]
        if last + 1 == log.count and not log.ends_delimited:
            continue  # (a line after the input's unended last one would end it)
        read = lines if len(lines) <= READ else lines[: READ // 2] + lines[-READ // 2 :]
        records = [mask_noise(log.record(r), event_fields) for r in [first, *read]]
        found = columns(records, values, noise)
        word = _family_words(units.event_kinds[first], records, log.engine)
        found = ([word] if word is not None else []) + found
        found = found[:FIELDS]
        text = (
            f"[seqdedup: {len(lines):,} like line {first + 1} in {lines_named(lines[0], lines[-1])}"
        )
        left = room
        for at, column in enumerate(found):
            said = named(
                column, max(RESERVE, left - RESERVE * (len(found) - at - 1)), read is lines
            )
            text += (": " if at == 0 else "; ") + said
            left -= len(said)
        notes.append(ShapeNote(first, last, (text + "]").encode("utf-8", "surrogateescape"), lines))
    return notes
