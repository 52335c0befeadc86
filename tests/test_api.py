from __future__ import annotations

import io
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Config, Deduplicator, UsageError, deduplicate
from seqdedup.api import process_stream

from oracle import kept

alphabet_lists = st.integers(1, 5).flatmap(
    lambda k: st.lists(st.sampled_from(["a", "b", "c", "d", "e"][:k]), max_size=200)
)


@settings(max_examples=150, deadline=None)
@given(records=alphabet_lists, window=st.integers(1, 12), history=st.sampled_from([None, 100]))
def test_deduplicate_matches_oracle(records, window, history):
    out = list(deduplicate(records, window_size=window, max_history=history, batch_size=7))
    assert out == kept(records, window, history)


@settings(max_examples=100, deadline=None)
@given(
    records=alphabet_lists,
    window=st.integers(1, 8),
    delimiter=st.sampled_from([b"\n", b"\0", b"||"]),
    trailing=st.booleans(),
    cuts=st.lists(st.integers(0, 2000), max_size=10),
)
def test_process_stream_matches_oracle_across_chunkings(records, window, delimiter, trailing, cuts):
    data = delimiter.join(r.encode() for r in records)
    if records and trailing:
        data += delimiter

    class Chunked(io.RawIOBase):
        def __init__(self):
            edges = sorted({0, len(data), *(c for c in cuts if c < len(data))})
            self.parts = [data[a:b] for a, b in itertools.pairwise(edges)]

        def read(self, size=-1):
            return self.parts.pop(0) if self.parts else b""

    sink = io.BytesIO()
    stats = process_stream(Chunked(), sink, window_size=window, delimiter=delimiter)
    want = [r.encode() for r in kept(records, window)]
    expected = delimiter.join(want)
    final_kept = bool(records) and not trailing and bool(want) and kept_last(records, window)
    if want and not final_kept:
        expected += delimiter
    assert sink.getvalue() == expected
    assert stats.total == len(records) == stats.emitted + stats.skipped


def kept_last(records, window):
    from oracle import skipped_flags

    return not skipped_flags(records, window)[-1]


def test_final_record_without_delimiter_keeps_none():
    sink = io.BytesIO()
    process_stream(io.BytesIO(b"x\na\nx\na"), sink, window_size=1)
    assert sink.getvalue() == b"x\na\n"  # the final 'a' was skipped: its twin keeps "\n"
    sink = io.BytesIO()
    process_stream(io.BytesIO(b"x\nx\ny"), sink, window_size=1)
    assert sink.getvalue() == b"x\ny"


def test_empty_records_are_records():
    assert list(deduplicate(["", "", "a", "", ""], window_size=2)) == ["", "", "a"]


def test_bytes_in_bytes_out_and_invalid_utf8_untouched():
    records = [b"\xff\xfe", b"ok", b"\xff\xfe", b"ok"]
    assert list(deduplicate(records, window_size=2)) == [b"\xff\xfe", b"ok"]


def test_streaming_output_lags_by_window_minus_one():
    d = Deduplicator(window_size=3)
    assert d.feed([b"a", b"b"]) == []
    assert d.feed([b"c"]) == [b"a"]
    assert d.feed([b"d"]) == [b"b"]
    assert d.flush() == [b"c", b"d"]
    assert d.stats.total == 4


def test_stats_count_sequences():
    d = Deduplicator(window_size=2)
    d.feed([b"a", b"b", b"x", b"a", b"b", b"y", b"a", b"b", b"z", b"c", b"d", b"c", b"d"])
    d.flush()
    assert d.stats.skipped == 6
    assert d.stats.unique_sequences == 2  # "a b" (twice repeated) and "c d"
    assert d.stats.redundancy_pct == pytest.approx(100 * 6 / 13)


def test_config_validation_names_the_option():
    with pytest.raises(UsageError, match="--window-size"):
        Config(window_size=0)
    with pytest.raises(UsageError, match="--max-history"):
        Config(max_history=50)
    with pytest.raises(UsageError, match="at least --window-size"):
        Config(window_size=200, max_history=150)
    with pytest.raises(TypeError):
        Deduplicator(Config(), window_size=3)


# Every test here runs once per engine (compiled kernel and pure Python).
pytestmark = pytest.mark.usefixtures("engine")


def test_explain_without_a_callback_collects_the_lines():
    d = Deduplicator(window_size=1, explain=True)
    assert d.feed([b"a", b"b", b"a"]) + d.flush() == [b"a", b"b"]
    assert d.explanations == ["EXPLAIN: Line 3 skipped (duplicate of line 1, seen 2x)"]
    heard: list[str] = []
    d = Deduplicator(window_size=1, explain=True, on_explain=heard.append)
    d.feed([b"a", b"a"])
    d.flush()
    assert heard == ["EXPLAIN: Line 2 skipped (duplicate of line 1, seen 2x)"]
    assert d.explanations == []
