"""BAD against GOOD's profile: what is new, what changed its rate, what broke; the rest
known (docs/diff.md gives each definition).

Which new records are shown is the engine's decision (:class:`seqdedup.engine.decisions.
Decisions` over BAD's keys at window W): a new record that, with its neighbours, repeats
new material shown before is counted, not shown again. A new key's first record is
always shown (a window can repeat only keys seen before). Everything else is counting
over key ids in BAD's stream order.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count, pairwise
from typing import Literal, NamedTuple, overload

from seqdedup.base.engine import Engine
from seqdedup.base.errors import InvalidValue, whole_number
from seqdedup.base.lazy import LazySequence
from seqdedup.config.groups import MAX_STREAM_WINDOW
from seqdedup.diff.changes import (
    EDGE,
    LONG_SEQUENCE,
    Broken,
    Change,
    Diff,
    Known,
    Line,
    New,
    Per,
    Rate,
    Values,
)
from seqdedup.diff.profile import GoodProfile, in_stream_order
from seqdedup.diff.values import ValueGroups
from seqdedup.engine.decisions import Decisions, Piece
from seqdedup.engine.pykernel import HASH, NONE

BATCH = 1 << 16  # keys the engine is fed at a time
SEP = -1  # between streams in stream order (and after the last)
NEW = NONE  # a key GOOD never shows (-2)
HOUR_AT_LEAST = 1.0  # hours each side spans before --per auto counts per hour


@dataclass(frozen=True)
class DiffOptions:
    """``window``: the engine's W for repeats of new material; ``min_bytes``: a
    repeat is folded only when its keys hold that many bytes; ``factor``: a rate change
    counts at this ratio either way; ``min_count``: ... and when the side it is more
    frequent on shows it that many times; ``per``: the rates' unit. A value the command
    line refuses is a ValueError here, in its words, before any work."""

    window: int = 1
    min_bytes: int = 0
    factor: float = 2.0
    min_count: int = 4
    per: Literal["auto", "input", "hour"] = "auto"

    def __post_init__(self) -> None:
        whole_number("--window-size", self.window, 1, MAX_STREAM_WINDOW)
        whole_number("--min-bytes", self.min_bytes, 0)
        factor = self.factor
        if isinstance(factor, bool) or not isinstance(factor, int | float):
            raise InvalidValue(f"--factor must be a number more than 1, not {factor!r}")
        if not 1.0 < factor < float("inf"):  # (nan too)
            raise InvalidValue(f"--factor must be a number more than 1, not {factor:g}")
        whole_number("--min-count", self.min_count, 1)
        if self.per not in ("auto", "input", "hour"):
            raise InvalidValue(f"--per must be auto, input or hour, not {self.per!r}")


class Bad(NamedTuple):
    """BAD as the comparison reads it: each record's key id in GOOD's profile (NEW for
    a key GOOD never shows) and the key hashes of the new ones by position (the others'
    are not kept: a million keys cost 57 MB), its text and stream (None: one), its key
    sizes (for ``min_bytes``), the timestamp finder and its time span."""

    ids: Sequence[int]
    new_keys: NewKeys
    record: Callable[[int], bytes]
    streams: Sequence[Hashable] | None = None
    sizes: Sequence[int] | None = None
    stamp: Callable[[bytes], str] = lambda record: ""
    hours: float | None = None
    records: Callable[[Sequence[int]], list[bytes]] | None = None  # (many at once)
    blank: bool | None = None  # (every record whitespace, found as read; None: not yet)

    def texts(self, positions: Sequence[int]) -> list[bytes]:
        """The records at ``positions``, read together where they can be."""
        if self.records is not None:
            return self.records(positions)
        return [self.record(p) for p in positions]


class NewKeys(Mapping[int, bytes]):
    """BAD's new records' key hashes by position: the positions in order (int64) and
    their 16-byte hashes one after another, 24 bytes a new record (a dict took about
    120: a BAD of a million records GOOD never shows held 120 MB of them)."""

    def __init__(self) -> None:
        self.positions = array("q")
        self._hashes: list[bytes] = []  # (a part's at a time, joined when read)

    def add(self, positions: array[int], hashes: bytes) -> None:
        """More new records, after those added before."""
        self.positions += positions
        self._hashes.append(hashes)

    def hashes(self) -> bytes:
        """All the hashes, in the order of the positions."""
        if len(self._hashes) != 1:
            self._hashes = [b"".join(self._hashes)]
        return self._hashes[0]

    def hash_list(self) -> list[bytes]:
        joined = self.hashes()
        return [joined[at : at + HASH] for at in range(0, len(joined), HASH)]

    def __getitem__(self, position: int) -> bytes:
        at = bisect_left(self.positions, position)
        if at == len(self.positions) or self.positions[at] != position:
            raise KeyError(position)
        return self.hashes()[HASH * at : HASH * at + HASH]

    def __iter__(self) -> Iterator[int]:
        return iter(self.positions)

    def __len__(self) -> int:
        return len(self.positions)


def key_ids(profile: GoodProfile, keys: bytes, first: int = 0) -> tuple[array[int], NewKeys]:
    """Key hashes (of records ``first``, ``first + 1``, ...) as the comparison takes
    them: their ids in the profile, and the new ones' keys by position."""
    found = array("i", profile.table.find(keys))
    new = array("q", places_of(NEW, found))
    fresh = NewKeys()
    fresh.add(array("q", [first + k for k in new]), profile.engine.take(keys, HASH, new))
    return found, fresh


