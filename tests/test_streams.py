"""Several inputs as one run (README: Several files): each input is its own stream (no
window spans two), every window of an earlier one counts as seen, record numbers in
markers and explanations count inside each input."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Deduplicator
from seqdedup.base.hashes import hash_words
from seqdedup.config.groups import FilterRule
from seqdedup.engine import matcher
from seqdedup.engine.choice import chosen_engine, compiled
from seqdedup.engine.matcher import WindowMatcher

from conftest import examples
from oracle import attribution_pieces_streams, skipped_flags_streams

streams_strategy = st.integers(1, 4).flatmap(
    lambda k: st.lists(st.lists(st.sampled_from("abcd"[:k]), max_size=60), min_size=1, max_size=5)
)
MARKER = "M {file} {start} {end} {match_file} {match_start} {match_end}"


def names(streams: list[list[str]]) -> tuple[str, ...]:
    return tuple(f"f{n}" for n in range(len(streams)))


def numbered(keys: list[str]) -> list[bytes]:
    """Records "00001a": a record number, then the key (skip_chars=5 drops the number)."""
    return [f"{n:05d}{k}".encode() for n, k in enumerate(keys, start=1)]


def push_streams(m, streams, chunk):
    keep: list[bool] = []
    for number, keys in enumerate(streams):
        if number:
            m.new_input()
        hashes = [hash(k) for k in keys]
        for at in range(0, len(hashes), chunk):
            keep += m.push(hashes[at : at + chunk])
        keep += m.finish()
    return keep


@settings(max_examples=examples(300), deadline=None)
@given(
    streams=streams_strategy,
    window=st.integers(1, 8),
    history=st.one_of(st.none(), st.integers(100, 140)),
    chunk=st.integers(1, 50),
    numpy_threshold=st.sampled_from([1, 2048]),
)
def test_both_matchers_follow_the_oracle_across_streams(
    streams, window, history, chunk, numpy_threshold
):
    want = [not s for s in skipped_flags_streams(streams, window, history)]
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(matcher, "NUMPY_MIN_WINDOWS", numpy_threshold)
        assert push_streams(WindowMatcher(window, history), streams, chunk) == want
    finally:
        mp.undo()
    kernel = compiled(chosen_engine())
    if kernel is not None:
        as_int64 = [[hash(k) for k in keys] for keys in streams]
        m = kernel.chunk_matcher(window, history)
        got: list[bool] = []
        for number, hashes in enumerate(as_int64):
            if number:
                m.new_input()
            for at in range(0, len(hashes), chunk):
                got += m.push(hash_words(hashes[at : at + chunk]))
            got += m.finish()
        assert got == want


def test_new_stream_comes_after_finish():
    m = WindowMatcher(3, None)
    m.push([1, 2])
    with pytest.raises(RuntimeError, match="after finish"):
        m.new_input()


def run_records(streams, window, history=None, chunk=7, **options):
    """Feed each stream's numbered records, in batches, ending each with next_input()."""
    d = Deduplicator(
        window_size=window, max_history=history, skip_chars=5, inputs=names(streams), **options
    )
    out: list[bytes] = []
    for number, keys in enumerate(streams):
        if number:
            out += d.next_input()
        records = numbered(keys)
        for at in range(0, len(records), chunk):
            out += d.feed(records[at : at + chunk])
    out += d.flush()
    return [o.decode() for o in out], d


def expected_kept(streams, window, history=None):
    skipped = iter(skipped_flags_streams(streams, window, history))
    return [r.decode() for keys in streams for r in numbered(keys) if not next(skipped)]


