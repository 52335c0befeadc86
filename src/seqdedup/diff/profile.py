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

from array import array
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import islice, pairwise
from operator import methodcaller
from typing import TYPE_CHECKING, NamedTuple

from seqdedup.base.engine import Engine
from seqdedup.base.lazy import LazySequence
from seqdedup.base.records import Int64s
from seqdedup.diff.stored import WRITTEN, StoredTexts
from seqdedup.engine.pykernel import HASH

if TYPE_CHECKING:
    from seqdedup.keys.maker import KeyMaker


class Part(NamedTuple):
    """One stretch of GOOD read in order: an input file, or a library row (``weight``:
    the row's sightings). ``keys``: its records' 16-byte key hashes one after another,
    ``record(k)`` its ``k``-th record (asked only for a key's first);
    ``streams``: each record's stream (None: one stream)."""

    keys: bytes
    record: Callable[[int], bytes]
    weight: int = 1
    streams: Sequence[Hashable] | None = None


class Chains(LazySequence[Sequence[int]]):
    """GOOD's sequences: chain ``c`` is ``members[starts[c]:starts[c + 1]]``, key ids in
    their order (two int32 arrays, not a list per chain)."""

    def __init__(self, members: array[int], starts: array[int]) -> None:
        self.members, self.starts = members, starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def _item(self, chain: int) -> Sequence[int]:
        return self.members[self.starts[chain] : self.starts[chain + 1]]

    def __iter__(self) -> Iterator[Sequence[int]]:
        members, starts = self.members, self.starts
        return (members[a:b] for a, b in pairwise(starts))


def in_stream_order(count: int, streams: Sequence[Hashable] | None) -> list[list[int]]:
    """Positions ``0 .. count - 1`` by stream, each stream's in input order (one list
    without streams)."""
    if streams is None:
        return [list(range(count))]
    by_stream: defaultdict[Hashable, list[int]] = defaultdict(list)
    for position, name in enumerate(streams):
        by_stream[name].append(position)
    return list(by_stream.values())


_ENDS_CR = methodcaller("endswith", b"\r")


class KindIndex:
    """The kind of each of GOOD's keys, hashed as the key's first record passes (with a
    final CR left out): 16 bytes a key id, so that which of BAD's kinds GOOD shows is
    found with no record of GOOD read back."""

    def __init__(self, kinds: KeyMaker, engine: Engine) -> None:
        self._kinds = kinds
        self._take = engine.take
        # (a part's hashes at a time, joined when read: a growing buffer moved by each
        # reallocation left the heap 9 MB larger on a log of 150,000 distinct lines)
        self._parts: list[bytes] = []

    @property
    def hashes(self) -> bytes:
        """Key id k's kind hash: bytes 16k to 16k + 16."""
        if len(self._parts) != 1:
            self._parts = [b"".join(self._parts)]
        return self._parts[0]

    def add_texts(self, texts: list[bytes]) -> None:
        """The next key ids' first records."""
        ended = [t.removesuffix(b"\r") for t in texts] if any(map(_ENDS_CR, texts)) else texts
        self._parts.append(self._kinds.hashes(ended))

    def add_records(self, part: bytes, bounds: Int64s, firsts: Int64s) -> None:
        """The next key ids' first records, ``part[bounds[2k]:bounds[2k + 1]]`` for each k
        of ``firsts``: hashed from the part where the engine can and no CR is in it."""
        if b"\r" not in part:
            pairs = self._take(memoryview(bounds).cast("B"), 16, firsts)
            hashed = self._kinds.bounds_hashes(part, memoryview(pairs).cast("q"))
            if hashed is not None:
                self._parts.append(bytes(hashed))
                return
        self.add_texts([part[bounds[2 * k] : bounds[2 * k + 1]] for k in firsts])


