from __future__ import annotations

import io
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.base.errors import UsageError
from seqdedup.base.records import RecordSplitter, parse_delimiter, parse_hex_delimiter, read_chunks

from conftest import every_engine, examples


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


# -- the final record and the newline that ends the input ------------------------------


@pytest.mark.parametrize("engine", ["c", "python"])
def test_a_newline_ending_the_input_is_not_part_of_the_last_record(tmp_path, engine):
    """Text mode with another delimiter: the newline (or CRLF) that ends the input ends
    the last record as a delimiter would. It is not part of what a library saves (a
    later run recognises the windows), nor of a fold line's sequence id, on a named
    file as on standard input, in both engines."""
    import json

    from conftest import run_in_process, user_env

    env = {**user_env(), "SEQDEDUP_ENGINE": engine}

    def run(*args: str, data: bytes = b"") -> bytes:
        done = run_in_process(list(args), data, env)  # (the command's own main)
        assert done.returncode == 0, done.stderr
        return done.stdout

    for ending in (b"\n", b"\r\n"):
        (tmp_path / "X.txt").write_bytes(b"x\ty\tz" + ending)
        library = tmp_path / f"L{len(ending)}"
        assert run("-q", "-w", "2", "-d", "\\t", "-l", str(library), str(tmp_path / "X.txt")) == (
            b"x\ty\tz" + ending
        )
        assert run("-q", "-w", "2", "-d", "\\t", "-r", str(library), data=b"y\tz\t") == b""
    (tmp_path / "f1.txt").write_bytes(b"b\tb\ta\tb\tb\ta\n")
    fold = ("-q", "-w", "3", "-d", "\\t", "--fold", "--fold-format", "json")

    def fold_id(output: bytes) -> str:
        kept = output.split(b"\t")
        assert kept[:3] == [b"b", b"b", b"a"]
        return str(json.loads(kept[3])["id"])

    from_file = fold_id(run(*fold, str(tmp_path / "f1.txt")))
    assert from_file == fold_id(run(*fold, data=b"b\tb\ta\tb\tb\ta\n"))
    assert from_file == fold_id(run(*fold, data=b"b\tb\ta\tb\tb\ta"))  # no newline at all


@settings(max_examples=examples(400), deadline=None)
@given(
    data=st.binary(max_size=80).map(lambda b: bytes(b"ab\n"[x % 3] for x in b)),
    delimiter=st.sampled_from([b"\n", b"a", b"ab", b"aa", b"\n\n", b"aba"]),
)
def test_record_bounds_of_either_twin_are_the_definition(data, delimiter):
    """Each record between delimiters, the last one without one kept, no empty record
    after a final delimiter (the kernel's bounds.c and the Python twin); and
    split_records gives the same records."""
    from seqdedup.base.records import split_records

    want, rest = [], data
    while rest:
        record, _, rest = rest.partition(delimiter)
        want.append(record)
    for engine in every_engine():
        bounds = engine.record_bounds(data, delimiter)
        assert [data[bounds[k] : bounds[k + 1]] for k in range(0, len(bounds), 2)] == want
    assert split_records(data, delimiter) == want


@settings(max_examples=examples(300), deadline=None)
@given(
    data=st.binary(max_size=12),
    bounds=st.lists(st.tuples(st.integers(-1, 14), st.integers(-1, 14)), max_size=5),
    picks=st.lists(st.integers(-1, 5), max_size=8),
    base=st.integers(-1, 40),
)
def test_records_gathered_by_either_twin_are_the_literal_reading(data, bounds, picks, base):
    """Records picked out of a buffer by their bounds: each picked record, joined, and
    where each ends counted from ``base``; an index past the bounds, a record outside
    the data or a negative base refused, by both twins alike."""
    from array import array

    pairs = array("q", [bound for pair in bounds for bound in pair])
    engines = every_engine()
    answers = []
    for engine in engines:
        gather = engine.gather
        try:
            joined, ends = gather(data, pairs, array("q", picks), base)
        except (IndexError, ValueError) as refused:
            answers.append(type(refused))
            continue
        texts = [data[bounds[k][0] : bounds[k][1]] for k in picks]
        assert joined == b"".join(texts), engine.name
        assert (
            list(array("q", ends)) == list(itertools.accumulate(map(len, texts), initial=base))[1:]
        )
        answers.append("gathered")
    wrong = [  # (the first pick that is wrong says why)
        IndexError if not 0 <= k < len(bounds) else ValueError
        for k in picks
        if not 0 <= k < len(bounds) or not 0 <= bounds[k][0] <= bounds[k][1] <= len(data)
    ]
    expected = ValueError if base < 0 else wrong[0] if wrong else "gathered"
    assert answers == [expected] * len(engines)