@pytest.mark.usefixtures("engine")
class TestDeduplicator:
    @settings(max_examples=examples(150), deadline=None)
    @given(
        streams=streams_strategy,
        window=st.integers(1, 6),
        history=st.one_of(st.none(), st.integers(100, 140)),
        chunk=st.integers(1, 20),
    )
    def test_records_and_markers_follow_the_oracle(self, streams, window, history, chunk):
        out, d = run_records(
            streams, window, history, chunk, annotate=True, annotation_format=MARKER
        )
        assert [o for o in out if not o.startswith("M ")] == expected_kept(streams, window, history)
        if history is None:  # attribution's oracle: unlimited history
            where = [(f"f{n}", line) for n, keys in enumerate(streams) for line in range(len(keys))]
            pieces = [
                (*where[start], *where[end], *where[source])
                for start, end, source in attribution_pieces_streams(streams, window, 10)
            ]
            markers = [o.split()[1:] for o in out if o.startswith("M ")]
            assert markers == [
                [f, str(s + 1), str(e + 1), mf, str(ms + 1), str(ms + 1 + e - s)]
                for f, s, _, e, mf, ms in pieces
            ]
        files = d.stats.files
        if len(streams) == 1:  # one input: no per-input rows
            assert files is None
            return
        assert files is not None
        assert [row["name"] for row in files] == list(names(streams))
        assert [row["lines"]["total"] for row in files] == [len(s) for s in streams]
        assert sum(row["lines"]["skipped"] for row in files) == d.stats.skipped

    @settings(max_examples=examples(150), deadline=None)
    @given(
        streams=streams_strategy,
        window=st.integers(1, 6),
        bare=st.lists(st.booleans(), min_size=5, max_size=5),
        cuts=st.lists(st.integers(1, 30), min_size=1, max_size=8),
    )
    def test_bytes_in_any_cut_give_the_oracle(self, streams, window, bare, cuts):
        """The kernel's chunk path (or the splitter): a stream's final record without a
        delimiter gets one when another stream follows, and stays bare at the end."""
        d = Deduplicator(window_size=window, skip_chars=5, inputs=names(streams))
        out = b""
        datas = []
        for number, keys in enumerate(streams):
            data = b"".join(r + b"\n" for r in numbered(keys))
            if bare[number] and data:
                data = data[:-1]
            datas.append(data)
            if number:
                out += d.next_input_bytes()
            at = 0
            for size in cuts * (len(data) // sum(cuts) + 1):
                if at >= len(data):
                    break
                out += d.feed_bytes(data[at : at + size])
                at += size
        out += d.flush_bytes()
        skipped = skipped_flags_streams(streams, window)
        want = "".join(r.decode() + "\n" for keys in streams for r in numbered(keys)).split("\n")[
            :-1
        ]
        want = "".join(r + "\n" for r, s in zip(want, skipped, strict=True) if not s)
        if bare[len(streams) - 1] and streams[-1] and not skipped[-1]:
            want = want[:-1]  # the input's final record, written as read
        assert out.decode() == want

    @settings(max_examples=examples(60), deadline=None)
    @given(streams=streams_strategy, window=st.integers(1, 5))
    def test_one_run_equals_runs_in_turn_with_a_shared_library(self, streams, window):
        together, _ = run_records(streams, window)
        in_turn: list[str] = []
        with tempfile.TemporaryDirectory() as library:
            for keys in streams:
                d = Deduplicator(
                    window_size=window, max_history=None, skip_chars=5, library_dir=Path(library)
                )
                in_turn += [o.decode() for o in d.feed(numbered(keys)) + d.flush()]
        assert together == in_turn

    @settings(max_examples=examples(60), deadline=None)
    @given(
        streams=streams_strategy,
        window=st.integers(1, 5),
        later=st.lists(st.sampled_from("abcd"), max_size=40),
    )
    def test_a_library_saved_by_several_inputs_is_what_they_observed(self, streams, window, later):
        """Saved together or one by one, the library makes a later run skip the same."""
        outputs = []
        for together in (True, False):
            with tempfile.TemporaryDirectory() as directory:
                library = Path(directory)
                if together:
                    run_records(streams, window, library_dir=library)
                else:
                    for keys in streams:
                        d = Deduplicator(
                            window_size=window, max_history=None, skip_chars=5, library_dir=library
                        )
                        d.feed(numbered(keys))
                        d.flush()
                d = Deduplicator(window_size=window, skip_chars=5, read_sequences=(library,))
                outputs.append(d.feed(numbered(later)) + d.flush())
        assert outputs[0] == outputs[1]
        # and what it skips is the oracle's, every earlier window seen
        flags = skipped_flags_streams([*streams, later], window)
        skipped = flags[len(flags) - len(later) :]
        assert [o.decode() for o in outputs[0]] == [
            r.decode() for r, s in zip(numbered(later), skipped, strict=True) if not s
        ]

    @settings(max_examples=examples(80), deadline=None)
    @given(streams=streams_strategy, window=st.integers(1, 5))
    def test_filters_pass_records_through_in_each_stream(self, streams, window):
        """Records with key "d" are bypassed: they pass through and take no part."""
        out, d = run_records(streams, window, filters=(FilterRule("bypass", "d$"),), explain=True)
        tracked = [[k for k in keys if k != "d"] for keys in streams]
        skipped = iter(skipped_flags_streams(tracked, window))
        want = [
            r.decode()
            for keys in streams
            for k, r in zip(keys, numbered(keys), strict=True)
            if k == "d" or not next(skipped)
        ]
        assert out == want
        bypassed = [
            f"EXPLAIN: Line {n}{f' of f{s}' if len(streams) > 1 else ''} bypassed "
            "(matched bypass pattern 'd$')"
            for s, keys in enumerate(streams)
            for n, k in enumerate(keys, start=1)
            if k == "d"
        ]
        assert [line for line in d.explanations if "bypassed" in line] == bypassed


def test_default_texts_name_the_files():
    d = Deduplicator(window_size=2, annotate=True, explain=True, inputs=("a.log", "b.log"))
    out = d.feed([b"x", b"y", b"z"]) + d.next_input() + d.feed([b"n", b"x", b"y"]) + d.flush()
    assert out == [
        b"x",
        b"y",
        b"z",
        b"n",
        b"[DUPLICATE: Lines 2-3 of b.log matched lines 1-2 of a.log (sequence seen 2 times)]",
    ]
    assert d.explanations == [
        "EXPLAIN: Lines 2-3 of b.log skipped (duplicate of lines 1-2 of a.log, seen 2x)"
    ]


def test_one_input_keeps_the_plain_texts_and_fills_file():
    d = Deduplicator(
        window_size=2, annotate=True, annotation_format="{file}:{start}", inputs=("a.log",)
    )
    assert d.feed([b"x", b"y", b"x", b"y"]) + d.flush() == [b"x", b"y", b"a.log:3"]
    d = Deduplicator(window_size=2, annotate=True, inputs=("a.log",))
    assert d.feed([b"x", b"y", b"x", b"y"]) + d.flush() == [
        b"x",
        b"y",
        b"[DUPLICATE: Lines 3-4 matched lines 1-2 (sequence seen 2 times)]",
    ]
    assert d.stats.files is None


def test_a_run_never_spans_two_streams():
    """The end of one input and the start of the next are two runs: two markers, each
    source inside one input."""
    d = Deduplicator(window_size=2, annotate=True, annotation_format=MARKER, inputs=("a", "b", "c"))
    out = (
        d.feed([b"p", b"q", b"r", b"s"])
        + d.next_input()
        + d.feed([b"k", b"p", b"q"])
        + d.next_input()
        + d.feed([b"r", b"s", b"t"])
        + d.flush()
    )
    assert [o for o in out if o.startswith(b"M")] == [b"M b 2 3 a 1 2", b"M c 1 2 a 3 4"]


# -- the installed command ------------------------------------------------------------


@pytest.fixture
def logs(tmp_path):
    (tmp_path / "a.log").write_bytes(b"start\nboom\n  at f\n  at g\nend\n")
    (tmp_path / "b.log").write_bytes(b"hello\nboom\n  at f\n  at g\nbye")  # no final newline
    (tmp_path / "c.log.gz").write_bytes(gzip.compress(b"boom\n  at f\n  at g\nlast\n"))
    return tmp_path


def test_several_files_one_output_markers_name_them(run_cli, logs):
    p = run_cli(["-w", "3", "-a", "-q", "a.log", "b.log", "c.log.gz"], cwd=logs)
    assert p.returncode == 0, p.stderr
    assert p.stderr == b""
    assert p.stdout.decode().splitlines() == [
        "start",
        "boom",
        "  at f",
        "  at g",
        "end",
        "hello",
        "[DUPLICATE: Lines 2-4 of b.log matched lines 2-4 of a.log (sequence seen 2 times)]",
        "bye",  # b.log had no final newline: the next file's records follow on their own
        "[DUPLICATE: Lines 1-3 of c.log.gz matched lines 2-4 of a.log (sequence seen 3 times)]",
        "last",
    ]


def test_standard_input_among_files_and_statistics_per_file(run_cli, logs):
    p = run_cli(
        ["-w", "3", "--stats-format", "json", "-e", "a.log", "-", "b.log"],
        input_bytes=b"boom\n  at f\n  at g\n",
        cwd=logs,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"start\nboom\n  at f\n  at g\nend\nhello\nbye"
    err = p.stderr.decode()
    explained, document = err.split("\n{", 1)
    assert explained.splitlines() == [
        "EXPLAIN: Lines 1-3 of (standard input) skipped (duplicate of lines 2-4 of a.log, seen 2x)",
        "EXPLAIN: Lines 2-4 of b.log skipped (duplicate of lines 2-4 of a.log, seen 3x)",
    ]
    statistics = json.loads("{" + document)["statistics"]
    assert statistics["lines"] == {"total": 13, "emitted": 7, "skipped": 6}
    assert statistics["files"] == [
        {"name": "a.log", "lines": {"total": 5, "emitted": 5, "skipped": 0}},
        {"name": "(standard input)", "lines": {"total": 3, "emitted": 0, "skipped": 3}},
        {"name": "b.log", "lines": {"total": 5, "emitted": 2, "skipped": 3}},
    ]
    assert json.loads("{" + document)["configuration"]["max_history"] == "unlimited"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["a.log", "missing.log"], "cannot open input 'missing.log'"),
        (["missing.log", "a.log"], "cannot open input 'missing.log'"),
        (["a.log", "."], "input '.' is a directory"),
        (["-", "a.log", "-"], "standard input ('-') can be named only once"),
    ],
)
def test_a_bad_input_among_several_is_an_error_before_any_output(run_cli, logs, args, message):
    p = run_cli(["-w", "2", *args], input_bytes=b"x\n", cwd=logs)
    assert p.returncode == 1
    assert p.stdout == b""
    assert message in p.stderr.decode()
    assert len(p.stderr.decode().splitlines()) == 1


