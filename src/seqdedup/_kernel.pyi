"""Types of the compiled kernel (``csrc/``)."""

from collections.abc import Sequence
from typing import Literal, overload

from _typeshed import ReadableBuffer, WriteableBuffer

# Skipped runs: int64 pairs (start, stop) or, with run_heads, (start, stop, their first
# record or all their records as one stretch of bytes)
Runs = bytes | list[tuple[int, int, bytes]]
# What attribution takes: the same, or runs whose records were split out
RunsTaken = bytes | Sequence[tuple[int, int, object]]
# (output, key hashes (16 bytes each), skipped runs, records decided, records kept, and
# per skipped run the int64 offset in the output where it lies)
ChunkResult = tuple[bytes, bytes, Runs, int, int, bytes]

GIL_MINSIZE: int

def literal_mask(
    region: ReadableBuffer,
    bounds: ReadableBuffer,
    literal: ReadableBuffer,
    anchored: bool,
    open: ReadableBuffer,
    /,
) -> bytes: ...
@overload
def hash_records(
    records: Sequence[bytes],
    seed: int = 0,
    skip_chars: int = 0,
    byte_mode: bool = False,
    normalize: int = 0,
    skip_fields: int = 0,
    sizes: Literal[False] = False,
) -> bytes: ...
@overload
def hash_records(
    records: Sequence[bytes],
    seed: int = 0,
    skip_chars: int = 0,
    byte_mode: bool = False,
    normalize: int = 0,
    skip_fields: int = 0,
    *,
    sizes: Literal[True],
) -> tuple[bytes, bytes]: ...
def hash_encoded(
    encoded: ReadableBuffer,
    seed: int = 0,
    skip_chars: int = 0,
    byte_mode: bool = False,
    normalize: int = 0,
    skip_fields: int = 0,
) -> bytes: ...
def library_windows(
    fingerprints: ReadableBuffer,
    firsts: ReadableBuffer,
    lengths: ReadableBuffer,
    width: int,
    size: int,
    /,
) -> tuple[bytes, bytes]: ...
def hash_encoded_rows(
    rows: list[bytes],
    separator: ReadableBuffer,
    seed: int = 0,
    skip_chars: int = 0,
    byte_mode: bool = False,
    normalize: int = 0,
    skip_fields: int = 0,
) -> bytes: ...
def _key_offset(record: ReadableBuffer, skip_chars: int, byte_mode: bool = False, /) -> int: ...
def window_keys(hashes: ReadableBuffer, fps: ReadableBuffer, width: int, seed: int, /) -> bytes: ...
def record_bounds(data: ReadableBuffer, delimiter: bytes, /) -> bytes: ...
def gather(
    data: ReadableBuffer, bounds: ReadableBuffer, indices: ReadableBuffer, base: int, /
) -> tuple[bytes, bytes]: ...
def normalize(key: ReadableBuffer, classes: int, /) -> bytes: ...
def json_keys(
    records: Sequence[bytes], paths: object, ignore: bool = False
) -> list[bytes | None]: ...
def value_matches(record: ReadableBuffer, classes: int, /) -> bytes: ...
def flag_positions(flags: ReadableBuffer, /) -> bytes: ...
def take(items: ReadableBuffer, width: int, indices: ReadableBuffer, /) -> bytes: ...
def put(
    target: WriteableBuffer, width: int, flags: ReadableBuffer, values: ReadableBuffer, /
) -> None: ...
def token_counts(
    data: ReadableBuffer, bounds: ReadableBuffer, cumulative: bool = False, /
) -> bytes: ...
def distinct_records(
    data: ReadableBuffer, bounds: ReadableBuffer, flags: ReadableBuffer, seed: int, /
) -> tuple[bytes, bytes]: ...
def spread_tracebacks(
    data: ReadableBuffer,
    bounds: ReadableBuffer,
    flags: WriteableBuffer,
    indented: ReadableBuffer,
    /,
) -> bytes: ...
def stream_prefixes(
    records: Sequence[bytes],
    sets: ReadableBuffer,
    mins: ReadableBuffer,
    maxes: ReadableBuffer,
    name_from: int,
    name_to: int,
    ascii_only: bool = False,
    seed: int = 0,
    /,
) -> tuple[list[bytes], bytes, list[bytes], bytes]: ...
def window_tally(
    keys: ReadableBuffer, widths: Sequence[int], seed: int = 0, /
) -> list[tuple[int, int, bytes]]: ...
def first_windows(
    fps: ReadableBuffer, positions: ReadableBuffer, owners: int, /
) -> tuple[bytes, list[bytes], list[bytes]]: ...
def split_hash(
    data: ReadableBuffer,
    delimiter: bytes,
    seed: int = 0,
    skip_chars: int = 0,
    byte_mode: bool = False,
    normalize: int = 0,
    skip_fields: int = 0,
) -> tuple[bytes, bytes]: ...
def bounds_hash(
    data: ReadableBuffer,
    bounds: ReadableBuffer,
    seed: int = 0,
    skip_chars: int = 0,
    byte_mode: bool = False,
    normalize: int = 0,
    skip_fields: int = 0,
    passed: ReadableBuffer | None = None,
) -> bytearray: ...
def earliest(rows: Sequence[ReadableBuffer], library: ReadableBuffer, /) -> list[bytes]: ...
def first_match(record: ReadableBuffer, classes: int, /) -> tuple[int, int] | None: ...
def shortest_period(keys: ReadableBuffer, /) -> int: ...
def periodic_match(unit: ReadableBuffer, data: ReadableBuffer, offset: int, /) -> int: ...
def distinct_copies(texts: ReadableBuffer, length: int, /) -> int: ...
def skip_records(data: ReadableBuffer, delimiter: bytes, offset: int, count: int, /) -> int: ...
def mark_runs(
    out: ReadableBuffer,
    runs: ReadableBuffer,
    offsets: ReadableBuffer,
    pieces: ReadableBuffer,
    delimiter: bytes,
    prefix: bytes,
    suffix: bytes,
    /,
) -> bytes | None: ...
def encode_joined(
    data: ReadableBuffer, delimiter: bytes, count: int, skip: int = 0, /
) -> bytes: ...
def broken_fragments(
    ranked: ReadableBuffer,
    chain_of: ReadableBuffer,
    index_of: ReadableBuffer,
    lengths: ReadableBuffer,
    /,
) -> bytes: ...
def chains(
    after: ReadableBuffer, before: ReadableBuffer, /
) -> tuple[bytes, bytes, bytes, bytes]: ...
def chain_counts(
    ids: ReadableBuffer, members: ReadableBuffer, starts: ReadableBuffer, /
) -> bytes: ...
def fold_shape(keys: ReadableBuffer, at: int, extent: int, count: int, /) -> tuple[int, int]: ...
def occurrences(hashes: ReadableBuffer, /) -> tuple[bytes, bytes, bytes, bytes, bytes]: ...
def tally(
    ids: ReadableBuffer, first: int, last: int, size: int, top: int, /
) -> tuple[int, bytes]: ...
def literal_hits(
    region: ReadableBuffer,
    bounds: ReadableBuffer,
    floating: tuple[bytes, ...],
    anchored: tuple[bytes, ...],
    /,
) -> bytes: ...

