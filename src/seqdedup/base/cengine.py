"""The compiled kernel's engine (``seqdedup._kernel``, imported when one is made): the
names of the ``Engine`` protocol bound to the kernel's functions, and the kernel's own
stages (its matchers, attribution, stream matcher, decider and the functions of
another shape), each typed by ``_kernel.pyi``. :mod:`seqdedup.engine.choice` makes it
where the C engine is chosen; it lives in ``base`` so that every layer can name its
type."""

from __future__ import annotations

from array import array
from collections.abc import Callable

from seqdedup.base.hashes import SEED
from seqdedup.base.records import Buffer, Int64s

# (region, bounds, literal, anchored, open) -> a byte a record: the kernel's one pass
LiteralMask = Callable[[bytes, bytes, bytes, bool, bytes], bytes]

RECORD_SEED = 2  # (a verbatim line's bytes, to find the distinct ones: SEED ^ RECORD_SEED)
# The timestamp class's bit (config.normalize.TIMESTAMP; a test holds them equal): that
# module is imported only by runs that normalise.
TIMESTAMP = 1


class CEngine:
    """The compiled kernel's engine: its functions under the shared names (each answer
    read in place where the kernel hands back int64 bytes)."""

    name = "c"

    def __init__(self) -> None:
        from seqdedup import _kernel as kernel  # (ImportError where it is not built)

        self.literal_mask: LiteralMask | None = kernel.literal_mask
        self.take = kernel.take
        self.put = kernel.put
        self.gather = kernel.gather
        self.normalize = kernel.normalize
        self.literal_hits = kernel.literal_hits
        self.spread_tracebacks = kernel.spread_tracebacks
        self.occurrences = kernel.occurrences
        self.tally = kernel.tally
        self.chains = kernel.chains
        self.chain_counts = kernel.chain_counts
        self.broken_fragments = kernel.broken_fragments
        self.shortest_period = kernel.shortest_period
        self.periodic_match = kernel.periodic_match
        self.distinct_copies = kernel.distinct_copies
        self.mark_runs = kernel.mark_runs
        self.key_table = kernel.KeyTable
        self._bounds = kernel.record_bounds
        self._flags = kernel.flag_positions
        self._tokens = kernel.token_counts
        self._first_match = kernel.first_match
        self._value_matches = kernel.value_matches
        self._distinct = kernel.distinct_records
        # The kernel's own functions, for the stages only it has (typed by _kernel.pyi)
        self.hash_records = kernel.hash_records
        self.hash_encoded = kernel.hash_encoded
        self.hash_encoded_rows = kernel.hash_encoded_rows
        self.split_hash = kernel.split_hash
        self.bounds_hash = kernel.bounds_hash
        self.token_counts = kernel.token_counts
        self.json_keys = kernel.json_keys
        self.stream_prefixes = kernel.stream_prefixes
        self.encode_joined = kernel.encode_joined
        self.skip_records = kernel.skip_records
        self.fold_shape = kernel.fold_shape
        self.library_windows = kernel.library_windows
        self.window_tally = kernel.window_tally
        self.window_keys = kernel.window_keys
        self.first_windows = kernel.first_windows
        self.earliest = kernel.earliest
        self.chunk_matcher = kernel.Matcher  # (the matcher with the chunk path)
        self.attributor = kernel.Attributor
        self.stream_matcher = kernel.StreamMatcher
        self.size_decider = kernel.SizeDecider

    @property
    def kernel(self) -> CEngine:
        """The kernel's own functions: this engine's (see ``Engine.kernel``)."""
        return self

    def record_bounds(self, data: Buffer, delimiter: bytes) -> Int64s:
        return memoryview(self._bounds(data, delimiter)).cast("q")

    def flag_positions(self, flags: bytes | bytearray) -> Int64s:
        return memoryview(self._flags(flags)).cast("q")

    def record_tokens(self, data: Buffer | memoryview, bounds: Int64s) -> array[int]:
        return array("q", self._tokens(data, bounds))

    def token_sums(self, data: Buffer | memoryview, bounds: Int64s) -> Int64s:
        return memoryview(self._tokens(data, bounds, True)).cast("q")

    def first_timestamp(self, record: bytes) -> str:
        found = self._first_match(record, TIMESTAMP)
        return record[found[0] : found[1]].decode("ascii") if found else ""

    def value_matches(self, record: bytes, bits: int) -> list[tuple[int, int, int]]:
        triples = array("q", self._value_matches(record, bits))
        return list(zip(triples[0::3], triples[1::3], triples[2::3], strict=True))

    def distinct_records(
        self, data: Buffer, bounds: Int64s, flags: bytes | bytearray
    ) -> tuple[bytes, bytes]:
        return self._distinct(data, bounds, flags, SEED ^ RECORD_SEED)