class GoodProfile:
    """GOOD's keys (in ``table``: each distinct key's id, count and neighbours; ``texts``:
    the text of each key's first record) and, once :meth:`settle` has run, its counts
    and sequences (``chains``; ``chain_of`` and ``index_of`` each key's place)."""

    def __init__(self, engine: Engine, kinds: KeyMaker) -> None:
        self.engine = engine  # (the engine that keeps the table and compares with it)
        self.table = engine.key_table()
        self.texts = StoredTexts()  # (close() lets it go)
        self.kinds = KindIndex(kinds, engine)  # (``kinds``: the kinds' key maker)
        self._gather = engine.gather
        self.inputs = 0
        self.hours: float | None = 0.0  # GOOD's time span (None: some input has no times)
        self.counts: Sequence[int] = array("q")
        self.chains = Chains(array("i"), array("i", [0]))
        self.chain_of: array[int] = array("i")
        self.index_of: array[int] = array("i")

    def add(self, parts: Iterable[Part]) -> None:
        """Count each part's keys and the neighbours of each (parts are independent:
        nothing links across them)."""
        table = self.table
        for part in parts:
            keys, count = part.keys, len(part.keys) // HASH
            weights = None if part.weight == 1 else (array("q", [part.weight]) * count).tobytes()
            streams = part.streams
            # (ids and counts in input order; with streams, the neighbours stream by stream)
            firsts = array("q", table.add(keys, weights, links=streams is None))
            self._add_texts(map(part.record, firsts))
            if streams is not None:
                for order in in_stream_order(count, streams):
                    hashes = b"".join([keys[p * HASH : p * HASH + HASH] for p in order])
                    table.add(hashes, bytes(8 * len(order)))  # (weight 0: counted above)

    def add_stretch(self, keys: bytes, part: bytes, bounds: Int64s) -> None:
        """A part of one stretch of GOOD (an input read in parts), continued by the next
        call until :meth:`end_stretch`; the ``k``-th key's record is
        ``part[bounds[2k]:bounds[2k + 1]]``."""
        firsts = memoryview(self.table.add(keys, ends=False)).cast("q")
        self.texts.extend_from(part, bounds, firsts, self._gather)
        self.kinds.add_records(part, bounds, firsts)

    def end_stretch(self) -> None:
        self.table.add(b"")

    def add_rows(
        self,
        keys: bytes,
        separator: bytes,
        weights: bytes | None,
        text_of: Callable[[int], bytes],
    ) -> None:
        """Many parts at once: their key hashes one after another, ``separator`` after
        each (a value no key takes), ``weights``: int64 per hash of ``keys`` (None: 1);
        ``text_of(k)``: the record of the ``k``-th hash."""
        self._add_texts(map(text_of, array("q", self.table.add(keys, weights, separator))))

    def _add_texts(self, texts: Iterator[bytes]) -> None:
        """The first records of the next key ids, kept and their kinds indexed, a few
        thousand at a time (a library's batch of rows may hold most of GOOD's keys)."""
        while batch := list(islice(texts, WRITTEN)):
            self.texts.extend(batch)
            self.kinds.add_texts(batch)

    def add_input(self, hours: float | None) -> None:
        """One more input of GOOD, and its time span (None: it has no timestamps)."""
        self.inputs += 1
        self.hours = None if hours is None or self.hours is None else self.hours + hours

    def settle(self) -> None:
        """GOOD's counts and sequences from the table (after the last :meth:`add`)."""
        counts, after, before = self.table.arrays()
        self.counts = array("q", counts)
        found = self.engine.chains(after, before)
        members, starts, chain_of, index_of = (array("i", part) for part in found)
        self.chains = Chains(members, starts)
        self.chain_of, self.index_of = chain_of, index_of

    def close(self) -> None:
        """Let the first records go (a temporary file, past a MiB of them)."""
        self.texts.close()

    def whole_enough(self, chain: Sequence[int]) -> bool:
        """A sequence of several records whose wholeness is evidence: GOOD shows it at
        least twice, or it is GOOD's only input's (a start-up runs once per input)."""
        return len(chain) >= 2 and self.counts[chain[0]] >= min(2, self.inputs)