def places_of(value: int, values: Sequence[int]) -> Iterator[int]:
    """Where ``value`` is in ``values``, in order (each found by a scan in C: no Python
    step per element; an int32 array's bytes searched as bytes)."""
    if isinstance(values, array) and values.typecode == "i":
        import re

        search = re.compile(re.escape(array("i", [value]).tobytes())).search
        with memoryview(values) as view:
            data = view.cast("B")
            found = search(data)
            while found is not None:
                at = found.start()
                if at % 4 == 0:  # (a match across two values is none)
                    yield at // 4
                found = search(data, at + (4 if at % 4 == 0 else 1))
            data.release()
        return
    at = -1
    try:
        while True:
            at = values.index(value, at + 1)
            yield at
    except ValueError:
        return


def compare(
    profile: GoodProfile, bad: Bad, options: DiffOptions, values: ValueGroups | None = None
) -> Diff:
    """The changes of ``bad`` against a settled ``profile``; the new records that are
    new ``values`` of kinds GOOD shows (seqdedup.diff.values) apart from the new."""
    values = values or ValueGroups({}, [], [], [], [])
    bad_ids = bad.ids
    rank: Sequence[int]
    order: Sequence[int]
    ranked: Sequence[int]
    if bad.streams is None:  # (stream order is input order: nothing made per record)
        order = _InputOrder(len(bad_ids))
        ranked = _int32(bad_ids)  # (no SEP after the last: every reader stops at the end)
        rank = range(len(bad_ids))
    else:
        streams = in_stream_order(len(bad_ids), bad.streams)
        order = [p for stream in streams for p in (*stream, SEP)]
        ranked = [bad_ids[p] if p >= 0 else SEP for p in order]
        rank = _ranks(order, len(bad_ids))
    view = _View(bad, order, ranked, rank)
    anchored: list[tuple[int, int, Change | None]] = []
    anchored += ((c.first - 1, 2, c) for c in _new(view, bad_ids, options, values.group_of))
    anchored += ((c.first - 1, 2, c) for c in _values(view, values))
    anchored += ((c.last, 0, c) for c in _broken(view, profile))  # (after its records)
    per = _per(options.per, profile, bad)
    rates = _rates(view, profile, bad_ids, options, per)
    anchored += ((c.first, 1, c) for c in rates if c.kind != "gone")
    anchored.sort(key=lambda item: (item[0], item[1]))
    changes = _with_known(anchored, len(bad_ids), list(bad.new_keys))
    changes += [c for c in rates if c.kind == "gone"]
    empty = bad.blank
    if empty is None:  # (stops at the first record that is not blank)
        empty = not any(bad.record(k).strip() for k in range(len(bad_ids)))
    return Diff(
        changes, len(bad_ids), profile.inputs, per, options.factor, options.min_count, empty
    )


