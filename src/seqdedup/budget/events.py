"""--budget's view of a log: events and kinds of line, and the order in which they earn
a place in the output (docs/llm-context.md).

Each record has a *kind* (:mod:`seqdedup.keys.kind`: its key with every class masked,
numbers, addresses, paths and quoted values too), so that lines that differ only in
their values are one kind. A record kept verbatim
(an error, a warning, a traceback, ``--keep``) has an *event* instead: its key with only
the fields named by ``--event-fields`` masked (timestamps, ids, pids, ports by
default), so that the exit status 0 and 1 stay two events while two copies of one
failure a second apart are one. A verbatim record and the lines that continue it (a
traceback's) are one *unit*; every other record is a unit of its own.

The rank is the order in which units are shown while the budget lasts: every new event
(most frequent and most recent first), then every new kind (most frequent and rarest
first), then the lines around the events, then the rest, nearest to an event first.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from itertools import compress
from typing import NamedTuple

from seqdedup.base.engine import SEED, Engine
from seqdedup.base.lazy import LazySequence
from seqdedup.base.records import Int64s
from seqdedup.budget.input import LEVELS, WholeInput, ones
from seqdedup.config.groups import KeyOptions
from seqdedup.config.normalize import CLASSES
from seqdedup.keys.kind import families, kind_keys, kind_options
from seqdedup.keys.maker import key_maker

CONTEXT = 3  # lines around each event shown right after the kinds (as grep -C 3)
BATCH = 65_536  # records keyed at once

# The fields that differ between copies of one event, besides the normalising classes
_PID = re.compile(rb"(?<=\[)[0-9]+(?=\])|(?<=pid[=: ])[0-9]+|(?<=PID[=: ])[0-9]+")
_PORT = re.compile(rb"(?<=port[=: ])[0-9]+|(?<=Port[=: ])[0-9]+")
_IP_PORT = re.compile(rb"((?:[0-9]{1,3}\.){3}[0-9]{1,3}):[0-9]{1,5}(?![0-9])")


def mask_noise(key: bytes, fields: Sequence[str]) -> bytes:
    """The key with its pids and ports masked (each pattern tried only where the bytes
    it needs are there)."""
    if "pid" in fields and (b"[" in key or b"PID" in key or b"pid" in key):
        key = _PID.sub(b"<PID>", key)
    if "port" in fields and b":" in key:
        key = _IP_PORT.sub(rb"\1:<PORT>", key)
    if "port" in fields and b"ort" in key:
        key = _PORT.sub(b"<PORT>", key)
    return key


class UnitEnds(LazySequence[int]):
    """Each unit's last record: the record before the next unit's first (the input's
    last for the last unit), read where asked (a few thousand units are, of a million)."""

    def __init__(self, starts: array[int] | memoryview, count: int) -> None:
        self._starts = starts
        self._count = count

    def __len__(self) -> int:
        return len(self._starts)

    def _item(self, unit: int) -> int:
        return self._starts[unit + 1] - 1 if unit + 1 < len(self) else self._count - 1


class EventShapes:
    """Each verbatim record's shape (``shapes[record]``): its kind's text, or its
    family's where the log's error kinds of one form take more than one word at a place
    (a user name: ``Invalid user <...> from <IP>``; seqdedup.keys.kind.families). Held
    per distinct verbatim line (``shape[line]``; the lines: ``lines``), not per record;
    ``verbatim``: which records are verbatim."""

    def __init__(
        self, log: WholeInput, shape: list[bytes], verbatim: bytearray, lines: VerbatimLines
    ):
        self.shape = shape
        self.verbatim = verbatim
        self.lines = lines
        self._log = log
        self._shape_of = dict(zip(lines.keys, shape, strict=True))  # (by the line's bytes)
        self.unit_lines: Int64s = array("q")

    def __getitem__(self, record: int) -> bytes:
        return self._shape_of[self._log.record(record)]


class Units(NamedTuple):
    """The records seen as units: ``line_kind[r]`` is record r's kind or event (an id,
    events and kinds numbered together in the order they first occur), ``first[id]``
    the record where it first occurs, ``frequency[id]`` how often and ``last[id]`` the
    record where it last occurs; ``starts``/``ends`` each unit's records; ``new``
    whether a unit holds a first occurrence; ``verbatim`` whether it is an event."""

    line_kind: memoryview  # (int64)
    first: array[int]
    frequency: array[int]
    starts: array[int] | memoryview
    ends: UnitEnds
    new: bytearray
    verbatim: bytearray
    shapes: list[tuple[int, tuple[bytes, ...]]]  # each kind's shape (see _shape)
    previous: memoryview  # (int64) the record's key's previous occurrence (-1: none)
    severity: bytearray  # per new unit: FATAL, ERROR (or no level word), WARN (see severity)
    event_kinds: EventShapes  # a verbatim record's shape (its kind, or its family)
    last: array[int]


def units_of(
    log: WholeInput,
    verbatim: bytearray,
    heads: bytearray,
    keys: KeyOptions,
    event_fields: Sequence[str],
    engine: Engine,
) -> Units:
    """Kinds, events and units of the whole input. A record's kind is told by its key's
    keyed 128-bit hash, an event by the keyed hash of its key under another key (the
    two are never taken for each other); the kernel hashes and numbers them all in a
    few calls, an event's key is made once per distinct verbatim line, and the kinds'
    text is made only for the records that show one first, and for events."""
    kinds, event_hashes, lines = _event_keys(log, verbatim, keys, event_fields, engine)
    found = engine.occurrences(_merged(kinds, event_hashes, verbatim, engine))
    # (the two a record, read in place; the three an id, as arrays)
    ids, previous = (memoryview(part).cast("q") for part in found[:2])
    firsts, frequency, last = (array("q", part) for part in found[2:])
    shapes, event_kinds = _kind_texts(log, verbatim, firsts, lines, keys, engine)
    starts, ends = _unit_bounds(verbatim, heads, engine)
    event_kinds.unit_lines = _unit_lines(verbatim, heads, lines, engine)
    new = bytearray(len(starts))
    for record in firsts:  # (the unit that holds each first occurrence)
        new[bisect_right(starts, record) - 1] = 1
    flags = bytearray(engine.take(verbatim, 1, starts))  # (each unit's: its first's)
    ranks = bytearray([NOT_AN_EVENT]) * len(starts)
    for unit in ones(new):  # (the rank orders the new events only)
        if flags[unit]:
            ranks[unit] = severity(log.record(starts[unit]))
    return Units(
        ids, firsts, frequency, starts, ends, new, flags, shapes, previous, ranks,
        event_kinds, last,
    )  # fmt: skip


EVENT_SEED = 1  # (an event's key is hashed under SEED ^ EVENT_SEED: apart from kinds)


class VerbatimLines(NamedTuple):
    """The distinct verbatim lines: each one's first record (ascending), its event's key
    (by the line) and its kind's text; and each verbatim record's line (in order)."""

    firsts: array[int]
    keys: dict[bytes, bytes]
    kinds: list[bytes]
    ids: array[int]


def _event_keys(
    log: WholeInput,
    verbatim: bytearray,
    options: KeyOptions,
    event_fields: Sequence[str],
    engine: Engine,
) -> tuple[bytes | bytearray, bytes, VerbatimLines]:
    """Each record's kind hash (16 bytes; a verbatim record's need not be: its line's
    kind is in the lines), each verbatim record's event hash (16 bytes, in order), and
    the distinct verbatim lines, each made into its event's key (the ``event_fields``
    masked) and its kind once (a traceback's lines recur)."""
    kind_hash = key_maker(kind_options(options), engine.kernel, SEED)
    hashes: bytes | bytearray | None = kind_hash.bounds_hashes(log.data, log.bounds, verbatim)
    if hashes is None or len(hashes) != 16 * log.count:  # (split and hashed here)
        hashes = b"".join(
            kind_hash.hashes(log.records(batch, min(log.count, batch + BATCH)))
            for batch in range(0, log.count, BATCH)
        )
    classes = ",".join(name for name in event_fields if name in CLASSES)
    steps = (*options.key_steps, ("normalize", classes)) if classes else options.key_steps
    keyed = options.keyed or bool(classes)
    events = key_maker(options._replace(key_steps=steps), engine.kernel, 0) if keyed else None
    found = engine.distinct_records(log.data, log.bounds, verbatim)
    ids, firsts = array("q", found[0]), array("q", found[1])
    distinct = log.picked(firsts)
    event_keys = events.keys(distinct) if events is not None else distinct
    masked = [mask_noise(key, event_fields) for key in event_keys]
    event_hashes = key_maker(KeyOptions(), engine.kernel, SEED ^ EVENT_SEED).hashes(masked)
    lines = VerbatimLines(
        firsts,
        dict(zip(distinct, masked, strict=True)),
        kind_keys(options, engine.kernel).keys(distinct),
        ids,
    )
    return hashes, engine.take(event_hashes, 16, ids), lines  # (each record's)


def _kind_texts(
    log: WholeInput,
    verbatim: bytearray,
    firsts: array[int],
    lines: VerbatimLines,
    keys: KeyOptions,
    engine: Engine,
) -> tuple[list[tuple[int, tuple[bytes, ...]]], EventShapes]:
    """Each id's shape (from its first record: its kind's text, or its event's key), and
    the verbatim records' shapes: each line's kind's family (equal lines are of one
    kind)."""
    family = families(lines.kinds)
    kind_firsts = [record for record in firsts if not verbatim[record]]
    made = kind_keys(keys, engine.kernel).keys(log.picked(kind_firsts))
    kind_shape = dict(zip(kind_firsts, made, strict=True))
    shapes = [
        _shape(b"v" + lines.keys[log.record(r)]) if verbatim[r] else _shape(b"k" + kind_shape[r])
        for r in firsts
    ]
    return shapes, EventShapes(log, [family[kind] for kind in lines.kinds], verbatim, lines)


def _merged(
    kinds: bytes | bytearray, events: bytes, verbatim: bytearray, engine: Engine
) -> bytearray:
    """The kind hashes with the verbatim records' replaced by their events' (in order;
    written in place where ``kinds`` is a bytearray)."""
    merged = kinds if isinstance(kinds, bytearray) else bytearray(kinds)
    engine.put(merged, 16, verbatim, events)
    return merged


_FLIP = bytes.maketrans(b"\x00\x01", b"\x01\x00")


def _unit_bounds(
    verbatim: bytearray, heads: bytearray, engine: Engine
) -> tuple[array[int] | memoryview, UnitEnds]:
    """Each unit's first and last record: a verbatim head with the verbatim records
    that continue it (verbatim, not a head), or one record."""
    starts = engine.flag_positions(_unit_starting(verbatim, heads))
    return starts, UnitEnds(starts, len(verbatim))


def _unit_lines(
    verbatim: bytearray, heads: bytearray, lines: VerbatimLines, engine: Engine
) -> memoryview:
    """The line of each verbatim unit's first record, in order: the line of each head
    among the verbatim records (a verbatim unit starts at a head)."""
    places = engine.flag_positions(bytes(compress(heads, verbatim)))
    return memoryview(engine.take(memoryview(lines.ids).cast("B"), 8, places)).cast("q")


def _unit_starting(verbatim: bytearray, heads: bytearray) -> bytes:
    """A byte a record: 1 where a unit starts (not a verbatim record continuing one)."""
    continued = int.from_bytes(verbatim, "little") & ~int.from_bytes(heads, "little")
    return continued.to_bytes(len(verbatim), "little").translate(_FLIP)


# An event's severity, the order in which events earn their place: the line's highest
# level word (FATAL and its kin, then ERROR and its kin, then WARN); a line kept for
# another reason (an exception name, a traceback, a --keep pattern) ranks with ERROR.
FATAL, ERROR, WARNING, NOT_AN_EVENT = 0, 1, 2, 3
_FATAL = re.compile(
    rb"\b(?:FATAL|Fatal|fatal|CRITICAL|Critical|CRIT|PANIC|Panic|panic|EMERG|ALERT)\b"
)
_ERROR = re.compile(LEVELS["error"].encode())
_WARNING = re.compile(LEVELS["warning"].encode())


def severity(record: bytes) -> int:
    """FATAL, ERROR or WARNING: the rank of the event a verbatim line heads."""
    if _FATAL.search(record):
        return FATAL
    if _WARNING.search(record) and not _ERROR.search(record):
        return WARNING
    return ERROR


def _interleaved(*orders: list[int]) -> list[int]:
    """The items of the lists taken in turn (each item once, where it first comes)."""
    seen: set[int] = set()
    out: list[int] = []
    for row in zip(*orders, strict=True):
        for item in row:
            if item not in seen:
                seen.add(item)
                out.append(item)
    return out


def ranked_units(units: Units) -> tuple[list[int], int, int, int]:
    """The new units in rank order (indices into ``units.starts``): new events by
    severity (FATAL, ERROR, WARN), each severity's most frequent and most recent in
    turn, one of each shape (kind of line); then new kinds, most frequent and rarest in
    turn; then the events of a shape already shown; how many events and kinds, and
    where the kinds begin in the order."""
    fresh = list(ones(units.new))
    events = [u for u in fresh if units.verbatim[u]]
    kinds = [u for u in fresh if not units.verbatim[u]]

    def often(unit: int) -> int:
        return -units.frequency[units.line_kind[units.starts[unit]]]

    def recent(unit: int) -> int:  # (the last line of its kind or event)
        return -units.last[units.line_kind[units.starts[unit]]]

    # FATAL events first, then ERROR, then WARN; within each, the most frequent and the
    # most recent in turn, one event of each shape (its kind of line) before any second
    ranked: list[int] = []
    again: list[int] = []  # (the events of a shape already shown: after the kinds)
    for rank in (FATAL, ERROR, WARNING):
        members = [u for u in events if units.severity[u] == rank]
        shown: set[bytes] = set()
        for unit in _interleaved(sorted(members, key=often), sorted(members, key=recent)):
            shape = units.event_kinds[units.starts[unit]]
            (again if shape in shown else ranked).append(unit)
            shown.add(shape)
    groups: dict[tuple[int, tuple[bytes, ...]], list[int]] = {}
    for unit in kinds:
        groups.setdefault(units.shapes[units.line_kind[units.starts[unit]]], []).append(unit)
    # one kind of each shape before a second of any: the shapes most frequent first,
    # each its kinds most frequent and rarest in turn
    rows = [
        _interleaved(sorted(members, key=often), sorted(members, key=lambda u: -often(u)))
        for members in sorted(groups.values(), key=lambda m: sum(map(often, m)))
    ]
    return ranked + _in_turn(rows) + again, len(events), len(kinds), len(ranked)


NOTED = 3  # the events of one shape from which its example gets a note (see below)


def shape_groups(units: Units, ranked: list[int]) -> dict[int, list[int]]:
    """Each error shape (an event's kind of line) that holds NOTED events or more: its
    example, the unit of the shape ranked first, and the first record of every unit of
    the shape, in input order (what the example's note counts and names). A shape of
    two events gets none: its note would name one value, where its second event,
    shown, says more for about the same tokens."""
    members: dict[bytes, list[int]] = {}
    shapes = units.event_kinds
    for unit, line in zip(ones(units.verbatim), shapes.unit_lines, strict=True):
        members.setdefault(shapes.shape[line], []).append(units.starts[unit])
    groups: dict[int, list[int]] = {}
    for unit in ranked:
        if not units.verbatim[unit]:
            continue
        starts = members.pop(units.event_kinds[units.starts[unit]], None)
        if starts is not None and len({units.line_kind[s] for s in starts}) >= NOTED:
            groups[unit] = starts
    return groups


def _in_turn(rows: list[list[int]]) -> list[int]:
    """Item k of every row in row order, for k = 0, 1, ... (a row that is done is
    passed over), in time linear in the items: a zip_longest would pad every short row
    to the longest (on the man pages, 9 of a run's 10 seconds)."""
    out: list[int] = []
    live = [row for row in rows if row]
    depth = 0
    while live:  # (each row here has an item at this depth: linear in all)
        out.extend(row[depth] for row in live)
        depth += 1
        live = [row for row in live if len(row) > depth]
    return out


def _shape(key: bytes) -> tuple[int, tuple[bytes, ...]]:
    """A kind's shape, coarser than the kind: its number of words and its first two
    words made of letters only (a log's message type, most often)."""
    words = key[1:].split()
    fixed = [w for w in words if w.rstrip(b":,").isalpha()]
    return len(words), tuple(fixed[:2])


def context_order(units: Units, anchors: list[int], shown: list[int], count: int) -> list[int]:
    """The records outside the ``shown`` units, nearest to one of the ``anchors``
    units first (ties: the earlier): the lines around the events, as ``grep -C``
    would show them, then the rest."""
    anchor = bytearray(count)
    taken = bytearray(count)
    for flags, chosen in ((anchor, anchors), (taken, shown)):
        for unit in chosen:
            start, end = units.starts[unit], units.ends[unit]
            flags[start : end + 1] = b"\x01" * (end - start + 1)
    far = count + 1
    distance = array("q", [far]) * count
    near = far
    for record in range(count):
        near = 0 if anchor[record] else near + 1
        distance[record] = near
    near = far
    for record in range(count - 1, -1, -1):
        near = 0 if anchor[record] else near + 1
        distance[record] = min(distance[record], near)
    rest = [r for r in range(count) if not taken[r]]
    return sorted(rest, key=distance.__getitem__)
