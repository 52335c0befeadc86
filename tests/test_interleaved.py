"""``--stream-by``: interleaved sources, the rule per stream with one shared history,
against the oracle (tests/oracle.py: interleaved_skipped) on both engines."""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
from array import array
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Deduplicator
from seqdedup.api import process_stream
from seqdedup.config.groups import FilterRule
from seqdedup.run import foldruns, stream_fold
from test_kernel import Chunked

from conftest import (
    arrived_lines,
    examples,
    kernel_built,
    library_command,
    pending,
    run_in_process,
    settled,
)
from oracle import (
    interleaved_fold_parts,
    interleaved_runs,
    interleaved_skipped,
    interleaved_skipped_sized,
    skipped_flags,
    stream_stretches,
)

PREFIX = r"^\[(\w+)\] "
# the names found by the kernel's prefix program, and (unanchored) by the pattern alone
PATTERNS = [PREFIX, PREFIX[1:]]

# A record: (stream name or None for a continuation line, key)
records_strategy = st.integers(1, 5).flatmap(
    lambda streams: st.lists(
        st.tuples(
            st.one_of(st.none(), st.sampled_from("pqrst"[:streams])),
            st.sampled_from("ab" if streams > 2 else "abc"),
        ),
        max_size=70,
    )
)


def text_of(name: str | None, key: str) -> bytes:
    return (key if name is None else f"[{name}] {key}").encode()


def feed_in_cuts(dedup: Deduplicator, records: list[bytes], cuts: list[int]) -> list[bytes]:
    out, at = [], 0
    for cut in sorted(set(cuts)):
        out += dedup.feed(records[at:cut])
        at = max(at, cut)
    return out + dedup.feed(records[at:]) + dedup.flush()


@settings(max_examples=examples(250), deadline=None)
@given(
    records=records_strategy,
    window=st.integers(1, 4),
    idle=st.one_of(st.none(), st.integers(1, 6)),
    max_streams=st.one_of(st.none(), st.integers(1, 3)),
    cuts=st.lists(st.integers(0, 70), max_size=5),
)
def test_both_engines_follow_the_oracle(engine, records, window, idle, max_streams, cuts):
    expected = interleaved_skipped(records, window, None, idle, max_streams)
    texts = [text_of(*record) for record in records]
    options = {"window_size": window, "stream_idle": idle, "max_streams": max_streams}
    dedup = Deduplicator(max_history=None, stream_by=PREFIX, **options)
    out = feed_in_cuts(dedup, texts, cuts)
    assert out == [text for text, skip in zip(texts, expected, strict=True) if not skip]
    assert dedup.stats.skipped == sum(expected)
    runs = interleaved_runs(records, expected, idle, max_streams)
    assert dedup.stats.unique_sequences == len({content for content, _ in runs})
    marked = Deduplicator(
        max_history=None, stream_by=PREFIX, annotate=True, annotation_format="{count}", **options
    )
    markers = [line for line in feed_in_cuts(marked, texts, cuts) if line not in texts]
    seen: dict[tuple[object, ...], int] = {}
    counts = []
    for content, _ in runs:  # each run's marker, in output order, counts its sequence
        seen[content] = seen.get(content, 1) + 1
        counts.append(str(seen[content]).encode())
    assert markers == counts


@settings(max_examples=examples(20), deadline=None)
@given(
    records=st.lists(
        st.tuples(st.one_of(st.none(), st.sampled_from("pq")), st.sampled_from("ab")),
        min_size=100,
        max_size=260,
    ),
    window=st.integers(1, 3),
    inverse=st.booleans(),
)
def test_a_limited_history_counts_from_the_earlier_windows_end(engine, records, window, inverse):
    expected = interleaved_skipped(records, window, 100)
    texts = [text_of(*record) for record in records]
    dedup = Deduplicator(window_size=window, max_history=100, stream_by=PREFIX, inverse=inverse)
    out = dedup.feed(texts) + dedup.flush()
    assert out == [text for text, skip in zip(texts, expected, strict=True) if skip == inverse]


@settings(max_examples=examples(120), deadline=None)
@given(
    records=st.lists(st.tuples(st.sampled_from("pq"), st.sampled_from("abc#")), max_size=60),
    window=st.integers(1, 3),
    cuts=st.lists(st.integers(0, 400), max_size=6),
)
def test_pass_through_records_take_no_part_and_any_cut_of_bytes_agrees(
    engine, records, window, cuts
):
    texts = [text_of(*record) for record in records]
    tracked = [(name, key) for name, key in records if key != "#"]
    skipped = iter(interleaved_skipped(tracked, window))
    expected = [
        text
        for text, (_, key) in zip(texts, records, strict=True)
        if key == "#" or not next(skipped)
    ]
    data = b"".join(t + b"\n" for t in texts)
    sink = io.BytesIO()
    rules = (FilterRule("bypass", "#$"),)
    process_stream(Chunked(data, cuts), sink, window_size=window, stream_by=PREFIX, filters=rules)
    assert sink.getvalue() == b"".join(t + b"\n" for t in expected)


@settings(max_examples=examples(150), deadline=None)
@given(
    keys=st.lists(st.sampled_from("abc"), max_size=80),
    window=st.integers(1, 5),
    history=st.sampled_from([None, 100]),
)
def test_one_stream_gives_exactly_todays_output(engine, keys, window, history):
    texts = [f"[p] {key}".encode() for key in keys]
    split = Deduplicator(window_size=window, max_history=history, stream_by=PREFIX)
    plain = Deduplicator(window_size=window, max_history=history, skip_chars=4)
    out = split.feed(texts) + split.flush()
    assert out == plain.feed(texts) + plain.flush()
    flags = skipped_flags(keys, window, history)
    assert out == [text for text, skip in zip(texts, flags, strict=True) if not skip]