class KeyTable:
    """GOOD's distinct keys for seqdedup diff (diff.profile.KeyTable's twin)."""

    def add(
        self,
        hashes: ReadableBuffer,
        weights: ReadableBuffer | None = None,
        separator: bytes | None = None,
        links: bool = True,
        ends: bool = True,
    ) -> bytes: ...
    def find(self, hashes: ReadableBuffer, /) -> bytes: ...
    def arrays(self) -> tuple[bytes, bytes, bytes]: ...
    def __len__(self) -> int: ...

class Matcher:
    new_material: list[bool] | None
    @property
    def decided(self) -> int: ...
    @property
    def window_size(self) -> int: ...
    @property
    def max_history(self) -> int | None: ...
    @property
    def remembered_windows(self) -> int: ...
    @property
    def _table_bytes(self) -> int: ...
    @property
    def _key_log(self) -> tuple[int, int, int]: ...
    @property
    def settled(self) -> int: ...
    @property
    def cover(self) -> int: ...
    @property
    def new_stretches(self) -> list[tuple[int, int, bytes, bytes]]: ...
    def __init__(
        self,
        window_size: int,
        max_history: int | None = None,
        seed: int = 0,
        delimiter: bytes | None = None,
        skip_chars: int = 0,
        byte_mode: bool = False,
        inverse: bool = False,
        run_heads: int = 0,
        normalize: int = 0,
        filtered: bool = False,
        early: bool = False,
        skip_fields: int = 0,
        force_collisions: bool = False,
        compact_min: int = 65536,
    ) -> None: ...
    def push(self, hashes: ReadableBuffer, /) -> list[bool]: ...
    def finish(self) -> list[bool]: ...
    def new_input(self) -> None: ...
    def sources(self) -> tuple[int, bytes]: ...
    def source(self, window: int, /) -> int | None: ...
    def fingerprints(self, hashes: ReadableBuffer, count: int, /) -> bytes: ...
    def add_library_windows(
        self,
        fingerprints: ReadableBuffer,
        starts: ReadableBuffer,
        region: ReadableBuffer | None = None,
        /,
    ) -> None: ...
    def add_library_region(
        self, region: ReadableBuffer, firsts: ReadableBuffer, lengths: ReadableBuffer, /
    ) -> None: ...
    def attach_sized(self, decider: SizeDecider, /) -> None: ...
    def feed_chunk(self, chunk: ReadableBuffer, /) -> ChunkResult: ...
    def finish_chunks(
        self, delimit_final: bool = False, drop_final: bool = False
    ) -> ChunkResult: ...
    def split_chunk(self, chunk: ReadableBuffer, /) -> tuple[bytes, bytes, int]: ...
    def split_final(
        self, delimit_final: bool = False, drop_final: bool = False
    ) -> tuple[bytes, bytes, int]: ...
    def decide_split(
        self, mask: ReadableBuffer, /
    ) -> tuple[bytes, bytes, Runs, int, int, bytes, int]: ...