def as_text(record: bytes) -> str:
    """A record as text, every byte kept (bytes that are not UTF-8 as surrogates: the
    text answer writes them back as they were)."""
    return record.decode("utf-8", "surrogateescape")


def _int32(values: Sequence[int]) -> array[int]:
    """``values`` as an int32 array (itself when it is one: no copy)."""
    return values if isinstance(values, array) and values.typecode == "i" else array("i", values)


class _InputOrder(LazySequence[int]):
    """Stream order of a BAD of one stream: rank r is position r, then SEP."""

    def __init__(self, size: int) -> None:
        self._size = size

    def __len__(self) -> int:
        return self._size + 1

    def _item(self, rank: int) -> int:
        return rank if rank < self._size else SEP

    @overload
    def __getitem__(self, rank: int) -> int: ...
    @overload
    def __getitem__(self, rank: slice) -> list[int]: ...
    def __getitem__(self, rank: int | slice) -> int | list[int]:
        if type(rank) is int and 0 <= rank < self._size:  # (a rank: no generic step)
            return rank
        return super().__getitem__(rank)

    def positions(self, ranks: Iterable[int]) -> list[int]:
        """The positions at ``ranks`` that hold a record (no Python step a rank)."""
        return [r for r in ranks if 0 <= r < self._size]


def _ranks(order: Sequence[int], size: int) -> list[int]:
    rank = [0] * size
    for r, position in enumerate(order):
        if position >= 0:
            rank[position] = r
    return rank


class _View:
    """BAD in stream order: ``order[r]`` the position at rank r (SEP between streams),
    ``ranked[r]`` its key id, ``rank[p]`` a position's rank."""

    def __init__(
        self, bad: Bad, order: Sequence[int], ranked: Sequence[int], rank: Sequence[int]
    ) -> None:
        self.bad, self.order, self.ranked, self.rank = bad, order, ranked, rank
        self._read: dict[int, bytes] = {}  # (records read ahead, by position)

    def positions(self, ranks: Iterable[int]) -> list[int]:
        """The positions at ``ranks`` that hold a record (SEP and past the ends left out)."""
        order = self.order
        if isinstance(order, _InputOrder):
            return order.positions(ranks)
        size = len(order)
        return [order[r] for r in ranks if 0 <= r < size and order[r] >= 0]

    def read_ahead(self, ranks: Iterable[int]) -> None:
        """Read the records at ``ranks`` together, for the lines asked for next."""
        self.read_here(self.positions(ranks))

    def read_here(self, positions: list[int]) -> None:
        """Read the records at ``positions`` together, for the lines asked for next."""
        read = self._read
        wanted = [p for p in positions if p not in read]
        read.update(zip(wanted, self.bad.texts(wanted), strict=True))

    def forget(self) -> None:
        """Let the records read ahead go."""
        self._read.clear()

    def record(self, position: int) -> bytes:
        found = self._read.get(position)
        return self.bad.record(position) if found is None else found

    def line(self, position: int) -> Line:
        return Line(position + 1, as_text(self.record(position)))

    def lines(self, ranks: Sequence[int]) -> tuple[Line, ...]:
        self.read_ahead(ranks)
        return tuple(Line(p + 1, as_text(self._read[p])) for p in self.positions(ranks))

    def stamp(self, position: int) -> str:
        return self.bad.stamp(self.record(position))


