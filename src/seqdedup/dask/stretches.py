"""``seqdedup-dask`` under a minimum size: a partition's shortest large-enough stretches
(:mod:`seqdedup.engine.sized`) in place of its windows (docs/scale-out.md).

The one global fact per stretch is the same: the earliest position of its content.
Every record the rule skips lies inside a repeating shortest stretch (one with no
shorter large-enough stretch at its end, or at its start), and each such stretch
holds a record of some partition, so each partition looks at the shortest stretches
that hold one of its records: its frame reads ``CAP - 1`` records before and after it
(no such stretch is longer). A stretch is known by a keyed 128-bit BLAKE2b digest of
its records' key hashes (two contents share one with probability 2^-128).

1. :func:`stretch_first_pass`: of each distinct content, the frame's first stretch
   goes as a row (digest lanes, start position, end position) to its owner.
2. :func:`stretch_owner_answers`: per content, the occurrence that starts first (a
   library's at -1); a row that starts after it gets that occurrence's end back.
3. :meth:`StretchState.decide`: a stretch repeats when the earliest occurrence of its
   content ended before it started (its end position below the stretch's start: in
   an earlier file, or earlier in this one); its records are skipped. The records of
   stretches that repeat nothing are new material.
"""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import blake2b
from itertools import compress
from typing import TYPE_CHECKING

from seqdedup.dask.partitions import (
    POSITION_SHIFT,
    Frame,
    Part,
    Reader,
    _after,
    _before,
    _split_at,
    worker_engine,
)
from seqdedup.engine.sized import CAP, sequence_stretches

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from seqdedup.base.hashes import Flags
    from seqdedup.config.groups import RuleOptions

STRETCH_ROW_BYTES = 32  # digest lanes, start and end position (int64 quadruples)
STRETCH_SALT = 0x6A6F622D73747265_746368657320206B  # the digest's key: seed xor this


def stretch_digests(seed: int) -> Callable[[bytes], tuple[int, int]]:
    """A stretch's content, from its records' key hashes (16 bytes each): the keyed
    digest's two lanes (signed int64)."""
    keyed = blake2b(digest_size=16, key=(seed ^ STRETCH_SALT).to_bytes(16, "little"))

    def lanes(hashes: bytes) -> tuple[int, int]:
        digest = keyed.copy()
        digest.update(hashes)
        value = digest.digest()
        return (
            int.from_bytes(value[:8], "little", signed=True),
            int.from_bytes(value[8:], "little", signed=True),
        )

    return lanes


@dataclass(frozen=True)
class SizeRule:
    """The job's rule: W, the minimum size and its unit."""

    window: int
    min_size: int
    unit: str

    @property
    def cap(self) -> int:
        return max(self.window, CAP)

    def stretches(self, sizes: Sequence[int]) -> list[tuple[int, int]]:
        """The shortest large-enough stretches of records of these key sizes, (start,
        end) inside them, in the order they start."""
        ending, starting = sequence_stretches(sizes, self.window, self.min_size, self.cap)
        return sorted(set(ending + starting))


def hashes_and_sizes(reader: Reader, records: list[bytes], unit: str) -> tuple[bytes, list[int]]:
    """The records' key hashes (as ``reader.hash_bytes``) and each key's size."""
    from seqdedup.keys.maker import key_sizes

    keys = reader.key_maker().keys(records)
    count = worker_engine(reader.engine).record_tokens
    return reader.hash_keys(keys), key_sizes(keys, unit, count).tolist()


def size_rule(rule: RuleOptions) -> SizeRule:
    return SizeRule(rule.window_size, rule.min_size, rule.size_unit)


@dataclass
class StretchState:
    """What a partition's second pass needs from its first (kept on the worker)."""

    frame: Frame
    stretches: list[tuple[int, int]]  # frame indices of those that hold a record of its own
    firsts: list[int]  # per stretch: the first of its content in the frame
    routed: list[list[int]]  # per owner: the stretches of its rows, in row order

    def decide(self, answers: list[bytes], rank: int, window: int) -> tuple[Flags, Flags]:
        """Which of the partition's tracked records are skipped, and which of them
        (and of the records after it) lie in a stretch that repeats nothing."""
        import numpy as np

        frame = self.frame
        base = rank << POSITION_SHIFT
        ends = {}  # first stretch -> the end of its content's earliest occurrence
        for routed, answer in zip(self.routed, answers, strict=True):
            for row, end in np.frombuffer(answer, dtype=np.int64).reshape(-1, 2).tolist():
                ends[routed[row]] = end
        own, n = frame.own, frame.own_count
        skipped = np.zeros(n, dtype=bool)
        new = np.zeros(n + len(frame.after), dtype=bool)
        starts = frame.starts.tolist()
        for (s, e), first in zip(self.stretches, self.firsts, strict=True):
            earliest = ends.get(first, base | starts[self.stretches[first][1]])
            flags, stop = (skipped, n) if earliest < base | starts[s] else (new, len(new))
            flags[max(s - own, 0) : min(e + 1 - own, stop)] = True
        return skipped, new