def test_markers_and_explanations_name_both_streams(engine):
    texts = [
        b"[p1] start",
        b"[p2] start",
        b"[p1] a",
        b"[p1] b",
        b"[p2] a",
        b"[p2] b",
        b"[p1] c",
        b"[p2] x",
    ]
    dedup = Deduplicator(window_size=2, stream_by=PREFIX, annotate=True, explain=True)
    out = dedup.feed(texts) + dedup.flush()
    assert out == [
        *texts[:4],
        b"[DUPLICATE: Lines 5-6 (stream p2) matched lines 3-4 (stream p1) (sequence seen 2 times)]",
        b"[p1] c",
        b"[p2] x",
    ]
    assert dedup.explanations == [
        "EXPLAIN: Lines 5-6 (stream p2) skipped (duplicate of lines 3-4 (stream p1), seen 2x)"
    ]
    assert dedup.stats.streams == [
        {"name": "p1", "lines": {"total": 4, "emitted": 4, "skipped": 0}},
        {"name": "p2", "lines": {"total": 4, "emitted": 2, "skipped": 2}},
    ]
    assert dedup.stats.unique_sequences == 1


def test_a_stream_named_by_a_json_field_leaves_it_out_of_the_key(engine):
    def line(pod: str, msg: str) -> bytes:
        return json.dumps({"pod": pod, "msg": msg}).encode()

    texts = [line("a", "x"), line("a", "y"), line("b", "x"), b"  at frame", line("b", "y")]
    dedup = Deduplicator(window_size=2, stream_by_json="pod")
    assert dedup.feed(texts) + dedup.flush() == [*texts[:3], b"  at frame", texts[4]]
    dedup = Deduplicator(window_size=2, stream_by_json="pod")
    # without the continuation line, b's x, y repeat a's window
    assert dedup.feed(texts[:3] + texts[4:]) + dedup.flush() == texts[:2]


def test_no_window_spans_two_inputs(engine):
    dedup = Deduplicator(window_size=2, stream_by=PREFIX)
    out = dedup.feed([b"[p] a", b"[p] b"]) + dedup.next_input()
    out += dedup.feed([b"[p] b", b"[p] a", b"[p] b"]) + dedup.flush()
    assert out == [b"[p] a", b"[p] b", b"[p] b"]


def test_output_waits_only_for_the_records_own_stream(engine):
    dedup = Deduplicator(window_size=3, stream_by=PREFIX)
    assert dedup.feed([b"[p] 1", b"[p] 2", b"[p] 3"]) == [b"[p] 1"]
    # q's record waits behind p's pending ones (input order), then goes with them
    assert dedup.feed([b"[q] 1"]) == []
    assert dedup.feed([b"[p] 4", b"[p] 5"]) == [b"[p] 2", b"[p] 3"]