class Attributor:
    """Attribution in C (see seqdedup.attribution.KernelAttributor)."""

    @property
    def decided(self) -> int: ...
    @property
    def open_piece(self) -> bool: ...
    @property
    def open_source(self) -> int | None: ...
    @property
    def identified(self) -> int: ...
    @property
    def sequences(self) -> int: ...
    @property
    def held_keys(self) -> int: ...
    @property
    def work(self) -> int: ...
    def __init__(
        self,
        matcher: Matcher,
        max_candidates: int | None = None,
        max_history: int | None = None,
        max_sequences: int | None = None,
        seed: int = 0,
        report: bool = False,
        top: bool = False,
        run_firsts: bool = False,
    ) -> None: ...
    def append_keys(self, hashes: ReadableBuffer, /) -> None: ...
    def set_library_keys(self, region: ReadableBuffer, /) -> None: ...
    def add_runs(
        self,
        size: int,
        runs: RunsTaken,
        numbers: bytes | None = None,
        sources: bytes | None = None,
        sources_base: int = 0,
        /,
    ) -> bytes | None: ...
    def add(
        self, keep: Sequence[bool], numbers: Sequence[int] | None = None, /
    ) -> bytes | None: ...
    def finish(self) -> bytes | None: ...
    def new_input(self) -> bytes | None: ...
    def top_counts(self) -> bytes: ...
    def record_number(self, tracked: int, /) -> int: ...

class StreamMatcher:
    """--stream-by's rule per stream in C (engine.stream_decider.StreamDecider's twin)."""

    @property
    def position(self) -> int: ...
    @property
    def remembered_windows(self) -> int: ...
    def __init__(
        self,
        window: int,
        idle: int | None = None,
        max_streams: int | None = None,
        count_runs: bool = False,
        history: int | None = None,
        seed: int = 0,
        force_collisions: bool = False,
        report_runs: bool = False,
        fold: bool = False,
        fold_every: int | None = None,
    ) -> None: ...
    def push(
        self,
        hashes: ReadableBuffer,
        lanes: ReadableBuffer,
        translate: ReadableBuffer | None = None,
        initial: int = -1,
        /,
    ) -> tuple[bytes, bytes, bytes]: ...
    def end_all(self) -> tuple[bytes, bytes, bytes]: ...
    def active(self, lane: int, /) -> bool: ...
    def closed_runs(self) -> bytes: ...
    def folded_parts(self) -> tuple[bytes, bytes, bytes]: ...
    def push_named(
        self,
        hashes: ReadableBuffer,
        found: ReadableBuffer,
        names: Sequence[bytes],
        current: bytes,
        rows: int,
        /,
    ) -> tuple[bytes, bytes, tuple[int, int], bytes, bytes]: ...
    def end_named(self) -> tuple[bytes, bytes, tuple[int, int], bytes, bytes]: ...

class SizeDecider:
    """The rule with a minimum size in C (engine.sized.SizeDecider's twin)."""

    @property
    def decided(self) -> int: ...
    @property
    def remembered(self) -> int: ...
    def __init__(
        self,
        window: int,
        min_size: int,
        history: int | None = None,
        seed: int = 0,
        cap: int = ...,
        force_collisions: bool = False,
    ) -> None: ...
    def push(self, hashes: ReadableBuffer, sizes: ReadableBuffer, /) -> list[bool]: ...
    def finish(self) -> list[bool]: ...
    def new_input(self) -> None: ...
    def track_new(self) -> None: ...
    def take_new(self) -> bytes: ...
    def add_library(
        self, sequences: Sequence[tuple[ReadableBuffer, ReadableBuffer]], /
    ) -> None: ...
