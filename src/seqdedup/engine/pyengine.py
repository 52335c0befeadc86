"""The pure-Python engine: every name of the ``Engine`` protocol bound to a function of
this package, no compiled code (``engine.choice`` picks it or the C engine; imported
only where a run takes it, so a run on the kernel never loads these twins)."""

from __future__ import annotations

from array import array
from itertools import accumulate

from seqdedup.base.cengine import CEngine
from seqdedup.base.engine import Engine, LiteralMask, Table
from seqdedup.base.records import (
    Buffer,
    Int64s,
    python_flag_positions,
    python_gather,
    python_put,
    python_record_bounds,
    python_take,
)
from seqdedup.base.tokens import python_record_tokens
from seqdedup.engine import pykernel


class PythonEngine:
    """The pure-Python engine: every name a function of this package (no compiled code)."""

    name = "python"
    kernel: CEngine | None = None  # (no compiled kernel)
    literal_mask: LiteralMask | None = None

    record_bounds = staticmethod(python_record_bounds)
    flag_positions = staticmethod(python_flag_positions)
    take = staticmethod(python_take)
    put = staticmethod(python_put)
    gather = staticmethod(python_gather)
    record_tokens = staticmethod(python_record_tokens)
    literal_hits = staticmethod(pykernel.python_literal_hits)
    spread_tracebacks = staticmethod(pykernel.python_spread_tracebacks)
    occurrences = staticmethod(pykernel.python_occurrences)
    distinct_records = staticmethod(pykernel.python_distinct_records)
    tally = staticmethod(pykernel.python_tally)
    chains = staticmethod(pykernel.python_chains)
    chain_counts = staticmethod(pykernel.python_chain_counts)
    broken_fragments = staticmethod(pykernel.python_broken_fragments)
    shortest_period = staticmethod(pykernel.shortest_period)
    periodic_match = staticmethod(pykernel.periodic_match)
    distinct_copies = staticmethod(pykernel.distinct_copies)
    mark_runs = staticmethod(pykernel.python_mark_runs)

    @staticmethod
    def token_sums(data: Buffer | memoryview, bounds: Int64s) -> Int64s:
        return array("q", accumulate(python_record_tokens(data, bounds), initial=0))

    # (the classes' expressions: config.normalize, imported where a run normalises)
    @staticmethod
    def normalize(record: bytes, bits: int) -> bytes:
        from seqdedup.config.normalize import normalize_py

        return normalize_py(record, bits)

    @staticmethod
    def first_timestamp(record: bytes) -> str:
        from seqdedup.config.normalize import first_timestamp

        return first_timestamp(record)

    @staticmethod
    def value_matches(record: bytes, bits: int) -> list[tuple[int, int, int]]:
        from seqdedup.config.normalize import python_value_matches

        return python_value_matches(record, bits)

    @staticmethod
    def key_table() -> Table:
        return pykernel.KeyTable()


PYTHON: Engine = PythonEngine()