def stretch_first_pass(
    reader: Reader, part: Part, rule: SizeRule, owners: int
) -> tuple[StretchState, list[bytes]]:
    """The partition's frame, its stretches, and per owner the rows of the first
    stretch of each content (int64 quadruples: digest lanes, start, end)."""
    import numpy as np

    frame, sizes = _stretch_frame(reader, part, rule)
    own, stop = frame.own, frame.own + frame.own_count
    stretches = [(s, e) for s, e in rule.stretches(sizes) if e >= own and s < stop]
    first_of: dict[tuple[int, int], int] = {}
    firsts = []
    content = stretch_digests(reader.seed)
    routed: list[list[int]] = [[] for _ in range(owners)]
    rows: list[list[int]] = [[] for _ in range(owners)]
    base = part.rank << POSITION_SHIFT
    starts = frame.starts.tolist()
    for k, (s, e) in enumerate(stretches):
        lo, hi = content(frame.hashes[16 * s : 16 * (e + 1)])
        first = first_of.setdefault((lo, hi), k)
        firsts.append(first)
        if first == k:
            owner = (lo % (1 << 64)) % owners
            routed[owner].append(k)
            rows[owner] += [lo, hi, base | starts[s], base | starts[e]]
    frame.hashes = b""  # (not needed any more)
    packed = [np.array(r, dtype=np.int64).tobytes() for r in rows]
    return StretchState(frame, stretches, firsts, routed), packed


def _stretch_frame(reader: Reader, part: Part, rule: SizeRule) -> tuple[Frame, list[int]]:
    """The partition's tracked records with CAP - 1 before and after it (in its file),
    their key hashes and key sizes."""
    import numpy as np

    reach = rule.cap - 1
    before, before_starts = _before(reader, part, reach)
    after, after_starts = (
        _after(reader, part, reach, part.identity[0]) if not part.last else ([], [])
    )
    own_records, starts = _split_at(
        reader.read(part, part.start, part.end), part.start, reader.delimiter
    )
    flags = reader.tracked(own_records)
    own = list(compress(own_records, flags))
    hashes, sizes = hashes_and_sizes(reader, [*before, *own, *after], rule.unit)
    every = [*before_starts, *compress(starts, flags), *after_starts]
    return Frame(np.array(every, dtype=np.int64), hashes, len(before), len(own), after), sizes


def stretch_owner_answers(rows: list[bytes], library: bytes) -> list[bytes]:
    """For each partition's rows (int64 quadruples), its rows whose content started
    earlier (a library's: at -1): int64 pairs (row, that occurrence's end)."""
    import numpy as np

    earliest: dict[tuple[int, int], tuple[int, int]] = {}
    for lo, hi in np.frombuffer(library, dtype=np.int64).reshape(-1, 2).tolist():
        earliest[(lo, hi)] = (-1, -1)
    tables = [np.frombuffer(r, dtype=np.int64).reshape(-1, 4).tolist() for r in rows]
    for table in tables:
        for lo, hi, start, end in table:
            known = earliest.get((lo, hi))
            if known is None or start < known[0]:
                earliest[(lo, hi)] = (start, end)
    out = []
    for table in tables:
        pairs = []
        for k, (lo, hi, start, _) in enumerate(table):
            first, end = earliest[(lo, hi)]
            if first < start:
                pairs.append((k, end))
        out.append(np.array(pairs, dtype=np.int64).reshape(-1, 2).tobytes())
    return out


def stretch_library(
    reader: Reader, rule: SizeRule, sequences: list[list[bytes]], owners: int
) -> list[bytes]:
    """The digests of the loaded sequences' shortest large-enough stretches (int64
    pairs), per owner."""
    import numpy as np

    rows: list[list[int]] = [[] for _ in range(owners)]
    content = stretch_digests(reader.seed)
    for records in sequences:
        hashes, sizes = hashes_and_sizes(reader, records, rule.unit)
        for s, e in rule.stretches(sizes):
            lo, hi = content(hashes[16 * s : 16 * (e + 1)])
            rows[(lo % (1 << 64)) % owners] += [lo, hi]
    return [np.array(r, dtype=np.int64).tobytes() for r in rows]
