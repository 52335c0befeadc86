"""The kernel's array functions in Python: the Python engine's twins of what
``csrc/`` computes over buffers of records, hashes and ids, with the same arguments,
answers and refusals (:class:`seqdedup.engine.choice.PythonEngine` names them; the
tests hold each against the kernel's function and against a literal reading).

The twins of the record functions (``record_bounds``, ``take``, ``put``, ``gather``,
``flag_positions``) live with the records in :mod:`seqdedup.base.records`, the token
counts in :mod:`seqdedup.base.tokens` and the normalising scans in
:mod:`seqdedup.config.normalize`: those layers need them without an engine.
"""

from __future__ import annotations

import mmap
import re
import struct
from array import array
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise

from seqdedup.base.engine import ChainsFound, Numbered
from seqdedup.base.records import Buffer, Int64s
from seqdedup.config.markerfields import default_marker

EDGE = -1  # the start or end of a part (an input, a stream, a library row)
NONE = -2  # no neighbour seen yet (and, in KeyTable.find, a key the table lacks)
MANY = -3  # more than one neighbour
HASH = 16  # bytes of a key hash
KEY = HASH  # bytes of one record's key hash (two 64-bit lanes)
BLOCK = 4096  # records compared at once against a repeated sequence


# -- the budget's: levels, tracebacks, numbering, counting ------------------------------

HITS_BLOCK = 1 << 24  # input bytes folded to lower case at a time (Python)


def python_literal_hits(
    data: bytes | mmap.mmap,
    bounds: Int64s,
    floating: tuple[bytes, ...],
    anchored: tuple[bytes, ...],
) -> bytes:
    """For each record (``data[bounds[2k]:bounds[2k + 1]]``), 1 when its bytes with
    ASCII letters in lower case hold one of the ``floating`` literals or start with one
    of the ``anchored`` ones (all in lower case), else 0; searched with ``find`` over
    blocks of whole records folded at once."""
    count = len(bounds) // 2
    flags = bytearray(count)
    starts = bounds[0::2]
    first = 0
    while first < count:
        offset = bounds[2 * first]
        last = max(first + 1, bisect_right(starts, offset + HITS_BLOCK, first))  # (past)
        block = data[offset : bounds[2 * last - 1]].lower()
        for literal in floating:
            at = block.find(literal)
            while at >= 0:
                record = bisect_right(starts, offset + at, first, last) - 1
                end = bounds[2 * record + 1] - offset
                if at + len(literal) <= end:  # (inside the record, not across its end)
                    flags[record] = 1
                    at = block.find(literal, end)
                else:
                    at = block.find(literal, at + 1)
        if anchored:  # (at each record's start: a search would stop at every space)
            width = max(map(len, anchored))
            for record in range(first, last):
                at, end = bounds[2 * record] - offset, bounds[2 * record + 1] - offset
                if block[at : min(end, at + width)].startswith(anchored):
                    flags[record] = 1
        first = last
    return bytes(flags)


def python_spread_tracebacks(
    data: Buffer, bounds: Int64s, flags: bytearray, indented: bytes
) -> bytes:
    """Each flagged record followed by what continues it, the indented records after it
    and after a line that starts ``Traceback`` the one that ends them (the exception's
    own line), flagged in place; the heads returned: the flags as they were, but not
    there. Left to right: a continuation's own flag starts nothing."""
    heads = bytearray(flags)
    count = len(flags)
    at = flags.find(1)
    while at >= 0:
        end = indented.find(0, at + 1)
        end = count if end < 0 else end  # (the continuation: records at + 1 .. end - 1)
        if end < count and _TRACEBACK.match(data, bounds[2 * at], bounds[2 * at + 1]):
            end += 1  # (the exception's own line)
        if end > at + 1:
            flags[at + 1 : end] = b"\x01" * (end - at - 1)
            heads[at + 1 : end] = bytes(end - at - 1)
        at = flags.find(1, end)
    return bytes(heads)


_TRACEBACK = re.compile(rb"\s*Traceback")  # (a line that starts one, after white space)