def _shown_flags(bad: Bad, options: DiffOptions, bad_ids: Sequence[int]) -> bytearray:
    """The engine's keep flag of each BAD record (window W, BAD's own streams); with
    ``min_bytes``, a run of repeats whose keys hold fewer bytes is kept. At W = 1 a
    record's flag depends on its own key alone: only the new records are fed."""
    streams, new_keys = bad.streams, bad.new_keys
    if options.window == 1 and options.min_bytes == 0:
        new = list(new_keys)  # (in input order)
        named = None if streams is None else [streams[p] for p in new]
        kept, _ = _decide(new_keys.hash_list(), named, 1, False)
        flags = bytearray(b"\x01") * len(bad_ids)
        for p, keep in zip(new, kept, strict=True):
            flags[p] = keep
        return flags
    # every record's key: a known one by its id (equal ids, equal keys), a new one by
    # its hash; the two never equal (their first byte)
    keys = [
        b"k%d" % key_id if key_id >= 0 else b"n" + new_keys[p] for p, key_id in enumerate(bad_ids)
    ]
    flags, runs = _decide(keys, streams, options.window, options.min_bytes > 0)
    if options.min_bytes > 0 and bad.sizes is not None:
        sizes, order = bad.sizes, in_stream_order(len(keys), streams)
        where = {p: (s, k) for s, stream in enumerate(order) for k, p in enumerate(stream)}
        for run in runs:
            stream, k = where[run.start]
            members = order[stream][k : k + run.length]
            if sum(sizes[p] for p in members) < options.min_bytes:
                for p in members:
                    flags[p] = 1
    return flags


def _decide(
    keys: Sequence[bytes], streams: Sequence[Hashable] | None, window: int, closed: bool
) -> tuple[bytearray, list[Piece]]:
    """The engine's decision-level call over ``keys``: keep flags (and where ``closed``,
    the closed runs, each one piece)."""
    decisions = Decisions(window, closed=closed)
    flags, found = bytearray(), []
    for at in range(0, len(keys), BATCH):
        part = None if streams is None else streams[at : at + BATCH]
        decided = decisions.feed(keys[at : at + BATCH], part)
        flags += bytes(decided.keep)
        found += decided.pieces
    decided = decisions.finish()
    return flags + bytes(decided.keep), found + decided.pieces


def _new(
    view: _View, bad_ids: Sequence[int], options: DiffOptions, values: dict[int, int]
) -> list[New]:
    """Stretches of new records (consecutive in their stream, the new ``values`` left
    out); one that only repeats new material is counted as ``again`` of the stretch its
    first key was shown in."""
    shown = _shown_flags(view.bad, options, bad_ids)
    order, ranked = view.order, view.ranked
    stretches: list[list[int]] = []
    for r in places_of(NEW, ranked):
        if order[r] in values:
            continue
        if stretches and stretches[-1][-1] == r - 1:
            stretches[-1].append(r)
        else:
            stretches.append([r])
    stretches.sort(key=lambda s: order[s[0]])
    placed = [view.positions(stretch) for stretch in stretches]  # (their positions)
    view.read_here([p for positions in placed for p in positions if shown[p]])
    made: list[New] = []
    home: dict[bytes, int] = {}  # a new key -> the stretch its first record was shown in
    keys = view.bad.new_keys
    for positions in placed:
        visible = [p for p in positions if shown[p]]
        if not visible:  # (its first key was shown before: it has a home)
            at = home[keys[positions[0]]]
            made[at] = made[at]._replace(
                again=made[at].again + 1,
                again_last=positions[-1] + 1,
                again_length=made[at].again_length + len(positions),
            )
            continue
        for p in visible:
            home.setdefault(keys[p], len(made))
        made.append(
            New(
                positions[0] + 1,
                positions[-1] + 1,
                len(positions),
                tuple(view.line(p) for p in visible),
                len(positions) - len(visible),
            )
        )
    view.forget()  # (the lines hold them now)
    return made


