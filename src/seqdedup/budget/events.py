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
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import compress
from types import ModuleType
from typing import NamedTuple

from seqdedup.base.kernel import SEED
from seqdedup.budget.input import LEVELS, Source
from seqdedup.config.normalize import CLASSES
from seqdedup.config.settings import Config
from seqdedup.keys.kind import families, kind_config, kind_keys
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


class Units(NamedTuple):
    """The records seen as units: ``line_kind[r]`` is record r's kind or event (an id,
    events and kinds numbered apart), ``first[id]`` the record where it first occurs
    and ``frequency[id]`` how often; ``starts``/``ends`` each unit's records; ``new``
    whether a unit holds a first occurrence; ``verbatim`` whether it is an event."""

    line_kind: array[int]
    first: list[int]
    frequency: list[int]
    starts: array[int]
    ends: array[int]
    new: bytearray
    verbatim: bytearray
    shapes: list[tuple[int, tuple[bytes, ...]]]  # each kind's shape (see _shape)
    previous: array[int]  # the record's key's previous occurrence (-1: none)
    severity: bytearray  # per unit: FATAL, ERROR (or no level word), WARN (see severity)
    event_kinds: dict[int, bytes]  # a verbatim record's shape (its kind, or its family)


def units_of(
    source: Source,
    verbatim: bytearray,
    heads: bytearray,
    config: Config,
    event_fields: Sequence[str],
    kernel: ModuleType | None,
) -> Units:
    """Kinds, events and units of the whole input. A record's kind is told by its key's
    keyed 128-bit hash (the kernel hashes a batch at once; the kinds' text is made only
    for the records that show one first, and for events); an event by its key."""
    line_kind, first, shapes, event_kinds = _kinds_and_events(
        source, verbatim, config, event_fields, kernel
    )
    fresh_flags = bytearray(len(line_kind))
    for record in first:
        fresh_flags[record] = 1
    last = [-1] * len(first)
    previous = [0] * len(line_kind)
    for record, found in enumerate(line_kind):
        previous[record] = last[found]
        last[found] = record
    frequency = [0] * len(first)
    for found, many in Counter(line_kind).items():
        frequency[found] = many
    starts, ends, new, flags = array("q"), array("q"), bytearray(), bytearray()
    ranks = bytearray()
    for start, end in _unit_bounds(verbatim, heads):
        starts.append(start)
        ends.append(end)
        new.append(any(fresh_flags[start : end + 1]))
        flags.append(verbatim[start])
        ranks.append(severity(source.record(start)) if verbatim[start] else NOT_AN_EVENT)
    return Units(
        line_kind, first, frequency, starts, ends, new, flags, shapes, array("q", previous), ranks,
        _shapes(event_kinds),
    )  # fmt: skip


def _kinds_and_events(
    source: Source,
    verbatim: bytearray,
    config: Config,
    event_fields: Sequence[str],
    kernel: ModuleType | None,
) -> tuple[array[int], list[int], list[tuple[int, tuple[bytes, ...]]], dict[int, bytes]]:
    """Each record's id (its kind's, or for a verbatim record its event's; numbered in
    the order they first occur), the record where each id first occurs, each id's
    shape, and each verbatim record's kind."""
    kind_text = kind_keys(config, kernel)
    kind_hash = key_maker(kind_config(config), kernel, SEED)
    classes = ",".join(name for name in event_fields if name in CLASSES)
    steps = (*config.key_steps, ("normalize", classes)) if classes else config.key_steps
    keyed = config.keyed or bool(classes)
    events = key_maker(config._replace(key_steps=steps), kernel, 0) if keyed else None
    ids: dict[bytes, int] = {}  # (b"k" and a kind's hash, or b"v" and an event's key)
    line_kind, first, shapes = array("l"), list[int](), list[tuple[int, tuple[bytes, ...]]]()
    event_kinds: dict[int, bytes] = {}
    kind_texts: dict[bytes, bytes] = {}  # (a kind's hash key: its text)
    for batch in range(0, source.count, BATCH):
        records = source.records(batch, min(source.count, batch + BATCH))
        hashes = kind_hash.hashes(records)
        keys = [b"k" + hashes[at : at + 16] for at in range(0, len(hashes), 16)]
        picked = list(compress(range(len(records)), verbatim[batch : batch + len(records)]))
        picked_records = [records[k] for k in picked]
        # (each distinct kind's text made once: from the first record that shows it)
        wanted = {keys[k]: k for k in reversed(picked) if keys[k] not in kind_texts}
        made = kind_text.keys([records[k] for k in wanted.values()])
        kind_texts.update(zip(wanted, made, strict=True))
        event_kinds.update((batch + k, kind_texts[keys[k]]) for k in picked)
        event_keys = events.keys(picked_records) if events is not None else picked_records
        for k, key in zip(picked, event_keys, strict=True):
            keys[k] = b"v" + mask_noise(key, event_fields)
        fresh = []  # (the records whose key comes first here)
        for k, key in enumerate(keys):
            found = ids.get(key)
            if found is None:
                found = ids[key] = len(ids)
                fresh.append(k)
            line_kind.append(found)
        kinds_met = iter(kind_text.keys([records[k] for k in fresh if keys[k][0] == ord("k")]))
        for k in fresh:
            first.append(batch + k)
            shapes.append(_shape(keys[k] if keys[k][0] == ord("v") else b"k" + next(kinds_met)))
    return line_kind, first, shapes, event_kinds


def _shapes(event_kinds: dict[int, bytes]) -> dict[int, bytes]:
    """Each verbatim record's shape: its kind, or its family where the log's error kinds
    of one form take more than one word at a place (a user name: ``Invalid user <...>
    from <IP>``; seqdedup.keys.kind.families)."""
    family = families(event_kinds.values())
    return {record: family[kind] for record, kind in event_kinds.items()}


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


def _unit_bounds(verbatim: bytearray, heads: bytearray) -> Iterator[tuple[int, int]]:
    """Each unit's first and last record: a verbatim head with the verbatim records
    that continue it, or one record."""
    count, at = len(verbatim), 0
    while at < count:
        end = at
        if verbatim[at]:
            while end + 1 < count and verbatim[end + 1] and not heads[end + 1]:
                end += 1
        yield at, end
        at = end + 1


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
    last: dict[int, int] = {}
    for unit, start in enumerate(units.starts):
        last[units.line_kind[start]] = unit
    events = [u for u in range(len(units.starts)) if units.new[u] and units.verbatim[u]]
    kinds = [u for u in range(len(units.starts)) if units.new[u] and not units.verbatim[u]]

    def often(unit: int) -> int:
        return -units.frequency[units.line_kind[units.starts[unit]]]

    def recent(unit: int) -> int:
        return -last[units.line_kind[units.starts[unit]]]

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
    for unit, start in enumerate(units.starts):
        if units.verbatim[unit]:
            members.setdefault(units.event_kinds[start], []).append(start)
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