def python_occurrences(hashes: bytes | bytearray) -> Numbered:
    """Per 16-byte hash its id (0, 1, ... in the order of first occurrence) and the
    position of the same hash before it (-1: none); per id its first position, count
    and last position: int64 arrays as bytes."""
    hashes = bytes(hashes)  # (a bytearray's slices are no keys)
    numbers: dict[bytes, int] = {}
    ids, previous = array("q"), array("q")
    firsts, counts, lasts = array("q"), array("q"), array("q")
    for position in range(len(hashes) // 16):
        found = numbers.setdefault(hashes[16 * position : 16 * position + 16], len(numbers))
        if found == len(firsts):
            firsts.append(position)
            counts.append(0)
            lasts.append(-1)
        ids.append(found)
        previous.append(lasts[found])
        lasts[found] = position
        counts[found] += 1
    return ids.tobytes(), previous.tobytes(), firsts.tobytes(), counts.tobytes(), lasts.tobytes()


def python_tally(ids: array[int], first: int, last: int, size: int, top: int) -> tuple[int, bytes]:
    """Of the ``ids`` (each below ``size``) at ``first`` .. ``last``: how many distinct,
    and the ``top`` most frequent as int64 (id, count) pairs, ties in the order first
    met."""
    counts = Counter(ids[first : last + 1])
    if not all(0 <= found < size for found in counts):
        raise ValueError("tally: an id outside 0 .. size - 1")
    pairs = array("q", (n for pair in counts.most_common(top) for n in pair))
    return len(counts), pairs.tobytes()


def python_distinct_records(
    data: Buffer, bounds: Int64s, flags: bytes | bytearray
) -> tuple[bytes, bytes]:
    """Of the records whose flag is set (record k is ``data[bounds[2k]:bounds[2k+1]]``),
    in order, each one's id by its bytes (0, 1, ... in the order of first occurrence);
    per id the record where it first occurs: int64 arrays as bytes."""
    numbers: dict[bytes, int] = {}
    ids, firsts = array("q"), array("q")
    for record in _ones(flags):
        number = numbers.setdefault(
            bytes(data[bounds[2 * record] : bounds[2 * record + 1]]), len(numbers)
        )
        if number == len(firsts):
            firsts.append(record)
        ids.append(number)
    return ids.tobytes(), firsts.tobytes()


def _ones(flags: bytes | bytearray) -> Iterator[int]:
    at = flags.find(1)
    while at >= 0:
        yield at
        at = flags.find(1, at + 1)


# -- seqdedup diff's: GOOD's key table and sequences, BAD's broken fragments -----------


class KeyTable:
    """Each distinct key hash's id (the next small number), count and one neighbour
    before and after it (EDGE, NONE or MANY when not one key); the Python twin of the
    kernel's ``KeyTable`` (csrc/keytable.c), same names, same answers."""

    def __init__(self) -> None:
        self._ids: dict[bytes, int] = {}
        self._counts = array("q")
        self._after = array("i")
        self._before = array("i")
        self._open = EDGE  # the last key of a stretch the next add continues

    def __len__(self) -> int:
        return len(self._ids)

    def add(
        self,
        hashes: bytes,
        weights: bytes | None = None,
        separator: bytes | None = None,
        links: bool = True,
        ends: bool = True,
    ) -> bytes:
        """Count one stretch of key hashes (``weights``: int64 each, else 1; the
        ``separator`` hash ends a stretch and starts the next) and, with ``links``, note
        neighbours (``ends`` False: the next call continues the stretch); the first
        position of each new id (int64 bytes, in id order)."""
        ids, counts, after, before = self._ids, self._counts, self._after, self._before
        firsts = array("q")
        weight = array("q", weights) if weights is not None else None
        previous, self._open = self._open, EDGE
        if previous >= 0 and not links:  # (an open stretch closed here)
            after[previous] = EDGE if after[previous] in (NONE, EDGE) else MANY
            previous = EDGE
        for k in range(len(hashes) // HASH + 1):
            key = hashes[k * HASH : k * HASH + HASH]
            if not key and not ends and links:
                self._open = previous
                break
            if not key or key == separator:
                if links and previous >= 0 and after[previous] != EDGE:
                    after[previous] = EDGE if after[previous] == NONE else MANY
                previous = EDGE
                continue
            key_id = ids.setdefault(key, len(ids))
            if key_id == len(counts):
                firsts.append(k)
                counts.append(0)
                after.append(NONE)
                before.append(NONE)
            counts[key_id] += 1 if weight is None else weight[k]
            if not links:
                continue
            if before[key_id] != previous:
                before[key_id] = previous if before[key_id] == NONE else MANY
            if previous >= 0 and after[previous] != key_id:
                after[previous] = key_id if after[previous] == NONE else MANY
            previous = key_id
        return firsts.tobytes()

    def find(self, hashes: bytes, /) -> bytes:
        """Each key's id (int32 bytes), NONE for a key the table lacks."""
        get = self._ids.get
        keys = (hashes[k : k + HASH] for k in range(0, len(hashes), HASH))
        return array("i", [get(key, NONE) for key in keys]).tobytes()

    def arrays(self) -> tuple[bytes, bytes, bytes]:
        """(counts, after, before) per id: int64, int32, int32 bytes."""
        return self._counts.tobytes(), self._after.tobytes(), self._before.tobytes()


def python_chain_counts(ids: array[int], members: array[int], starts: array[int]) -> bytes:
    """The kernel's ``chain_counts`` in Python: per chain (``members[starts[c]:starts[c +
    1]]``), the most times one of its keys occurs in ``ids`` (negative ids skipped);
    int64 bytes."""
    keys, bounds = array("i", members), array("i", starts)
    if not bounds or bounds[0] != 0 or bounds[-1] != len(keys) or list(bounds) != sorted(bounds):
        raise ValueError("the starts run from 0 to the members' end")
    if any(not 0 <= key < len(keys) for key in keys):
        raise ValueError("a member past the key ids")
    seen = Counter(key for key in array("i", ids) if key >= 0)
    if seen and max(seen) >= len(keys):
        raise ValueError("a key id past the members")
    return array(
        "q", [max((seen[k] for k in keys[a:b]), default=0) for a, b in pairwise(bounds)]
    ).tobytes()


def python_chains(after_bytes: bytes, before_bytes: bytes) -> ChainsFound:
    """The kernel's ``chains`` in Python: key ``a`` links to ``b`` when ``a``'s one
    neighbour after is ``b`` and ``b``'s one neighbour before is ``a``; each path of
    links is a chain, from each key no link enters, in id order (a cycle, which a
    table never makes, is cut where it is entered). (members, starts, chain_of,
    index_of) as int32 bytes."""
    after, before = array("i", after_bytes), array("i", before_bytes)
    count = len(after)
    if len(before) != count:
        raise ValueError("one neighbour after and one before per key id")
    if any(v >= count for v in after) or any(v >= count for v in before):
        raise ValueError("a neighbour past the key ids")
    linked = array("i", [-1]) * count
    state = bytearray(count)  # 0: no link in, 1: a link in, 2: placed
    for key_id, follower in enumerate(after):
        if follower >= 0 and follower != key_id and before[follower] == key_id:
            linked[key_id] = follower
            state[follower] = 1
    members, starts = array("i"), array("i")
    chain_of, index_of = array("i", bytes(4 * count)), array("i", bytes(4 * count))
    for waiting in (0, 1):  # (heads, then what a cycle left)
        for head in range(count):
            if state[head] != waiting:
                continue
            starts.append(len(members))
            key_id, index = head, 0
            while key_id >= 0 and state[key_id] != 2:
                state[key_id] = 2
                chain_of[key_id], index_of[key_id] = len(starts) - 1, index
                members.append(key_id)
                key_id, index = linked[key_id], index + 1
    starts.append(len(members))
    return members.tobytes(), starts.tobytes(), chain_of.tobytes(), index_of.tobytes()


def python_broken_fragments(
    ranked: bytes | array[int],
    chain_of: bytes | array[int],
    index_of: bytes | array[int],
    lengths: bytes | array[int],
) -> bytes:
    """The kernel's ``broken_fragments`` in Python: of the ranks whose key id
    (``ranked``, negative: no key of GOOD) lies in a chain of ``lengths`` more than 0,
    each maximal stretch in its sequence's order that is not the whole sequence, as
    int64 (first rank, last rank) pairs; int32 arrays in."""
    ids, chains, indices, sizes = (array("i", a) for a in (ranked, chain_of, index_of, lengths))
    if len(chains) != len(indices):
        raise ValueError("one chain and one index per key id")
    found = array("q")
    start = previous = chain = index = first = -2
    for r, key_id in enumerate([*ids, -1]):
        here = at = -1
        candidate = False
        if key_id >= 0:
            if key_id >= len(chains):
                raise ValueError("a key id past the chains")
            here, at = chains[key_id], indices[key_id]
            if not 0 <= here < len(sizes):
                raise ValueError("a chain past the lengths")
            candidate = sizes[here] > 0
        if candidate and r == previous + 1 and here == chain and at == index + 1:
            previous, index = r, at
            continue
        if start >= 0 and not (first == 0 and index == sizes[chain] - 1):
            found.extend((start, previous))
        start, previous = (r, r) if candidate else (-1, -2)
        chain, index, first = here, at, at
    return found.tobytes()


# -- the fold's: periods of a run of keys ----------------------------------------------


def shortest_period(keys: bytes | bytearray) -> int:
    """The smallest p such that record i equals record i - p for every i >= p (the
    prefix function of Knuth, Morris and Pratt over 16-byte keys)."""
    tokens = [keys[i : i + KEY] for i in range(0, len(keys), KEY)]
    border = [0] * len(tokens)
    k = 0
    for i in range(1, len(tokens)):
        while k and tokens[i] != tokens[k]:
            k = border[k - 1]
        if tokens[i] == tokens[k]:
            k += 1
        border[i] = k
    return len(tokens) - (border[-1] if tokens else 0)


def python_skip_records(data: bytes, delimiter: bytes, offset: int, count: int) -> int:
    """Where the record ``count`` records after the one starting at byte ``offset``
    starts (past ``count`` delimiters), or -1 when fewer delimiters follow."""
    find, width = data.find, len(delimiter)
    for _ in range(count):
        found = find(delimiter, offset)
        if found < 0:
            return -1
        offset = found + width
    return offset


def python_mark_runs(
    out: bytes,
    runs: bytes,
    offsets: bytes,
    pieces: bytes,
    delimiter: bytes,
    prefix: bytes,
    suffix: bytes,
) -> bytes | None:
    """The chunk's output with each piece's default marker (between ``prefix`` and
    ``suffix``, then ``delimiter``) where the last run starting at or before the piece's
    end lies in it (``runs``: int64 (start, stop) pairs, ``offsets``: each run's place
    in ``out``; ``pieces``: 6 int64 each); None when a piece repeats a library."""
    starts, places = array("q", runs)[0::2], array("q", offsets)
    parts: list[bytes] = []
    taken = 0
    for start, end, source, count, _, _ in struct.iter_unpack("4q2Q", pieces):
        if source < 0:
            return None
        run = bisect_right(starts, end) - 1
        at = places[run] if run >= 0 else 0
        marker = default_marker(start, end, source, count)
        parts += (out[taken:at], prefix, marker, suffix, delimiter)
        taken = at
    parts.append(out[taken:])
    return b"".join(parts)


def periodic_match(unit: bytes, data: bytes | bytearray, offset: int) -> int:
    """How many records of ``data`` (the run's records from record ``offset`` of the
    run on) continue the run's repetition of ``unit``, before the first that does not."""
    length = len(unit) // KEY
    count = len(data) // KEY
    done = 0
    phase = offset % length
    if phase:  # up to the next copy's start, then whole blocks of copies
        take = min(length - phase, count)
        if data[: take * KEY] != unit[phase * KEY : (phase + take) * KEY]:
            return _first_difference(data, unit, 0, phase, take)
        done = take
    repeated = unit * max(1, BLOCK // length)
    step = len(repeated) // KEY
    while done < count:
        take = min(step, count - done)
        if data[done * KEY : (done + take) * KEY] != repeated[: take * KEY]:
            return done + _first_difference(data, repeated, done, 0, take)
        done += take
    return count


def distinct_copies(texts: array[int], length: int) -> int:
    """How many different groups of ``length`` consecutive text digests ``texts`` holds,
    counted from its start (a shorter group at the end is one of its own)."""
    if length < 1:
        raise ValueError("distinct_copies: length >= 1")
    if length == 1:
        return len(set(texts))
    whole = len(texts) - len(texts) % length
    groups = set(zip(*[iter(texts[:whole])] * length, strict=True))
    return len(groups) + (whole < len(texts))


def _first_difference(data: bytes | bytearray, unit: bytes, at: int, phase: int, take: int) -> int:
    for k in range(take):
        a, b = (at + k) * KEY, (phase + k) * KEY
        if data[a : a + KEY] != unit[b : b + KEY]:
            return k
    return take