VALUES_SHOWN = 3  # records shown of a kind with new values


def _values(view: _View, values: ValueGroups) -> list[Values]:
    """One entry per kind with new values: its records (the first shown), the values."""
    members: dict[int, list[int]] = {}
    for position, group in sorted(values.group_of.items()):
        members.setdefault(group, []).append(position)
    return [
        Values(
            as_text(values.labels[group]),
            positions[0] + 1,
            positions[-1] + 1,
            len(positions),
            tuple(values.values[group]),
            values.distinct[group],
            tuple(view.line(p) for p in positions[:VALUES_SHOWN]),
            Line(0, as_text(values.examples[group])),
        )
        for group, positions in members.items()
    ]


def _broken(view: _View, profile: GoodProfile) -> list[Broken]:
    """Each whole-running sequence of GOOD that breaks in BAD: how it broke the first
    time, how many times.

    In stream order, a *fragment* is a maximal stretch of records of one sequence in
    its order (each the next of the one before); it is whole when it holds the whole
    sequence. Neighbouring fragments that are not whole form one *breaking* while their
    records are different records of the sequence (a reordering is one breaking)."""
    chains, chain_of, index_of = profile.chains, profile.chain_of, profile.index_of
    lengths = array("i", [len(c) if profile.whole_enough(c) else 0 for c in chains])
    ranked = view.ranked
    # (per sequence: its first breaking's ranks, how many breakings, the last one's
    # first rank; only the breaking being read holds its fragments, and their indices
    # once one joins it: a million ranks of breakings are not kept as lists)
    breakings: dict[int, _Breakings] = {}
    open_spans: list[range] = []  # the fragments of the breaking the last one is in
    open_indices: set[int] | None = None  # (their indices, made at the first join)
    before_end, before_chain = -2, -1  # the fragment before, when it was not whole
    # (a whole fragment between two others leaves a gap: they never join across it)
    for start, end in broken_fragments(profile.engine, ranked, chain_of, index_of, lengths):
        chain_id = chain_of[ranked[start]]
        first, last = index_of[ranked[start]], index_of[ranked[end]]
        seen = breakings.get(chain_id)
        ranks = range(start, end + 1)
        if seen is not None and before_end + 1 == start and before_chain == chain_id:
            if open_indices is None:
                open_indices = {index_of[ranked[r]] for span in open_spans for r in span}
            if open_indices.isdisjoint(range(first, last + 1)):  # (it joins the breaking)
                if seen.count == 1:
                    seen.first += ranks
                open_indices.update(range(first, last + 1))  # (a fragment runs in order)
                before_end = end
                continue
        if seen is None:
            breakings[chain_id] = _Breakings(list(ranks), 1, start)
        else:
            seen.count, seen.last_start = seen.count + 1, start
        open_spans, open_indices = [ranks], None
        before_end, before_chain = end, chain_id
    view.read_ahead(
        r
        for chain_id, seen in breakings.items()
        for r in _shown_ranks(seen.first, len(chains[chain_id]))
    )
    return [_broken_change(view, profile, chain_id, seen) for chain_id, seen in breakings.items()]


class _Breakings:
    """A sequence's breakings as its change reads them: the first one's ranks, their
    number and the rank the last one starts at."""

    __slots__ = ("count", "first", "last_start")

    def __init__(self, first: list[int], count: int, last_start: int) -> None:
        self.first, self.count, self.last_start = first, count, last_start


def broken_fragments(
    engine: Engine,
    ranked: Sequence[int],
    chain_of: array[int],
    index_of: array[int],
    lengths: array[int],
) -> list[tuple[int, int]]:
    """The fragments that are not their whole sequence, as (first rank, last rank):
    of the ranks whose key id (``ranked``, negative: no key of GOOD) is in a chain of
    ``lengths`` more than 0 (the engine's ``broken_fragments``)."""
    pairs = array("q", engine.broken_fragments(_int32(ranked), chain_of, index_of, lengths))
    return list(zip(pairs[::2], pairs[1::2], strict=True))