@pytest.mark.slow
def test_the_measured_interleaved_log_loses_its_repeats_per_stream(engine):
    """Four pods of the benchmark's generated log, interleaved in bursts of 1-3 lines:
    per stream, W=10 removes what it removes with the pods one after another."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from genlog import interleaved_lines  # type: ignore[import-not-found]

    lines, pods = interleaved_lines(100_000, sources=4, seed=1)
    assert len(pods) == 4
    mask = (("mask", r"^\[pod-\d+\] "),)
    split = Deduplicator(window_size=10, stream_by=r"^\[(pod-\d+)\] ")
    split.feed(lines) + split.flush()
    masked = Deduplicator(window_size=10, key_steps=mask)
    masked.feed(lines) + masked.flush()
    one_after_another = Deduplicator(window_size=10, key_steps=mask)
    one_after_another.feed(sorted(lines, key=lambda line: line.split(b"]")[0]))
    one_after_another.flush()
    assert split.stats.skipped / split.stats.total >= 0.20
    assert split.stats.skipped >= 0.99 * one_after_another.stats.skipped
    assert masked.stats.skipped / masked.stats.total < 0.01  # without streams


def run(args: list[str], data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """(In this process: what a run writes and says is the point here, not the process.)"""
    return run_in_process(args, data)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stream-idle", "5"], "--stream-idle requires --stream-by or --stream-by-json"),
        (["--stream-by", "(x"], "--stream-by: invalid regular expression '(x'"),
        (["--fold", "--fold-format", "{match_stream}"], "{stream} and {match_stream} need"),
        (["--stream-by", "x", "--stream-idle", "0"], "--stream-idle must be at least 1"),
        (["--stream-by", "x", "--stream-by-json", "a"], "cannot be used together"),
        (["--annotate", "--annotation-format", "{stream}"], "{stream} and {match_stream} need"),
    ],
)
def test_bad_settings_are_one_line_and_no_output(args, message):
    done = run(args, b"a\n")
    assert done.returncode == 1
    assert done.stdout == b""
    assert message in done.stderr.decode()
    assert done.stderr.decode().count("\n") == 1


def test_the_dask_engine_refuses_it(tmp_path):
    (tmp_path / "a.log").write_text("x\n")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from seqdedup.cli.dask import main; raise SystemExit(main())",
            "--output-dir",
            str(tmp_path / "out"),
            "--stream-by",
            "x",
            str(tmp_path / "a.log"),
        ],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 1
    assert "--stream-by" in done.stderr.decode()
    assert done.stderr.decode().count("\n") == 1


# The command with the pause it waits for raised to an hour: what a pause would bring is
# held for as long as the test looks (a wait of the real 2 s could end while it looks).
HOUR_LONG_PAUSE = (
    "import sys; from seqdedup import api; api.STREAM_WAIT = 3600.0; "
    "from seqdedup.cli.launch import seqdedup; sys.exit(seqdedup())"
)


@pytest.mark.slow
def test_a_live_input_that_pauses_gets_its_pending_records():
    """Standard input goes quiet with records of two streams pending (each stream's
    window of 5 is open): they are held until the pause has lasted its time (with the
    pause raised to an hour, nothing once the run waits for input), and then the pause
    alone brings them, the pipe still open (the streams then start afresh). Asserted
    by events, not by how long anything took."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED",)}
    records = b"[p] 1\n[q] 1\n[p] 2\n"
    for start in ([sys.executable, "-c", HOUR_LONG_PAUSE], [sys.executable, "-m", "seqdedup"]):
        proc = subprocess.Popen(
            [*start, "-q", "-w", "5", "--stream-by", PREFIX],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(records)
            proc.stdin.flush()
            if start[1] == "-c":
                settled(proc)
                assert pending(proc.stdout.fileno()) == b""
            else:
                assert arrived_lines(proc.stdout.fileno(), 3) == records
            proc.stdin.close()
            assert proc.stdout.read() == (b"" if start[1] == "-m" else records)
            assert proc.wait(10) == 0
        finally:
            proc.kill()


def test_random_interleavings_match_the_oracle_at_scale(engine):
    rng = random.Random(7)
    records = [(rng.choice(["p", "q", "r", None]), rng.choice("abcd")) for _ in range(1_500)]
    expected = interleaved_skipped(records[:400], 3, None, 50, 2)
    texts = [text_of(*r) for r in records[:400]]
    dedup = Deduplicator(window_size=3, stream_by=PREFIX, stream_idle=50, max_streams=2)
    out = dedup.feed(texts) + dedup.flush()
    assert out == [t for t, s in zip(texts, expected, strict=True) if not s]


def test_counts_follow_the_output_when_streams_end_together(engine):
    """Two runs of one sequence close when the input ends, the later-written one first
    (its stream was less recently active): the markers still count 2, then 3."""
    texts = [b"[p] x", b"[p] y", b"[q] x", b"[q] y", b"[p] x", b"[p] y", b"[q] z"]
    dedup = Deduplicator(
        window_size=2, stream_by=PREFIX, annotate=True, annotation_format="{count}"
    )
    assert dedup.feed(texts) + dedup.flush() == [b"[p] x", b"[p] y", b"2", b"3", b"[q] z"]


def test_show_keys_leaves_the_stream_out():
    done = run(["--show-keys", "--stream-by", PREFIX], b"[p] a\ncontinued\n[q] b\n")
    assert done.returncode == 0
    assert done.stdout == b"a\ncontinued\nb\n"


@pytest.mark.parametrize(
    ("records", "names", "keys"),
    [
        # ASCII records: the pattern's bytes twin; a match inside the record
        ([b"ts [p] a", b"x", b"[q]"], ["p", None, "q"], [b"ts a", b"x", b""]),
        # non-ASCII records: matched as text
        (["[pöd] ä".encode(), b"[q] b"], ["pöd", "q"], ["ä".encode(), b"b"]),
        # invalid UTF-8 stays as it is in the key
        ([b"[p] \xff", b"\xfe"], ["p", None], [b"\xff", b"\xfe"]),
    ],
)
def test_names_and_keys_of_records(records, names, keys):
    from seqdedup.config.settings import Config
    from seqdedup.keys.streams import StreamNamer

    namer = StreamNamer(Config(stream_by=r"\[(\w+)\] ?").stream_options, False)
    assert namer.split(records) == (names, keys)


def test_byte_mode_names_streams_by_bytes(engine):
    dedup = Deduplicator(window_size=1, byte_mode=True, stream_by=r"^(\xff|\x00)")
    out = dedup.feed([b"\xffa", b"\x00a", b"\xffa"]) + dedup.flush()
    assert out == [b"\xffa"]
    assert [row["name"] for row in dedup.stats.streams] == ["\\xff", "\x00"]


@settings(max_examples=examples(120), deadline=None)
@given(records=records_strategy, window=st.integers(1, 4), cuts=st.lists(st.integers(0, 70)))
def test_top_counts_each_runs_sequence(engine, records, window, cuts):
    """--top with streams: per distinct run content, the records removed, how often it
    was seen (the first occurrence counts) and its length, as the oracle's runs say."""
    expected = interleaved_skipped(records, window)
    runs = interleaved_runs(records, expected)
    want: dict[tuple[object, ...], int] = {}
    for content, _ in runs:
        want[content] = want.get(content, 0) + 1
    dedup = Deduplicator(window_size=window, max_history=None, stream_by=PREFIX, top=1000)
    texts = [text_of(*record) for record in records]
    out = feed_in_cuts(dedup, texts, cuts)
    assert out == [text for text, skip in zip(texts, expected, strict=True) if not skip]
    top = dedup.stats.top_sequences or []
    got = sorted((row["removed"], row["seen"], row["length"]) for row in top)
    assert got == sorted((len(c) * n, n + 1, len(c)) for c, n in want.items())
    assert all("stream" in row["first_seen"] for row in top)


EVERY_FIELD = (
    "{start}-{end} {stream} {match_start}-{match_end} {match_stream} {count} {window_size}"
)


@settings(max_examples=examples(200), deadline=None)
@given(
    records=records_strategy,
    window=st.integers(1, 4),
    idle=st.one_of(st.none(), st.integers(1, 6)),
    max_streams=st.one_of(st.none(), st.integers(1, 3)),
    cuts=st.lists(st.integers(0, 70), max_size=5),
    template=st.sampled_from([None, EVERY_FIELD]),
    pattern=st.sampled_from(PATTERNS),
)
def test_markers_and_top_from_the_kernels_runs_are_the_deciders(
    records, window, idle, max_streams, cuts, template, pattern
):
    """Markers and --top made from the runs the kernel's stream matcher hands over
    (report_runs) are the Python decider's (the Python engine's), line for line and row
    for row: every field, the counts in output order, the sources' streams."""
    if not kernel_built():
        pytest.skip("the kernel is not built")
    texts = [text_of(*record) for record in records]
    options = {
        "window_size": window, "stream_idle": idle, "max_streams": max_streams,
        "max_history": None, "stream_by": pattern, "annotate": True,
        "annotation_format": template, "top": 50,
    }  # fmt: skip
    (out, kernel), (expected, python) = on_both_engines(texts, cuts, options)
    assert out == expected
    assert kernel.top_sequences == python.top_sequences
    assert kernel.unique_sequences == python.unique_sequences


@settings(max_examples=examples(200), deadline=None)
@given(
    records=st.integers(1, 4).flatmap(
        lambda streams: st.lists(
            st.tuples(
                st.one_of(st.none(), st.sampled_from("pqrs"[:streams])),
                st.sampled_from(["a", "b", "a 1", "a 2"]),
            ),
            max_size=70,
        )
    ),
    window=st.integers(1, 4),
    every=st.one_of(st.none(), st.integers(1, 5)),
    idle=st.one_of(st.none(), st.integers(1, 6)),
    max_streams=st.one_of(st.none(), st.integers(1, 3)),
    cuts=st.lists(st.integers(0, 70), max_size=5),
    held=st.sampled_from([1, 2, 3, 1 << 16]),
    steps=st.sampled_from([(), (("mask", " [0-9]$"),)]),
    pattern=st.sampled_from(PATTERNS),
)
def test_fold_lines_from_the_kernels_parts_are_the_deciders(
    records, window, every, idle, max_streams, cuts, held, steps, pattern
):
    """--fold on the kernel's stream matcher (each run handed over in parts of
    --fold-every records, with their records and key hashes) is the Python decider's,
    line for line: every field of the JSON line (the sequence's id and period, copies,
    times, variants where a mask hides a difference, the counts in output order), a
    sequence fixed once HELD_MAX records are held, and --top beside it."""
    if not kernel_built():
        pytest.skip("the kernel is not built")
    texts = [text_of(*record) for record in records]
    options = {
        "window_size": window, "stream_idle": idle, "max_streams": max_streams,
        "max_history": None, "stream_by": pattern, "fold": True, "fold_every": every,
        "fold_format": "json", "top": 50, "key_steps": steps,
    }  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        for module in (foldruns, stream_fold):
            patch.setattr(module, "HELD_MAX", held)
        (out, kernel), (expected, python) = on_both_engines(texts, cuts, options)
    assert out == expected
    assert kernel.top_sequences == python.top_sequences
    assert kernel.unique_sequences == python.unique_sequences


def on_both_engines(texts, cuts, options):
    """(output, statistics) of a run on the kernel's stream path and on the Python
    engine's decider, the records fed in cuts."""
    seen = []
    with pytest.MonkeyPatch.context() as patch:
        for engine, kind in (("c", "KernelStreamPath"), ("python", "StreamPath")):
            patch.setenv("SEQDEDUP_ENGINE", engine)
            dedup = Deduplicator(**options)
            out = feed_in_cuts(dedup, texts, cuts)
            assert type(dedup._stream_path).__name__ == kind
            seen.append((out, dedup.stats))
    return seen


PIECES = ["\\[", "\\]", " ", "-", "a", "b", "\\d", "\\w", "\\S", "[^]]", "[a-c]", ".", "\\W"]
QUANTIFIERS = ["", "+", "*", "?", "{2}", "{1,3}"]


@settings(max_examples=examples(400), deadline=None)
@given(
    parts=st.lists(
        st.tuples(st.sampled_from(PIECES), st.sampled_from(QUANTIFIERS)), min_size=1, max_size=5
    ),
    group=st.tuples(st.integers(0, 5), st.integers(0, 5)),
    records=st.lists(st.text("ab1 []-_\t", max_size=12), max_size=12),
)
def test_prefix_programs_find_what_the_pattern_finds(parts, group, records):
    """Where a pattern is a prefix program, the kernel's names and keys are exactly
    those of re.search on every record."""
    from seqdedup.keys.streams import prefix_program

    kernel = pytest.importorskip("seqdedup._kernel")
    atoms = [piece + quantifier for piece, quantifier in parts]
    low, high = sorted(group)
    if low < high <= len(atoms):
        atoms[low:high] = ["(" + "".join(atoms[low:high]) + ")"]
    pattern = re.compile(("^" + "".join(atoms)).encode())
    program = prefix_program(pattern)
    if program is None:
        return
    data = [record.encode() for record in records]
    names, found, keys, unread = kernel.stream_prefixes(data, *program)
    assert unread == b""  # (only a text pattern's twin leaves records to the text)
    group_index = 1 if pattern.groups else 0
    for record, index, key in zip(data, array("i", found), keys, strict=True):
        match = pattern.search(record)
        if match is None:
            assert index == -1 and key == record
        else:
            assert names[index] == match.group(group_index)
            assert key == record[: match.start()] + record[match.end() :]


def test_common_stream_patterns_are_prefix_programs():
    from seqdedup.keys.streams import prefix_program

    for text in (r"^\[(pod-\d+)\] ", r"^\[pod/([^/]+)/[^]]*\] ", r"^(\S+) ", r"^(\w+)\[\d+\]: "):
        assert prefix_program(re.compile(text.encode())) is not None, text
    for text in (r"^(a+)a", r"(x)", r"^(.*) ", r"^(ab|c)", r"^(a+?)b", r"^(a)$"):
        assert prefix_program(re.compile(text.encode())) is None, text


@settings(max_examples=examples(60), deadline=None)
@given(
    first=records_strategy,
    second=records_strategy,
    window=st.integers(1, 3),
    idle=st.one_of(st.none(), st.integers(1, 6)),
    history=st.sampled_from([None, 100]),
)
def test_a_library_saved_by_one_run_is_seen_by_every_stream_of_the_next(
    engine, first, second, window, idle, history
):
    """Run one over X saves each stream's windows; run two over Y, loading them, skips
    what the rule skips in Y when every window of X's streams is already seen."""
    import tempfile

    from oracle import stream_stretches

    options = {"window_size": window, "stream_by": PREFIX, "stream_idle": idle}
    with tempfile.TemporaryDirectory() as scratch:
        library = Path(scratch) / "lib"
        dedup = Deduplicator(max_history=None, library_dir=library, **options)
        dedup.feed([text_of(*r) for r in first])
        dedup.flush()
        texts = [text_of(*r) for r in second]
        reader = Deduplicator(max_history=history, read_sequences=(library,), **options)
        out = reader.feed(texts) + reader.flush()
    seen = [[first[p][1] for p in stretch] for stretch in stream_stretches(first, idle)]
    expected = interleaved_skipped(second, window, history, idle, library=seen)
    assert out == [text for text, skip in zip(texts, expected, strict=True) if not skip]


def test_a_stream_library_is_refused_by_a_run_without_streams(tmp_path):
    """A stream run saves its records without their stream's name: a run that makes its
    keys otherwise is told so, as for any other key option."""
    log = tmp_path / "x.log"
    log.write_bytes(b"[p] a\n[p] b\n[q] a\n")
    library = tmp_path / "lib"
    assert (
        run(["-q", "-w", "2", "--stream-by", PREFIX, "-l", str(library), str(log)]).returncode == 0
    )
    done = run(["-q", "-w", "2", "-r", str(library), str(log)])
    assert done.returncode == 1
    assert "--stream-by '^\\[(\\w+)\\] '" in done.stderr.decode()
    assert done.stdout == b""


def test_a_stream_pattern_that_backtracks_without_end_is_one_error(engine, monkeypatch):
    from seqdedup.base.errors import SeqdedupError
    from seqdedup.config import timelimit

    monkeypatch.setattr(timelimit, "PATTERN_SECONDS", 0.3)
    dedup = Deduplicator(window_size=2, stream_by=r"^(a+)+$")
    with pytest.raises(SeqdedupError, match=r"--stream-by '\^\(a\+\)\+\$' took more .* line 2"):
        dedup.feed([b"ok", b"a" * 40 + b"b"])


FOLD_FIELDS = "{start} {end} {removed} {copies} {extra} {length} {count} {part} {continues}"
FOLD_LINE = "F " + FOLD_FIELDS + " {stream} {match_start} {match_end}"


@settings(max_examples=examples(200), deadline=None)
@given(
    records=records_strategy,
    window=st.integers(1, 4),
    every=st.one_of(st.none(), st.integers(1, 4)),
    idle=st.one_of(st.none(), st.integers(1, 6)),
    max_streams=st.one_of(st.none(), st.integers(1, 3)),
    cuts=st.lists(st.integers(0, 70), max_size=5),
)
def test_fold_writes_a_line_per_run_part_of_each_stream(
    engine, records, window, every, idle, max_streams, cuts
):
    """--fold with --stream-by: one line per duplicate run of a stream (per part of
    --fold-every records), right after its last record, as the oracle cuts and counts."""
    skipped = interleaved_skipped(records, window, None, idle, max_streams)
    parts = interleaved_fold_parts(records, window, skipped, every, idle, max_streams)
    texts = [text_of(*record) for record in records]
    expected: list[bytes] = []
    lines = iter(parts)
    line = next(lines, None)
    for position, (text, skip) in enumerate(zip(texts, skipped, strict=True)):
        if not skip:
            expected.append(text)
        while line is not None and line["end"] == position:
            fields = {**line, "start": line["start"] + 1, "end": line["end"] + 1}
            fields.update(match_start=line["match_start"] + 1, match_end=line["match_end"] + 1)
            fields["continues"] = int(line["continues"])  # type: ignore[call-overload]
            expected.append(FOLD_LINE.format_map(fields).encode())
            line = next(lines, None)
    dedup = Deduplicator(
        window_size=window,
        max_history=None,
        stream_by=PREFIX,
        stream_idle=idle,
        max_streams=max_streams,
        fold=True,
        fold_every=every,
        fold_format=FOLD_LINE,
    )
    assert feed_in_cuts(dedup, texts, cuts) == expected


def test_fold_names_the_streams_and_a_library_holds_the_folded_sequence(tmp_path):
    """End to end: the default line names both streams; with -l the folded sequence is
    held under its id, its records without the stream's match."""
    pods = Path(__file__).resolve().parent.parent / "examples" / "pods.log"
    pattern = r"^\[pod/([^/]+)/[^]]*\] "
    done = run(["-q", "-w", "3", "--stream-by", pattern, "--fold", str(pods)])
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.decode().splitlines() if line.startswith("[FOLDED")]
    assert len(lines) == 2
    assert lines[0].startswith("[FOLDED: 5 lines in 8-14 in stream api-7d9f-m8q2z like ")
    assert "(lines 3-6 in stream api-7d9f-x2k4l), id " in lines[0]
    library = tmp_path / "lib"
    args = ["-q", "-w", "3", "--stream-by", pattern, "--fold", "--fold-format", "json"]
    done = run([*args, "-l", str(library), str(pods)])
    folded = [json.loads(line) for line in done.stdout.decode().splitlines() if "fold" in line]
    assert [(f["stream"], f["match_stream"], f["count"]) for f in folded] == [
        ("api-7d9f-m8q2z", "api-7d9f-x2k4l", 2),
        ("api-7d9f-x2k4l", "api-7d9f-x2k4l", 3),
    ]
    shown = subprocess.run(
        [*library_command(), "show", str(library), folded[0]["id"]],
        capture_output=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    trace = pods.read_bytes().splitlines()[2:9]
    own = [line.split(b"] ", 1)[1] for line in trace if line.startswith(b"[pod/api-7d9f-x2k4l")]
    assert shown.stdout.splitlines() == own


@pytest.mark.parametrize("engine", ["c", "python"])
def test_the_last_written_record_keeps_its_delimiter_when_the_final_one_is_skipped(engine):
    """An input without a final delimiter whose last record is skipped: the last record
    written is not the input's last, so it keeps its delimiter (installed command)."""
    from conftest import seqdedup_command, user_env

    run = subprocess.run(
        [*seqdedup_command(), "-q", "-w", "2", "--stream-by", r"^(s\d) "],
        input=b"s1 a\ns1 b\ns2 x\ns1 a\ns1 b",
        capture_output=True,
        env={**user_env(), "SEQDEDUP_ENGINE": engine},
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == b"s1 a\ns1 b\ns2 x\n"


@settings(max_examples=examples(200), deadline=None)
@given(
    records=records_strategy,
    window=st.integers(1, 4),
    idle=st.one_of(st.none(), st.integers(1, 6)),
    library=st.lists(st.lists(st.sampled_from("abc"), max_size=5), max_size=3),
    fold=st.booleans(),
)
def test_per_stream_histories_follow_the_oracle(engine, records, window, idle, library, fold):
    """--per-stream: a window repeats only its own stream's earlier windows, or a
    library's (seen by every stream); the same with --fold (the kept records)."""
    texts = [text_of(name, key) for name, key in records]
    options = {"window_size": window, "max_history": None, "stream_by": PREFIX, "fold": fold}
    options |= {"stream_idle": idle, "per_stream": True}
    if fold:
        options["fold_format"] = "\0"  # (a fold line: left out below)
    if library:
        import tempfile

        folder = Path(tempfile.mkdtemp())
        for k, seq in enumerate(library):
            (folder / f"s{k}").write_text("".join(f"{key}\n" for key in seq))
        options["read_sequences"] = (folder,)
    dedup = Deduplicator(**options)
    out = [line for line in dedup.feed(texts) + dedup.flush() if line != b"\0"]
    skipped = interleaved_skipped(records, window, idle=idle, library=library, per_stream=True)
    assert out == [t for t, s in zip(texts, skipped, strict=True) if not s]


def test_per_stream_keeps_each_pods_first_trace_and_one_bounded_table(engine):
    trace = ["Traceback", "  File x", "Error"]
    pods = [f"[{pod}] {line}" for pod in ("p", "q") for line in trace]
    shared = Deduplicator(window_size=3, stream_by=PREFIX, max_history=None)
    assert len(shared.feed([t.encode() for t in pods]) + shared.flush()) == 3
    own = Deduplicator(window_size=3, stream_by=PREFIX, max_history=None, per_stream=True)
    assert len(own.feed([t.encode() for t in pods]) + own.flush()) == 6
    # many streams, one history: the table holds at most the history's windows
    bounded = Deduplicator(window_size=1, stream_by=PREFIX, max_history=1000, per_stream=True)
    bounded.feed([f"[s{k % 500}] line {k % 7}".encode() for k in range(20_000)])
    decider = bounded._stream_path._decider  # (the stream path's, as built)
    assert sum(map(len, decider._windows._recent.values())) <= 1001


@pytest.mark.parametrize("kernel_path", [True, False])
def test_streams_past_the_row_limit_are_counted_as_one_row(engine, kernel_path, monkeypatch):
    """Per-stream statistics name the first STREAM_ROWS streams; the records of every
    later stream are summed in one "(other streams)" row (memory stays bounded)."""
    from seqdedup.run import stream_rows as rows

    monkeypatch.setattr(rows, "STREAM_ROWS", 2)
    texts = [b"[p%d] x" % (k % 5) for k in range(20)]
    options = {} if kernel_path else {"annotate": True}  # (markers: the Python decider)
    dedup = Deduplicator(window_size=1, stream_by=PREFIX, **options)
    dedup.feed(texts)
    dedup.flush()
    rows = dedup.stats.streams
    assert [row["name"] for row in rows] == ["p0", "p1", "(other streams)"]
    assert [row["lines"]["total"] for row in rows] == [4, 4, 12]
    assert sum(row["lines"]["skipped"] for row in rows) == 19


@settings(max_examples=examples(200), deadline=None)
@given(
    records=records_strategy,
    window=st.integers(1, 3),
    idle=st.one_of(st.none(), st.integers(1, 6)),
    max_streams=st.one_of(st.none(), st.integers(1, 3)),
    rows=st.integers(0, 4),
    cuts=st.lists(st.integers(0, 70), max_size=5),
)
def test_names_kept_by_the_kernel_count_the_streams_as_the_decider_does(
    records, window, idle, max_streams, rows, cuts
):
    """The kernel's matcher keeps the names itself (a prefix pattern, nothing reported):
    streams that end (idle, one too many, the end) and begin again, continuation lines
    at a batch's start, and the row limit give the statistics of the Python decider
    (the Python engine's), record for record."""
    if not kernel_built():
        pytest.skip("the kernel is not built")
    from seqdedup.run import stream_rows as row_limit

    texts = [text_of(*record) for record in records]
    options = {
        "window_size": window, "stream_idle": idle, "max_streams": max_streams,
        "max_history": None, "stream_by": PREFIX,
    }  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(row_limit, "STREAM_ROWS", rows)
        (out, kernel), (expected, python) = on_both_engines(texts, cuts, options)
    assert out == expected
    assert (kernel.streams, kernel.skipped) == (python.streams, python.skipped)


@pytest.mark.parametrize("engine", ["c", "python"])
def test_non_ascii_records_are_named_by_the_text_pattern(engine, monkeypatch):
    """A text pattern's bytes twin is exact on ASCII: a record whose name the kernel
    would read past ASCII is named by the pattern on its text (U+00A0 is no \\S in
    text, though its two bytes are no space), the rest by the kernel, in one batch."""
    monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
    records = [
        "pod-1 start",
        "\u00e9t\u00e9 x",  # a name of non-ASCII letters: "\u00e9t\u00e9"
        "pod-1 start",
        "a\u00a0b x",  # no \\S+ then a space at its start: the stream before it
        "pod-2 start",
        "pod-1 start",
        "\u00e9t\u00e9 x",
    ]
    d = Deduplicator(window_size=1, stream_by=r"^(\S+) ", max_history=None)
    out = d.feed(records) + d.flush()
    # (history is shared by the streams: pod-2's "start" repeats pod-1's)
    assert out == ["pod-1 start", "\u00e9t\u00e9 x", "a\u00a0b x"]
    assert d.stats.streams is not None
    named = {row["name"]: row["lines"]["total"] for row in d.stats.streams}
    assert named == {"pod-1": 4, "\u00e9t\u00e9": 2, "pod-2": 1}


# -- the rule, said exactly: overlaps, and the history between windows' ends ------------


@pytest.mark.usefixtures("engine")
def test_a_window_never_matches_an_overlapping_copy(run_cli):
    """On 50 records `a` at -w 2, window 1 equals window 0 but overlaps it: the first
    repeat is window 2, so 2 records are kept (1 if overlapping copies counted)."""
    from oracle import skipped_flags

    done = run_cli(["-q", "-w", "2"], b"a\n" * 50)
    assert done.stdout == b"a\na\n"
    assert skipped_flags(["a"] * 50, 2).count(False) == 2


def boundary_input(end_gap: int) -> bytes:
    """Stream X's window (a, b) starts at 0 and ends at 60; stream Y's equal window ends
    ``end_gap`` records later, right after its start (so the starts are end_gap + 59
    apart); stream Z's records between them are all different."""
    lines = ["X a", *(f"Z f{k}" for k in range(1, 60)), "X b"]
    lines += [f"Z g{k}" for k in range(61, 60 + end_gap - 1)]
    lines += ["Y a", "Y b"]
    assert lines.index("Y b") - lines.index("X b") == end_gap
    return "".join(line + "\n" for line in lines).encode()


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("reported", [False, True])
@pytest.mark.parametrize(("end_gap", "repeat"), [(100, True), (101, False)])
def test_with_streams_the_history_lies_between_the_windows_ends(run_cli, end_gap, repeat, reported):
    """-m 100 with --stream-by: the later window's last record at most 100 after the
    earlier one's. Starts 159 apart and ends 100 apart: a repeat; ends 101 apart: not.
    Both engines, the kernel's stream matcher (nothing reported) and the decider
    (markers)."""
    extra = ["--annotate"] if reported else []
    done = run_cli(
        ["-q", "-w", "2", "-m", "100", "--stream-by", r"^(\S+) ", *extra],
        boundary_input(end_gap),
    )
    last = done.stdout.splitlines()[-2:]
    if repeat:
        assert b"Y a" not in last and b"Y b" not in last
    else:
        assert last == [b"Y a", b"Y b"]


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize(
    ("preset", "lines", "kept"),
    [
        (
            "k8s",
            ["[pod/api-1/api] GET /a", "[pod/api-2/api] GET /b", "[pod/api-2/api] GET /a"],
            ["[pod/api-1/api] GET /a", "[pod/api-2/api] GET /b"],
        ),
        (
            "compose",
            ["web-1  | started", "db-1   | ready", "web-2  | started"],
            ["web-1  | started", "db-1   | ready"],
        ),
        (
            "syslog",
            [
                "Nov 28 10:00:01 host sshd[812]: Accepted key for ops",
                "Nov 28 10:00:02 host cron[9]: job done",
                "2026-11-28T10:00:05.120+01:00 host sshd[813]: Accepted key for ops",
            ],
            [
                "Nov 28 10:00:01 host sshd[812]: Accepted key for ops",
                "Nov 28 10:00:02 host cron[9]: job done",
            ],
        ),
    ],
)
def test_stream_presets_name_the_streams_of_common_prefixes(run_cli, preset, lines, kept):
    """A preset stands for its pattern: the prefix (with its time and pid) is the
    stream's name and is left out of the key, so the same message repeats across
    pods, services or restarts of a program."""
    data = "".join(line + "\n" for line in lines).encode()
    done = run_cli(["-q", "-w", "1", "--stream-by", preset], data)
    assert done.stdout.decode().splitlines() == kept
    from seqdedup import Config
    from seqdedup.config.settings import STREAM_PRESETS

    assert Config(stream_by=preset).stream_by == STREAM_PRESETS[preset]


# -- a minimum size -----------------------------------------------------------------------
sized_records = st.integers(1, 4).flatmap(
    lambda streams: st.lists(
        st.tuples(
            st.one_of(st.none(), st.sampled_from("pqrs"[:streams])),
            st.sampled_from(["a", "bb", "cccc"]),
        ),
        max_size=40,
    )
)


@cache  # (the oracle asks for each key's size once per stretch holding it)
def key_size(key: object) -> int:
    return len(str(key)) + 1


@settings(max_examples=examples(150), deadline=None)
@given(
    records=sized_records,
    window=st.integers(1, 3),
    min_size=st.integers(1, 12),
    idle=st.one_of(st.none(), st.integers(1, 6)),
    max_streams=st.one_of(st.none(), st.integers(1, 3)),
    per_stream=st.booleans(),
    annotate=st.booleans(),
    cuts=st.lists(st.integers(0, 40), max_size=4),
)
def test_a_minimum_size_per_stream_follows_the_oracle(
    engine, records, window, min_size, idle, max_streams, per_stream, annotate, cuts
):
    """Stretches of one stream, one history (or one per stream), on both engines (the
    Python decider's stretches on each); markers stand for each run."""
    history = None
    expected = interleaved_skipped_sized(
        records, window, min_size, key_size, history, idle, max_streams, per_stream=per_stream
    )
    assert expected == interleaved_skipped_sized(
        records, window, min_size, key_size, None, idle, max_streams, (), per_stream, True
    )  # (only the shortest stretches matter)
    texts = [text_of(*record) for record in records]
    dedup = Deduplicator(
        window_size=window, min_size=min_size, max_history=history, stream_by=PREFIX,
        stream_idle=idle, max_streams=max_streams, per_stream=per_stream, annotate=annotate,
    )  # fmt: skip
    out = feed_in_cuts(dedup, texts, cuts)
    assert [line for line in out if not line.startswith(b"[DUPLICATE")] == [
        text for text, skip in zip(texts, expected, strict=True) if not skip
    ]
    runs = interleaved_runs(records, expected, idle, max_streams)
    assert sum(line.startswith(b"[DUPLICATE") for line in out) == (len(runs) if annotate else 0)


@settings(max_examples=examples(40), deadline=None)
@given(
    x=sized_records,
    y=sized_records,
    window=st.integers(1, 3),
    min_size=st.integers(1, 10),
    per_stream=st.booleans(),
)
def test_a_minimum_size_per_stream_continues_from_the_library(
    engine, tmp_path_factory, x, y, window, min_size, per_stream
):
    """A stream run saves every shortest large-enough stretch it saw first: the next
    run skips what it would after it (the library seen by every stream)."""
    library = tmp_path_factory.mktemp("lib") / "L"
    options = {"window_size": window, "min_size": min_size, "stream_by": PREFIX}
    first = Deduplicator(library_dir=library, per_stream=per_stream, **options)
    first.feed([text_of(*r) for r in x])
    first.flush()
    texts = [text_of(*r) for r in y]
    dedup = Deduplicator(read_sequences=(library,), per_stream=per_stream, **options)
    out = dedup.feed(texts) + dedup.flush()
    lanes = [[x[p][1] for p in lane] for lane in stream_stretches(x)]  # what X's streams held
    expected = interleaved_skipped_sized(
        y, window, min_size, key_size, library=lanes, per_stream=per_stream
    )
    assert out == [text for text, skip in zip(texts, expected, strict=True) if not skip]


@settings(max_examples=examples(30), deadline=None)
@given(
    records=st.lists(
        st.tuples(st.one_of(st.none(), st.sampled_from("pq")), st.sampled_from(["a", "bb"])),
        min_size=100,
        max_size=200,
    ),
    window=st.integers(1, 2),
    min_size=st.integers(2, 6),
    history=st.integers(100, 140),
)
def test_a_minimum_size_per_stream_with_a_history_follows_the_oracle(
    engine, records, window, min_size, history
):
    expected = interleaved_skipped_sized(records, window, min_size, key_size, history)
    texts = [text_of(*record) for record in records]
    dedup = Deduplicator(
        window_size=window, min_size=min_size, max_history=history, stream_by=PREFIX
    )
    out = dedup.feed(texts) + dedup.flush()
    assert out == [text for text, skip in zip(texts, expected, strict=True) if not skip]


def test_a_minimum_size_per_stream_with_a_short_history_and_a_library():
    """The decider itself, where a history may be short: the oracle's shortest
    stretches, a library seen by both streams."""
    from array import array as arr

    from seqdedup.engine.stream_decider import Entry
    from seqdedup.engine.stream_sized import SizedStreamDecider

    rng = random.Random(3)
    for _ in range(150):
        records = [(rng.choice("pq"), rng.choice(["a", "bb", "ccc"])) for _ in range(40)]
        library = [[rng.choice(["a", "bb", "ccc"]) for _ in range(rng.randrange(6))]]
        window, least = rng.randint(1, 3), rng.randint(1, 9)
        history = rng.choice([None, rng.randint(1, 12)])
        decider = SizedStreamDecider(window, least, history, None, None, None, False, 7)
        ids = {"a": 1, "bb": 2, "ccc": 3}
        region = arr("Q", [0, 0])
        for key in library[0]:
            region.extend([ids[key], 0])
        region.extend([0, 0])
        sizes = arr("q", [0, *(len(k) for k in library[0]), 0])
        decider.add_library_stretches(region, [1], [len(library[0])], sizes)
        entries = []
        for number, (name, key) in enumerate(records, 1):
            entries.append(Entry(key.encode(), number, name))
            decider.push_sized(name, ids[key], entries[-1], len(key))
        decider.end_all()
        expected = interleaved_skipped_sized(
            records, window, least, key_size, history, library=library
        )
        assert [e.skip for e in entries] == expected, (records, library, window, least, history)
        assert all(e.decided for e in entries)


@settings(max_examples=examples(60), deadline=None)
@given(
    keys=st.lists(st.sampled_from(["a", "bb", "cccc"]), min_size=90, max_size=160),
    window=st.integers(1, 3),
    min_size=st.integers(1, 12),
    history=st.sampled_from([None, 100]),
)
def test_one_stream_under_a_minimum_size_is_the_one_stream_rule(
    engine, keys, window, min_size, history
):
    texts = [text_of("p", key) for key in keys]
    options = {"window_size": window, "min_size": min_size, "max_history": history}
    streamed = Deduplicator(stream_by=PREFIX, **options)
    plain = Deduplicator(**options)
    bare = [key.encode() for key in keys]  # (a stream's keys leave its name out)
    kept = plain.feed(bare) + plain.flush()
    assert streamed.feed(texts) + streamed.flush() == [b"[p] " + key for key in kept]
