from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.engine.pieces import SequenceTable

from conftest import examples, kernel_built


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


def _one_piece_per_record(count: int) -> tuple[list[bytes], int]:
    """A joined run of ``count`` records (as the kernel's chunk path hands it over), its
    records taken as pieces of one record each, in order: what the pieces hold, and the
    records walked to find them."""
    from seqdedup.engine.pieces import JoinedSlice, Piece, PieceContent

    records = [b"value %d" % (k % 5) for k in range(count)]
    content = PieceContent(count, b"\n")
    content.add_runs([(0, count, b"\n".join(records))])
    taken = []
    for k in range(count):
        found = content.take(Piece(k, k, 0, 1))
        assert isinstance(found, JoinedSlice)
        data, skip, length = found
        taken += bytes(data).split(b"\n")[skip : skip + length]
    return taken, content.walked


def test_a_runs_pieces_are_found_in_one_pass_over_it():
    """Each piece of a joined run was found by walking the run's records from its first
    (`-q -w 1 -l` on random lines of 5 values: 8.5 s at 40,000 lines, 42 s at 80,000);
    now from where the piece before it was: every record walked once, and twice the run
    twice the walk."""
    records, walked = _one_piece_per_record(2_000)
    assert records == [b"value %d" % (k % 5) for k in range(2_000)]
    assert walked == 1_999
    assert _one_piece_per_record(4_000)[1] <= 2.5 * walked


@settings(max_examples=examples(300), deadline=None)
@given(
    records=st.lists(st.sampled_from([b"", b"a", b"bb", b"a;b"]), max_size=30),
    delimiter=st.sampled_from([b"\n", b";", b"ab"]),
    cuts=st.lists(st.integers(0, 200), max_size=6),
    final=st.booleans(),
    picks=st.sets(st.integers(1, 32), max_size=6),
)
def test_records_picked_by_number_are_the_literal_split(records, delimiter, cuts, final, picks):
    """--top's first records read again (run.top.records_numbered), over any chunking,
    multi-byte delimiters and a last record without its delimiter: the records of those
    numbers in the input split whole."""
    from seqdedup.run.top import records_numbered

    data = delimiter.join(records) + (delimiter if final and records else b"")
    literal = data.split(delimiter)
    if data.endswith(delimiter) or not data:
        literal.pop()  # (a final delimiter ends the last record; nothing: no record)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in pairwise(bounds)]
    numbers = sorted(picks)
    expected = [(n, literal[n - 1]) for n in numbers if n <= len(literal)]
    assert list(records_numbered(chunks, delimiter, numbers)) == expected


@settings(max_examples=examples(300), deadline=None)
@given(
    records=st.lists(st.sampled_from([b"", b"a", b"bb", b"a;b", b"abab"]), max_size=20),
    delimiter=st.sampled_from([b"\n", b";", b"ab", b"aba"]),
    start=st.integers(0, 20),
    count=st.integers(0, 25),
)
def test_records_skipped_in_a_runs_bytes_are_the_literal_split(records, delimiter, start, count):
    """skip_records (a piece found in its run's bytes, for -l): from the start of record
    `start`, past `count` delimiters, is where record `start + count` begins in the
    literal split, or -1 past the last delimiter; the kernel's is its Python twin's."""
    from seqdedup.engine.pykernel import python_skip_records

    data = delimiter.join(records)
    offsets, at = [], 0  # where each record of the split starts
    for record in data.split(delimiter):
        offsets.append(at)
        at += len(record) + len(delimiter)
    if start >= len(offsets):
        return
    expected = offsets[start + count] if start + count < len(offsets) else -1
    assert python_skip_records(data, delimiter, offsets[start], count) == expected
    if kernel_built():
        from seqdedup import _kernel

        assert _kernel.skip_records(data, delimiter, offsets[start], count) == expected