def test_max_history_applies_across_files(run_cli, tmp_path):
    """-m counts the records of earlier files too; without it nothing is forgotten."""
    first = b"".join(b"%d\n" % n for n in range(300))
    (tmp_path / "one").write_bytes(first)
    (tmp_path / "two").write_bytes(first[:20])
    unlimited = run_cli(["-q", "-w", "5", "one", "two"], cwd=tmp_path)
    assert unlimited.stdout == first
    limited = run_cli(["-q", "-w", "5", "-m", "100", "one", "two"], cwd=tmp_path)
    assert limited.stdout == first + first[:20]


def test_a_named_pipe_among_files_loses_nothing(run_cli, logs):
    """Inputs are checked before any output, but a pipe is not opened for that: a
    writer would lose what it wrote between the check and the reading."""
    import os
    import threading

    fifo = logs / "live"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as pipe:
            pipe.write(b"boom\n  at f\n  at g\nfresh\n")

    writer = threading.Thread(target=write)
    writer.start()
    p = run_cli(["-q", "-w", "3", "a.log", "live"], cwd=logs, timeout=20)
    writer.join(timeout=20)
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"start\nboom\n  at f\n  at g\nend\nfresh\n"


def test_top_says_in_which_input_a_sequence_was_first_seen():
    d = Deduplicator(window_size=2, top=3, inputs=("a.log", "b.log"))
    d.feed([b"x", b"p", b"q"])
    d.next_input()
    d.feed([b"p", b"q", b"y"])
    d.flush()
    assert d.stats.top_sequences == [
        {
            "removed": 2,
            "seen": 2,
            "length": 2,
            "first_seen": {"lines": [2, 3], "file": "a.log"},
            "first_record": "p",
        }
    ]
