from __future__ import annotations

import io
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seqdedup.errors import UsageError
from seqdedup.records import RecordSplitter, parse_delimiter, parse_hex_delimiter, read_chunks


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\n", b"\n"),
        ("\\t", b"\t"),
        ("\\0", b"\0"),
        ("\\r\\n", b"\r\n"),
        ("\\\\", b"\\"),
        ("|", b"|"),
        ("--", b"--"),
        ("é", "é".encode()),
    ],
)
def test_parse_delimiter(text, expected):
    assert parse_delimiter(text) == expected


@pytest.mark.parametrize("text", ["", "\\q", "\\"])
def test_parse_delimiter_rejects(text):
    with pytest.raises(UsageError, match="--delimiter"):
        parse_delimiter(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("00", b"\0"), ("0x0d0a", b"\r\n"), ("0X0A", b"\n"), ("ff00ff", b"\xff\0\xff")],
)
def test_parse_hex_delimiter(text, expected):
    assert parse_hex_delimiter(text) == expected


@pytest.mark.parametrize("text", ["", "0x", "abc", "zz", "0x0g"])
def test_parse_hex_delimiter_rejects(text):
    with pytest.raises(UsageError, match="--delimiter-hex"):
        parse_hex_delimiter(text)


@given(
    data=st.binary(max_size=300).map(lambda b: b.replace(b"\x01", b"ab")),
    cuts=st.lists(st.integers(0, 300), max_size=12),
    delimiter=st.sampled_from([b"\n", b"ab", b"aba", b"\0"]),
)
def test_splitting_is_independent_of_chunk_boundaries(data, cuts, delimiter):
    splitter = RecordSplitter(delimiter)
    records: list[bytes] = []
    edges = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    for a, b in itertools.pairwise(edges):
        records += splitter.split(data[a:b])
    final = splitter.finish()
    expected = data.split(delimiter)
    last = expected.pop()
    assert records == expected
    assert final == (last or None)


def test_read_chunks_hands_on_partial_reads():
    class Trickle(io.RawIOBase):
        def __init__(self):
            self.parts = [b"a\n", b"b", b"\nc"]

        def readable(self):
            return True

        def read(self, size=-1):
            return self.parts.pop(0) if self.parts else b""

    assert list(read_chunks(Trickle())) == [b"a\n", b"b", b"\nc"]
