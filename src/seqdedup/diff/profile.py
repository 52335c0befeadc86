"""GOOD as ``seqdedup diff`` compares with it: each distinct key's count, and the
sequences GOOD always ran whole.

Records are keyed as in a run (16-byte key hashes, equal for equal keys: the run's
identity, docs/engine.md); each distinct key gets a small id. GOOD's *sequences* are
the chains of keys that always follow each other: key ``a`` links to key ``b`` when
every occurrence of ``a`` in GOOD is followed by ``b`` and every ``b`` preceded by
``a`` (in one stream, inside one input or library row). Following the links from a key
that none links to gives one sequence; every key is in exactly one (most alone). A
sequence of several keys ran whole every time GOOD shows it, so its keys' counts are
equal; no sequence can loop (each occurrence would need an earlier one without end).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import NamedTuple

EDGE = -1  # the start or end of a part (an input, a stream, a library row)
NONE = -2  # no neighbour seen yet
MANY = -3  # more than one neighbour


class Part(NamedTuple):
    """One stretch of GOOD read in order: an input file, or a library row (``weight``:
    the row's sightings). ``streams``: each record's stream (None: one stream)."""

    keys: Sequence[bytes]
    records: Sequence[bytes]
    weight: int = 1
    streams: Sequence[Hashable] | None = None


def in_stream_order(count: int, streams: Sequence[Hashable] | None) -> list[list[int]]:
    """Positions ``0 .. count - 1`` by stream, each stream's in input order (one list
    without streams)."""
    if streams is None:
        return [list(range(count))]
    by_stream: defaultdict[Hashable, list[int]] = defaultdict(list)
    for position, name in enumerate(streams):
        by_stream[name].append(position)
    return list(by_stream.values())


class GoodProfile:
    """GOOD's keys (``ids``: key -> id, ``counts``, the text of each key's first record)
    and, once :meth:`settle` has run, its sequences (``chains``; ``chain_of`` and
    ``index_of`` each key's place)."""

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}
        self.counts: list[int] = []
        self.texts: list[bytes] = []
        self.inputs = 0
        self.hours: float | None = 0.0  # GOOD's time span (None: some input has no times)
        self._next: list[int] = []
        self._before: list[int] = []
        self.chains: list[list[int]] = []
        self.chain_of: list[int] = []
        self.index_of: list[int] = []

    def add(self, parts: Iterable[Part]) -> None:
        """Count each part's keys and the neighbours of each (parts are independent:
        nothing links across them)."""
        for part in parts:
            ids = self._ids_of(part.keys, part.records.__getitem__)
            for key_id, many in Counter(ids).items():
                self.counts[key_id] += many * part.weight
            for order in in_stream_order(len(ids), part.streams):
                self._link([ids[position] for position in order])

    def add_rows(
        self,
        keys: Sequence[bytes],
        separator: bytes,
        weights: Sequence[int] | None,
        text_of: Callable[[int], bytes],
    ) -> None:
        """Many parts at once: their keys one after another, ``separator`` after each
        (a value no key takes), ``weights[k]`` the weight of ``keys[k]`` (None: 1);
        ``text_of(k)``: the record of ``keys[k]``."""
        ids = self._ids_of(keys, text_of, separator)
        counts = self.counts
        if weights is None:
            for key_id, many in Counter(ids).items():
                if key_id >= 0:
                    counts[key_id] += many
        else:
            for key_id, weight in zip(ids, weights, strict=True):
                if key_id >= 0:
                    counts[key_id] += weight
        self._link(ids)

    def add_input(self, hours: float | None) -> None:
        """One more input of GOOD, and its time span (None: it has no timestamps)."""
        self.inputs += 1
        self.hours = None if hours is None or self.hours is None else self.hours + hours

    def _ids_of(
        self, keys: Sequence[bytes], text_of: Callable[[int], bytes], separator: bytes = b""
    ) -> list[int]:
        """Each key's id (a new key: the next id; ``separator``: EDGE)."""
        ids, before = self.ids, len(self.ids)
        take, size = ids.setdefault, ids.__len__
        if separator:  # (taken as a key for the pass, as EDGE: the next id is one less)
            ids[separator] = EDGE
            found = [take(key, size() - 1) for key in keys]
            del ids[separator]
        else:
            found = [take(key, size()) for key in keys]
        if len(ids) > before:  # the new keys' first records, in id order
            first = dict(zip(reversed(found), range(len(found) - 1, -1, -1), strict=True))
            self.texts += [text_of(first[key_id]) for key_id in range(before, len(ids))]
            grown = len(ids) - before
            self.counts += [0] * grown
            self._next += [NONE] * grown
            self._before += [NONE] * grown
        return found

    def _link(self, ids: list[int]) -> None:
        """Note each key's neighbours in one stream of one part (EDGE: between parts)."""
        after, before = self._next, self._before
        previous = EDGE
        for key_id in [*ids, EDGE]:
            if key_id < 0:  # (the end of a part)
                if previous >= 0:
                    seen = after[previous]
                    if seen != EDGE:
                        after[previous] = EDGE if seen == NONE else MANY
                previous = EDGE
                continue
            seen = before[key_id]
            if seen != previous:
                before[key_id] = previous if seen == NONE else MANY
            if previous >= 0:
                seen = after[previous]
                if seen != key_id:
                    after[previous] = key_id if seen == NONE else MANY
            previous = key_id

    def settle(self) -> None:
        """GOOD's sequences from the links (after the last :meth:`add`)."""
        count = len(self.counts)
        after, before = self._next, self._before
        linked = [-1] * count
        has_link_in = bytearray(count)
        for key_id in range(count):
            follower = after[key_id]
            if follower >= 0 and follower != key_id and before[follower] == key_id:
                linked[key_id] = follower
                has_link_in[follower] = 1
        self.chain_of, self.index_of, self.chains = [0] * count, [0] * count, []
        for head in range(count):
            if not has_link_in[head]:
                chain: list[int] = []
                key_id = head
                while key_id >= 0:
                    self.chain_of[key_id] = len(self.chains)
                    self.index_of[key_id] = len(chain)
                    chain.append(key_id)
                    key_id = linked[key_id]
                self.chains.append(chain)

    def whole_enough(self, chain: list[int]) -> bool:
        """A sequence of several records whose wholeness is evidence: GOOD shows it at
        least twice, or it is GOOD's only input's (a start-up runs once per input)."""
        return len(chain) >= 2 and self.counts[chain[0]] >= min(2, self.inputs)
