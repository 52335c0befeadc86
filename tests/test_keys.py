from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seqdedup import deduplicate
from seqdedup.keys import KeyMaker


def test_skip_chars_counts_characters_in_text_mode():
    keys = KeyMaker(skip_chars=2).keys(["éé-x".encode(), b"ab-x", b"a"])
    assert keys == [b"-x", b"-x", b""]


def test_skip_chars_counts_bytes_in_byte_mode():
    assert KeyMaker(skip_chars=1, byte_mode=True).keys(["éx".encode()]) == [b"\xa9x"]


@given(st.binary(max_size=40), st.integers(0, 10))
def test_invalid_utf8_never_fails_and_record_is_untouched(record, skip):
    key = KeyMaker(skip_chars=skip).keys([record])[0]
    # What is written is the record as read (never its key or a re-encoding of it).
    assert list(deduplicate([record, record], window_size=1, skip_chars=skip)) == [record]
    text = record.decode("utf-8", "surrogateescape")
    assert key == text[skip:].encode("utf-8", "surrogateescape")


def test_hashes_equal_for_equal_keys():
    maker = KeyMaker(skip_chars=3)
    a, b, c = maker.hashes([b"12:hello", b"34:hello", b"12:world"])
    assert a == b != c
