from __future__ import annotations

from seqdedup.engine.pieces import SequenceTable


def test_counts_start_at_two_and_grow():
    table = SequenceTable(None)
    assert table.observe(7) == 2
    assert table.observe(7) == 3
    assert table.observe(8) == 2
    assert table.identified == 2


def test_least_recently_seen_is_evicted():
    table = SequenceTable(2)
    table.observe(1)
    table.observe(2)
    table.observe(1)  # 2 is now the least recently seen
    table.observe(3)
    assert len(table) == 2
    assert table.observe(1) == 4  # kept
    assert table.observe(2) == 2  # evicted, starts again
    assert table.identified == 3  # distinct sequences identified, evicted or not