def _broken_change(view: _View, profile: GoodProfile, chain_id: int, seen: _Breakings) -> Broken:
    chain, ranked = profile.chains[chain_id], view.ranked
    ranks = seen.first
    indices = [profile.index_of[ranked[r]] for r in ranks]
    first, last = view.order[ranks[0]], view.order[ranks[-1]]
    around = range(ranks[0] - 1, ranks[-1] + 2)  # (the break with the line before, after)
    shown_ranks = _shown_ranks(ranks, len(chain))
    left_out = len(around) - len(shown_ranks)
    after = view.order[around[EDGE]] + 1 if left_out else 0
    shown = view.lines(shown_ranks)
    places = _places_shown(indices, len(chain))
    return Broken(
        _how(indices, len(chain)),
        len(indices),
        len(chain),
        profile.counts[chain[0]],
        seen.count,
        first + 1,
        last + 1,
        view.order[seen.last_start] + 1,
        shown,
        tuple(Line(0, as_text(text)) for text in profile.texts.pick([chain[k] for k in places])),
        view.stamp(first),
        tuple(k + 1 for k in places),
        left_out,
        after,
    )


def _shown_ranks(ranks: list[int], length: int) -> Sequence[int]:
    """The ranks a break shows of BAD: its records and the one before and after; of a
    sequence longer than LONG_SEQUENCE, only the first and last EDGE + 1 of them."""
    around = range(ranks[0] - 1, ranks[-1] + 2)
    if length > LONG_SEQUENCE and len(around) > 2 * (EDGE + 1):
        return [*around[: EDGE + 1], *around[-EDGE - 1 :]]
    return around


def _places_shown(indices: list[int], length: int) -> list[int]:
    """The places of GOOD's sequence a break shows: all of a sequence of LONG_SEQUENCE
    records or fewer; else the first and last EDGE and those within EDGE of where BAD's
    records (at ``indices``) came into the sequence or left it."""
    if length <= LONG_SEQUENCE:
        return list(range(length))
    places = set(range(EDGE)) | set(range(length - EDGE, length))
    came, left = [indices[0]], [indices[-1]]  # (where BAD came into the sequence, left it)
    for before, index in pairwise(indices):
        if index != before + 1:
            came.append(index)
            left.append(before)
    for index in came:
        places.update(range(index - EDGE, index + 1))
    for index in left:
        places.update(range(index, index + EDGE + 1))
    return sorted(place for place in places if 0 <= place < length)


def _how(
    indices: list[int], length: int
) -> Literal["cut short", "started part way", "partly", "reordered"]:
    if indices != sorted(indices):
        return "reordered"
    if indices != list(range(indices[0], indices[0] + len(indices))):
        return "partly"  # (records left out)
    if indices[0] == 0:
        return "cut short"
    return "started part way" if indices[-1] == length - 1 else "partly"


def _per(wanted: str, profile: GoodProfile, bad: Bad) -> Per:
    """Per hour when asked and both sides have times; with ``auto``, only when each
    side spans an hour or more (a rate per hour of a two-minute CI job says little)."""
    hours = (profile.hours or 0.0, bad.hours or 0.0)
    if wanted == "hour" and min(hours) > 0:
        return "hour"
    if wanted == "auto" and min(hours) >= HOUR_AT_LEAST:
        return "hour"
    return "input"


