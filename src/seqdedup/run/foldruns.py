"""--fold's runs and their sequences: the records of a run held while its first piece goes
on, the shortest block that piece repeats (its period, compared in the kernel where it
runs), and the sequence's id."""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from seqdedup.base.engine import Engine
from seqdedup.base.hashes import MASK128
from seqdedup.engine.pykernel import KEY

if TYPE_CHECKING:
    from seqdedup.base.hashes import Lanes
    from seqdedup.engine.pieces import Piece
    from seqdedup.keys.maker import KeyMaker, TextDigest

HELD_MAX = 1 << 16  # records of a run held while its first piece goes on
VARIANTS_TRACKED = 1 << 20  # records of a part whose texts are compared, at most
DIGESTS_HELD = 4096  # ids of recent sequences remembered


def key_bytes(hashes: bytes | list[int] | Lanes) -> bytes:
    """Key hashes in any engine's form (the kernel's bytes, a list of 128-bit ints, an
    (n, 2) int64 array) as 16 bytes per record."""
    if isinstance(hashes, bytes | bytearray):
        return bytes(hashes)
    if isinstance(hashes, list):
        return b"".join((value & MASK128).to_bytes(KEY, "little") for value in hashes)
    return bytes(hashes.astype("<i8").tobytes())


class FoldRun:
    """The run being folded (tracked indices, ``stop`` exclusive)."""

    __slots__ = (
        "first_piece",
        "keys",
        "last_record",
        "matched",
        "part",
        "part_clock",
        "part_first",
        "part_start",
        "records",
        "start",
        "stop",
        "texts",
        "unit",
    )

    def __init__(self, start: int, first_piece: Piece | None) -> None:
        self.start = self.stop = self.part_start = start
        self.part = 1
        self.first_piece = first_piece
        self.keys = bytearray()  # the run's keys and records until its sequence is known
        self.records: list[bytes] = []
        self.part_first = b""  # the current part's first record, and the last one taken
        self.last_record = b""
        self.unit: _Unit | None = None
        self.matched = 0  # records from the run's start that repeat the sequence (so far)
        # With key options: a digest of each record of the current part's text (its
        # timestamps masked), to say when the copies a line folds differ in their text
        self.texts: array[int] | None = None
        self.part_clock = 0.0  # --fold-every TIME: when the current part began (seconds)

    def note_texts(self, records: Sequence[bytes], digest: TextDigest) -> None:
        """The texts of records just taken (at most VARIANTS_TRACKED per part)."""
        texts = self.texts
        if texts is None:
            texts = self.texts = array("Q")
        if len(texts) < VARIANTS_TRACKED:
            texts += digest(records[: VARIANTS_TRACKED - len(texts)])

    def take(
        self,
        keys: bytes,
        records: Sequence[bytes],
        match: Callable[[bytes, bytes | bytearray, int], int],
    ) -> bool:
        """Add the next skipped records; return whether the sequence can be fixed now
        (the first piece is complete, or its records held reach HELD_MAX)."""
        if self.stop == self.part_start:
            self.part_first = records[0]
        self.last_record = records[-1]
        offset = self.stop - self.start
        self.stop += len(records)
        unit = self.unit
        if unit is not None:
            if self.matched == offset:  # the repetition has held so far
                self.matched += match(unit.keys, keys, offset)
            return False
        self.keys += keys
        self.records += records
        piece = self.first_piece
        return (piece is not None and piece.end < self.stop) or len(self.records) >= HELD_MAX


def variants_of(
    texts: array[int] | None, length: int, distinct: Callable[[array[int], int], int]
) -> int:
    """How many different texts copies of ``length`` records have, given each record's
    text digest (at most VARIANTS_TRACKED of them; 1 where none were taken): copies
    counted from the part's start, as the line's "copies" are, a partial copy at the end
    a text of its own (``distinct``: the engine's ``distinct_copies``)."""
    return distinct(texts, length) if texts else 1


class _Unit:
    __slots__ = ("digest", "keys", "length", "source")

    def __init__(self, keys: bytes, digest: bytes, source: int) -> None:
        self.keys = keys
        self.length = len(keys) // KEY
        self.digest = digest
        self.source = source  # where it was first seen (tracked index; < 0: a library)


class Sequences:
    """What sequence a run repeats, and its id (the comparisons in the kernel when it
    runs)."""

    def __init__(
        self,
        keys: KeyMaker,
        open_source: Callable[[], int | None],
        on_sequence: Callable[[bytes, list[bytes]], None] | None,
        engine: Engine,
    ) -> None:
        self.period, self.match = engine.shortest_period, engine.periodic_match
        self.distinct = engine.distinct_copies
        self._key_maker = keys
        self._open_source = open_source  # the open piece's earliest source
        self._on_sequence = on_sequence  # (digest, records) of each new sequence: -l
        self._digests: OrderedDict[bytes, bytes] = OrderedDict()  # sequence keys -> id
        from seqdedup.library.store import digest_of  # (only a run that folds needs it)

        self._digest_of = digest_of

    def of(self, run: FoldRun, fix: bool = False) -> _Unit:
        """The run's sequence: the shortest period of its first piece, first seen at
        the piece's source. While that piece goes on past the records taken, of the
        piece so far against the earliest source it still matches (a provisional
        answer, for an interim line); fixed once the piece is complete, or ``fix``."""
        piece = run.first_piece
        complete = piece is not None and piece.end < run.stop
        source: int | None
        if piece is not None and complete:
            extent, source = piece.end - run.start + 1, piece.source_start
        else:
            extent = run.stop - run.start
            source = piece.source_start if piece is not None else self._open_source()
        assert source is not None, "a run with no piece closed has one open"
        keys = run.keys
        length = self.period(keys[: extent * KEY])
        unit_keys = bytes(keys[: length * KEY])
        records = run.records[:length]
        unit = _Unit(
            unit_keys,
            self.digest(unit_keys, partial(sequence_row, self._key_maker, records)),
            source,
        )
        run.matched = self.match(unit_keys, keys, 0)
        if complete or fix:
            run.unit = unit
            run.keys = bytearray()
            run.records = []
        if self._on_sequence is not None:
            self._on_sequence(unit.digest, records)
        return unit

    def variants(self, run: FoldRun, length: int) -> int:
        """How many different texts the run's current part's copies have (1: all the
        same). Then a new part begins."""
        texts, run.texts = run.texts, None
        return variants_of(texts, length, self.distinct)

    def digest(self, unit_keys: bytes, row: Callable[[], bytes]) -> bytes:
        """The id of a sequence (remembered by its key hashes: a storm asks again and
        again); ``row``: its records' keys as a library row, asked for only when it is
        not remembered."""
        digests = self._digests
        digest = digests.get(unit_keys)
        if digest is None:
            digest = digests[unit_keys] = self._digest_of(row())
            if len(digests) > DIGESTS_HELD:
                digests.popitem(last=False)
        return digest


def sequence_row(maker: KeyMaker, records: list[bytes]) -> bytes:
    """What a sequence's id digests: its records' keys as a library row (the records
    themselves with a hash transform, whose output is not asked for again)."""
    from seqdedup.library.store import encode_records

    return encode_records(records if maker.transform is not None else maker.keys(records))
