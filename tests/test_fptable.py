from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.fptable import FirstStartTable


def reference(batches):
    """A dict, with fingerprint 0 stored as 1 as the table does (0 marks a free slot)."""
    first: dict[int, int] = {}
    out = []
    pos = 0
    for batch in batches:
        out.append([first.setdefault(k or 1, pos + i) for i, k in enumerate(batch)])
        pos += len(batch)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.one_of(st.integers(-3, 3), st.integers(-(2**63), 2**63 - 1)), max_size=400),
        max_size=8,
    )
)
def test_first_starts_match_a_dict(batches):
    table = FirstStartTable()
    pos = 0
    got = []
    for batch in batches:
        keys = np.array(batch, dtype=np.int64)
        got.append(table.first_starts(keys, np.arange(pos, pos + len(batch))).tolist())
        pos += len(batch)
    assert got == reference(batches)


def test_growth_keeps_every_entry_and_half_empty():
    rng = np.random.default_rng(5)
    keys = rng.integers(-(2**63), 2**63 - 1, size=50_000, dtype=np.int64)
    table = FirstStartTable()
    table.first_starts(keys, np.arange(50_000))
    assert len(table) == len(set(keys.tolist()))
    # At most half full (16-byte slots), and never more than twice the room needed.
    assert 32 * len(table) <= table.nbytes <= 64 * len(table)
    again = table.first_starts(keys[::-1].copy(), np.arange(50_000, 100_000))
    assert again.tolist() == list(range(50_000))[::-1]
