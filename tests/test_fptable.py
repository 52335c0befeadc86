from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.base.hashes import hash_ints, hash_lanes
from seqdedup.engine.fptable import FirstStartTable

from conftest import examples


def reference(batches):
    """A dict from fingerprint to first start."""
    first: dict[int, int] = {}
    out = []
    pos = 0
    for batch in batches:
        out.append([first.setdefault(k, pos + i) for i, k in enumerate(batch)])
        pos += len(batch)
    return out


small_or_one_lane = st.one_of(
    st.integers(0, 3),  # 0 is kept beside the slots (both lanes 0 mark a free slot)
    st.integers(0, 3).map(lambda k: k << 64),  # equal low lanes
    st.integers(0, 2**128 - 1),
)


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.lists(small_or_one_lane, max_size=400),
        max_size=8,
    )
)
def test_first_starts_match_a_dict(batches):
    table = FirstStartTable()
    pos = 0
    got = []
    for batch in batches:
        keys = hash_lanes(batch)
        got.append(table.first_starts(keys, np.arange(pos, pos + len(batch))).tolist())
        assert table.find(keys, -1).tolist() == got[-1]
        pos += len(batch)
    assert got == reference(batches)


def test_growth_keeps_every_entry_and_half_empty():
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**64 - 1, size=(50_000, 2), dtype=np.uint64)
    table = FirstStartTable()
    table.first_starts(keys, np.arange(50_000))
    assert len(table) == len(set(hash_ints(keys)))
    # At most half full (24-byte slots), and never more than twice the room needed.
    assert 48 * len(table) <= table.nbytes <= 96 * len(table)
    again = table.first_starts(keys[::-1].copy(), np.arange(50_000, 100_000))
    assert again.tolist() == list(range(50_000))[::-1]