def _rates(
    view: _View, profile: GoodProfile, bad_ids: Sequence[int], options: DiffOptions, per: Per
) -> list[Rate]:
    """Sequences whose rate changed by ``factor`` or more (``min_count`` on the side
    where they are more frequent), and frequent ones BAD never shows."""
    chains, counts = profile.chains, profile.counts
    members, starts = chains.members, chains.starts
    in_bad = array("q", profile.engine.chain_counts(_int32(bad_ids), members, starts))
    good_units = (profile.hours or 0.0) if per == "hour" else float(max(profile.inputs, 1))
    bad_units = (view.bad.hours or 0.0) if per == "hour" else 1.0
    found: list[Rate] = []
    changed: list[tuple[Sequence[int], Literal["more", "less"], int, float, int, float]] = []
    for chain_id, bad in enumerate(in_bad):  # (each chain's BAD count: its most frequent key)
        good = counts[members[starts[chain_id]]]
        good_rate, bad_rate = good / good_units, bad / bad_units
        kind: Literal["more", "less", "gone", ""]
        if bad == 0:
            kind = "gone" if good >= options.min_count else ""
        elif bad_rate >= options.factor * good_rate and bad >= options.min_count:
            kind = "more"
        elif bad_rate * options.factor <= good_rate and good >= options.min_count:
            kind = "less"
        else:
            continue
        if not kind:
            continue
        chain = chains[chain_id]
        if kind == "gone":
            records = tuple(Line(0, as_text(text)) for text in profile.texts.pick(chain))
            found.append(Rate("gone", records, len(chain), good, good_rate, 0, 0.0, per, 0, 0))
            continue
        changed.append((chain, kind, good, good_rate, bad, bad_rate))
    # where each changed sequence's records are: one pass over BAD for their ids alone
    wanted = {key_id for chain, *_ in changed for key_id in chain}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for position in compress(count(), map(wanted.__contains__, bad_ids)) if wanted else ():
        first.setdefault(bad_ids[position], position)
        last[bad_ids[position]] = position
    for chain, kind, good, good_rate, bad, bad_rate in changed:
        at = min(first[k] for k in chain if k in first)
        end = max(last[k] for k in chain if k in last)
        records = _sequence_at(view, profile, chain, view.rank[at])
        found.append(
            Rate(
                kind,
                records,
                len(chain),
                good,
                good_rate,
                bad,
                bad_rate,
                per,
                at + 1,
                end + 1,
                view.stamp(at),
                view.stamp(end),
            )
        )
    return found


def _sequence_at(
    view: _View, profile: GoodProfile, chain: Sequence[int], start: int
) -> tuple[Line, ...]:
    """A sequence's records: BAD's from rank ``start`` while they follow it, GOOD's
    text (line 0) for the rest."""
    ranked, first = view.ranked, profile.index_of[view.ranked[start]]
    taken = 0
    end = len(ranked)
    while (
        first + taken < len(chain)
        and start + taken < end
        and ranked[start + taken] == chain[first + taken]
    ):
        taken += 1
    return tuple(
        view.line(view.order[start + k - first])
        if first <= k < first + taken
        else Line(0, as_text(profile.texts[key_id]))
        for k, key_id in enumerate(chain)
    )


def _with_known(
    anchored: list[tuple[int, int, Change | None]], total: int, unknown: Sequence[int]
) -> list[Change]:
    """The changes with the known records between them counted: a Known stretch from
    the first known record after a change to the last before the next. ``unknown``:
    the positions of BAD's records GOOD does not know, in order (few, as a rule: only
    they and the anchors are looked at, never every record)."""

    def known_before(position: int) -> int:
        return position - bisect_left(unknown, position)

    def known_from(position: int, step: int) -> int:
        """The nearest known position from ``position`` on (step 1) or back (-1)."""
        k = bisect_left(unknown, position)
        while 0 <= k < len(unknown) and unknown[k] == position:
            position, k = position + step, k + step
        return position

    changes: list[Change] = []
    cursor = 0
    for at, _, change in [*anchored, (total, 9, None)]:
        between = known_before(at) - known_before(cursor)
        if between > 0:
            changes.append(Known(known_from(cursor, 1) + 1, known_from(at - 1, -1) + 1, between))
        if change is None:
            break
        changes.append(change)
        # (a new record, or a new value, is not known)
        cursor = at + 1 if change.kind in ("new", "values") else at
    return changes
