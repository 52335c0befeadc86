"""The engine a run uses, as the layers below it see it: one typed object, the same names
whichever engine it is (the compiled kernel, ``seqdedup._kernel``, or pure Python).

:func:`seqdedup.engine.choice.chosen_engine` picks the engine once for a run
(``SEQDEDUP_ENGINE``) and hands it down; code here and in ``config``, ``keys`` and the
layers above calls ``engine.record_bounds(...)`` and never asks which engine it is.
Both engines give byte-identical results (docs/engine.md, "Two engines, one definition").
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Protocol, TypeAlias

from seqdedup.base.cengine import LiteralMask as LiteralMask
from seqdedup.base.hashes import SEED as SEED  # (the run's secret, named here too)

if TYPE_CHECKING:
    import mmap

    from seqdedup.base.cengine import CEngine
    from seqdedup.base.records import Buffer, Int64s

Bytes: TypeAlias = "bytes | bytearray | memoryview"
Numbered = tuple[bytes, bytes, bytes, bytes, bytes]  # ids, previous, firsts, counts, lasts
ChainsFound = tuple[bytes, bytes, bytes, bytes]  # members, starts, chain_of, index_of


class Table(Protocol):
    """GOOD's distinct keys (``seqdedup diff``): each key hash's id, count and one
    neighbour before and after it."""

    def add(
        self,
        hashes: bytes,
        weights: bytes | None = None,
        separator: bytes | None = None,
        links: bool = True,
        ends: bool = True,
    ) -> bytes: ...
    def find(self, hashes: bytes, /) -> bytes: ...
    def arrays(self) -> tuple[bytes, bytes, bytes]: ...
    def __len__(self) -> int: ...


class Engine(Protocol):
    """What either engine does, under one set of names (each documented where its
    Python twin is: :mod:`seqdedup.base.records`, :mod:`seqdedup.base.tokens`,
    :mod:`seqdedup.config.normalize`, :mod:`seqdedup.engine.pykernel`)."""

    @property
    def name(self) -> str:
        """``"c"`` or ``"python"``."""
        ...

    @property
    def kernel(self) -> CEngine | None:
        """The C engine itself where it runs (None: the Python engine), for the stages
        whose twins have another shape (the key hashing, stream names' prefix program,
        JSON keys below ``engine``; the chunk path, matchers and attribution above it,
        through :func:`seqdedup.engine.choice.compiled`)."""
        ...

    @property
    def literal_mask(self) -> LiteralMask | None:
        """The kernel's scan of a region for a literal (--track/--bypass); None: the
        Python engine has none (the filters' own numpy or text path serves)."""
        ...

    # records: where they lie, picked and placed by index
    def record_bounds(self, data: Buffer, delimiter: bytes, /) -> Int64s: ...
    def flag_positions(self, flags: bytes | bytearray, /) -> Int64s: ...
    def take(self, items: Bytes, width: int, indices: Int64s, /) -> bytes: ...
    def put(
        self, target: bytearray | array[int], width: int, flags: bytes | bytearray, values: bytes, /
    ) -> None: ...
    def gather(
        self, data: Bytes, bounds: Int64s, indices: Int64s, base: int, /
    ) -> tuple[bytes, bytes]: ...

    # tokens: each record's estimate, and their running sums
    def record_tokens(self, data: Buffer | memoryview, bounds: Int64s, /) -> array[int]: ...
    def token_sums(self, data: Buffer | memoryview, bounds: Int64s, /) -> Int64s: ...

    # the normalising classes' scans
    def normalize(self, record: bytes, bits: int, /) -> bytes: ...
    def first_timestamp(self, record: bytes, /) -> str: ...
    def value_matches(self, record: bytes, bits: int) -> list[tuple[int, int, int]]: ...

    # the budget's: levels, tracebacks, numbering and counting
    def literal_hits(
        self,
        data: bytes | mmap.mmap,
        bounds: Int64s,
        floating: tuple[bytes, ...],
        anchored: tuple[bytes, ...],
        /,
    ) -> bytes: ...
    def spread_tracebacks(
        self, data: Buffer, bounds: Int64s, flags: bytearray, indented: bytes, /
    ) -> bytes: ...
    def occurrences(self, hashes: bytes | bytearray, /) -> Numbered: ...
    def distinct_records(
        self, data: Buffer, bounds: Int64s, flags: bytes | bytearray, /
    ) -> tuple[bytes, bytes]: ...
    def tally(
        self, ids: array[int], first: int, last: int, size: int, top: int, /
    ) -> tuple[int, bytes]: ...

    # seqdedup diff's: GOOD's keys and sequences, BAD's broken fragments
    def key_table(self) -> Table: ...
    def chains(self, after: bytes, before: bytes, /) -> ChainsFound: ...
    def chain_counts(
        self, ids: array[int], members: array[int], starts: array[int], /
    ) -> bytes: ...
    def broken_fragments(
        self, ranked: array[int], chain_of: array[int], index_of: array[int], lengths: array[int], /
    ) -> bytes: ...

    # the fold's: periods of a run of keys, and how many texts its copies have
    def shortest_period(self, keys: bytes | bytearray, /) -> int: ...
    def periodic_match(self, unit: bytes, data: bytes | bytearray, offset: int, /) -> int: ...
    def distinct_copies(self, texts: array[int], length: int, /) -> int: ...

    # --annotate's default markers written into a chunk's output
    def mark_runs(
        self,
        out: bytes,
        runs: bytes,
        offsets: bytes,
        pieces: bytes,
        delimiter: bytes,
        prefix: bytes,
        suffix: bytes,
        /,
    ) -> bytes | None: ...


_numpy: bool | None = None


def numpy_available() -> bool:
    """Whether numpy can be imported (looked up once, without importing it). The
    Python engine uses it for large batches when it is there; the core install does
    not require it."""
    global _numpy
    if _numpy is None:
        from importlib.util import find_spec

        _numpy = find_spec("numpy") is not None
    return _numpy
