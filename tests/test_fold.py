"""--fold: summary lines against the literal oracle, on both engines."""

from __future__ import annotations

import json
import time
from hashlib import blake2b

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Deduplicator
from seqdedup.base.errors import UsageError
from seqdedup.config.groups import FilterRule
from seqdedup.engine.pykernel import periodic_match, shortest_period
from seqdedup.library.store import encode_records

from conftest import (
    arrived,
    arrived_lines,
    examples,
    kernel_built,
    live,
    new_lines_arrive_at_once,
    pending,
    settled,
)
from oracle import (
    fold_parts,
    reference_output,
    skipped_flags,
    skipped_flags_streams,
    smallest_period,
)

STAMP = 20  # "2026-11-24T10:00:00 " before each key


def stamped(keys: list[str], first: int = 0) -> list[bytes]:
    """Records "2026-11-24T10:MM:SS k": a time that differs per record, then the key
    (skip_chars=20 leaves the key)."""
    return [
        f"2026-11-24T{10 + n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d} {k}".encode()
        for n, k in enumerate(keys, start=first)
    ]


# As the oracle has it: unlimited history, every candidate followed.
ORACLE_OPTIONS = dict(
    skip_chars=STAMP, fold=True, fold_format="json", max_history=None, max_candidates=None
)


def fold_run(streams: list[list[bytes]], window: int, sizes=(7,), **options):
    """Feed each stream in batches of the sizes given (cycled); return the output
    and the parsed summary lines."""
    names = tuple(f"in{k}.log" for k in range(len(streams)))
    d = Deduplicator(
        window_size=window, inputs=names if len(streams) > 1 else (), **ORACLE_OPTIONS, **options
    )
    out: list[bytes] = []
    for k, records in enumerate(streams):
        at, turn = 0, 0
        while at < len(records):
            size = sizes[turn % len(sizes)]
            out += d.feed(records[at : at + size])
            at, turn = at + size, turn + 1
        out += d.next_input() if k + 1 < len(streams) else d.flush()
    if not streams:
        out += d.flush()
    lines = [json.loads(o) for o in out if o.startswith(b'{"seqdedup": "fold"')]
    records = [o for o in out if not o.startswith(b'{"seqdedup": "fold"')]
    return out, records, lines, d.stats


def unit_id(keys: tuple[str, ...]) -> str:
    return blake2b(encode_records([k.encode() for k in keys]), digest_size=16).hexdigest()


keys_strategy = st.integers(1, 3).flatmap(
    lambda k: st.lists(st.sampled_from("abc"[:k]), max_size=120)
)


def check_against_oracle(key_streams, window, every, lines) -> None:
    streams = [
        stamped(keys, first=sum(map(len, key_streams[:k]))) for k, keys in enumerate(key_streams)
    ]
    flat = [record for stream in streams for record in stream]
    starts = [0]
    for stream in key_streams:
        starts.append(starts[-1] + len(stream))
    expected = fold_parts(key_streams, window, every)
    assert len(lines) == len(expected)
    for line, want in zip(lines, expected, strict=True):
        stream = max(k for k in range(len(key_streams)) if starts[k] <= want["start"])
        base = starts[stream]
        assert (line["start"], line["end"]) == (want["start"] - base + 1, want["end"] - base + 1)
        for field in ("removed", "copies", "extra", "length", "count", "part", "continues"):
            assert line[field] == want[field], (field, line, want)
        assert line["digest"] == unit_id(want["unit"])
        assert line["id"] == line["digest"][:12]
        if want["source"] is not None:
            source = want["source"]
            assert line["match_start"] == source - base + 1 if source >= base else True
            assert line["match_end"] - line["match_start"] == want["length"] - 1
        first, last = flat[want["start"]], flat[want["end"]]
        assert line["first_time"] == first[:19].decode()
        assert line["last_time"] == last[:19].decode()


def check_placement(out: list[bytes]) -> None:
    """Each line stands after every record written before its part and before every
    record written after it (a record's number is in its time: one stream)."""
    numbers = [
        None if item.startswith(b'{"seqdedup"') else int(item[14:16]) * 60 + int(item[17:19]) + 1
        for item in out
    ]
    for k, item in enumerate(out):
        if numbers[k] is None:
            line = json.loads(item)
            assert all(n < line["start"] for n in numbers[:k] if n is not None)
            assert all(n > line["end"] for n in numbers[k + 1 :] if n is not None)


@settings(max_examples=examples(200), deadline=None)
@given(
    keys=keys_strategy,
    window=st.integers(1, 5),
    every=st.sampled_from([None, 1, 3, 8]),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=4),
)
def test_summary_lines_equal_the_oracle(engine, keys, window, every, sizes):
    out, records, lines, stats = fold_run([stamped(keys)], window, sizes, fold_every=every)
    # Without the summary lines, the output is the normal output.
    normal = reference_output(stamped(keys), window, skip_chars=STAMP)
    assert records == normal
    assert sum(line["removed"] for line in lines) == stats.skipped
    check_against_oracle([keys], window, every, lines)
    check_placement(out)


@settings(max_examples=examples(100), deadline=None)
@given(
    streams=st.lists(keys_strategy, min_size=2, max_size=3),
    window=st.integers(1, 4),
    every=st.sampled_from([None, 4]),
)
def test_a_run_never_spans_two_files_and_the_line_names_them(engine, streams, window, every):
    firsts = []
    for k in range(len(streams)):
        firsts.append(sum(map(len, streams[:k])))
    records = [stamped(keys, first) for keys, first in zip(streams, firsts, strict=True)]
    _, _, lines, stats = fold_run(records, window, (5,), fold_every=every)
    assert sum(line["removed"] for line in lines) == stats.skipped
    flags = skipped_flags_streams(streams, window)
    assert sum(flags) == stats.skipped
    for line in lines:
        k = int(line["file"][2])
        assert 1 <= line["start"] <= line["end"] <= len(streams[k])
    check_against_oracle(streams, window, every, lines)


def test_where_the_line_stands_and_the_default_text():
    keys = list("xyzab") + list("xyz") * 3 + ["q"]
    d = Deduplicator(window_size=2, skip_chars=STAMP, fold=True, max_history=None)
    out = d.feed(stamped(keys)) + d.flush()
    text = [o.decode() for o in out]
    assert text[:5] == [r.decode() for r in stamped(keys)[:5]]
    assert text[5] == (
        '[FOLDED: lines 6-14 like "x" (lines 1-3, 3 copies), '
        f"2026-11-24T10:00:05..10:00:13, id {unit_id(('x', 'y', 'z'))[:12]}]"
    )
    assert text[6].endswith(" q") and len(text) == 7


def test_a_partial_copy_and_other_material_are_extra():
    # b c a repeats, then "b c" alone: 1 copy of (b c a)... the run is a b c a b c | d
    keys = list("abcdxy") + list("abcabc") + list("xy") + ["q"]
    _, _, lines, _ = fold_run([stamped(keys)], 2)
    assert [(line["removed"], line["copies"], line["extra"], line["length"]) for line in lines] == [
        (8, 2, 2, 3)
    ]


def test_interim_lines_every_n_records_of_a_storm():
    keys = ["e", "f"] + ["e"] * 50
    _, records, lines, stats = fold_run([stamped(keys)], 1, (9,), fold_every=10)
    assert [line["removed"] for line in lines] == [10] * 5
    assert [line["continues"] for line in lines] == [True] * 4 + [False]
    assert [line["part"] for line in lines] == [1, 2, 3, 4, 5]
    assert all(line["length"] == 1 and line["copies"] == line["removed"] for line in lines)
    assert stats.skipped == 50 and records == stamped(["e", "f"])


def test_idle_writes_the_run_so_far_and_the_next_line_continues_it():
    d = Deduplicator(window_size=1, fold=True, fold_format="{removed} {part} {continues}")
    out = d.feed([b"a", b"b", b"a", b"a", b"a"])
    assert out == [b"a", b"b"]
    assert d.idle() == [b"3 1 1"]
    assert d.idle() == []  # nothing new since
    out = d.feed([b"a", b"c"]) + d.flush()
    assert out == [b"1 2 0", b"c"]


def test_idle_right_before_the_run_ends_writes_no_empty_line():
    d = Deduplicator(window_size=1, fold=True, fold_format="{removed}")
    d.feed([b"a", b"a", b"a"])
    assert d.idle() == [b"2"]
    assert d.feed([b"z"]) + d.flush() == [b"z"]


def test_library_material_is_named_and_shown(tmp_path):
    library = tmp_path / "lib"
    first = Deduplicator(window_size=2, library_dir=library, max_history=None)
    first.feed([b"p", b"q", b"r"])
    first.flush()
    d = Deduplicator(window_size=2, fold=True, fold_format="json", library_dir=library)
    out = d.feed([b"s", b"p", b"q", b"r", b"t"]) + d.flush()
    line = json.loads(out[1])
    assert out[0] == b"s" and out[2:] == [b"t"]
    assert line["sequence"] and line["match_file"] == f"library sequence {line['sequence']}"
    assert (line["match_start"], line["match_end"], line["length"]) == (1, 3, 3)


def test_options_are_checked():
    with pytest.raises(UsageError, match="fold cannot be combined with inverse"):
        Deduplicator(fold=True, inverse=True)
    with pytest.raises(UsageError, match="fold cannot be combined with annotate"):
        Deduplicator(fold=True, annotate=True)
    with pytest.raises(UsageError, match="fold_format requires fold"):
        Deduplicator(fold_format="json")
    with pytest.raises(UsageError, match=r"unknown placeholder '\{nope\}'"):
        Deduplicator(fold=True, fold_format="{removed} {nope}")
    with pytest.raises(UsageError, match="fold_every must be at least 1"):
        Deduplicator(fold=True, fold_every=0)
    with pytest.raises(UsageError, match="fold_idle must be a number of seconds"):
        Deduplicator(fold=True, fold_idle=-1.0)


@given(st.lists(st.sampled_from("ab"), min_size=1, max_size=30))
def test_shortest_period_and_periodic_match_are_literal(keys):
    encoded = b"".join(k.encode() * 16 for k in keys)
    assert shortest_period(encoded) == smallest_period(keys)
    for length in range(1, len(keys) + 1):
        unit = encoded[: length * 16]
        for offset in (0, 1, length):
            data = encoded[length * 16 :]
            want = 0
            while want < len(data) // 16 and keys[length + want] == keys[(offset + want) % length]:
                want += 1
            assert periodic_match(unit, data, offset) == want


# -- live, through the installed command and a pipe (no PYTHONUNBUFFERED) ---------------


def test_live_new_lines_at_once_and_a_paused_run_within_the_idle_time():
    proc = live("-q", "-w", "5", "--fold", "--fold-idle", "0.5")
    try:
        fd, lines = new_lines_arrive_at_once(proc)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(lines) + lines[0])  # a repeat, then a pause
        proc.stdin.flush()
        got = arrived_lines(fd, 1)  # the pause alone brings it: nothing more is written
        # every record certain to go is counted, those waiting for their window too
        assert got.startswith(b"[FOLDED: lines 13-25 like ")
        assert got.endswith(b"; the run goes on]\n")
        proc.stdin.write(b"fresh\n")
        proc.stdin.flush()
        assert arrived(fd, 6) == b"fresh\n"  # (the idle line took the whole run)
        proc.stdin.close()
        assert proc.stdout.read() == b""
        assert proc.wait(10) == 0
    finally:
        proc.kill()


@pytest.mark.slow
def test_live_a_steady_storm_shows_a_line_every_n_repeats():
    every = 1000
    proc = live(
        "-q", "-w", "3", "--fold", "--fold-every", str(every), "--fold-format", "{removed}",
        "--fold-idle", "0",  # (a pause of the test machine brings no line of its own)
    )  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        proc.stdin.write(b"start\n" + b"storm\n" * 50_003)
        proc.stdin.flush()
        expected = [b"start", b"storm", b"storm", b"storm"]
        expected += [str(every).encode()] * (50_000 // every - 1)
        got = arrived_lines(fd, len(expected))  # the pipe stays open: the run goes on
        assert got.split(b"\n")[:-1] == expected
        settled(proc)
        assert pending(fd) == b""  # and nothing more until it ends
        proc.stdin.close()
        assert proc.stdout.read() == b"1000\n"
        assert proc.wait(10) == 0
    finally:
        proc.kill()


def test_several_files_through_the_command(tmp_path, run_cli):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(b"x\ny\nz\nx\ny\nz\nq\n")
    b.write_bytes(b"x\ny\nz\nr\n")
    done = run_cli(["-q", "-w", "2", "--fold", str(a), str(b)])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[3].startswith(f'[FOLDED: lines 4-6 of {a} like "x" (lines 1-3 of {a}), id ')
    assert lines[5].startswith(f'[FOLDED: lines 1-3 of {b} like "x" (lines 1-3 of {a}), id ')
    assert lines[3].split()[12] == lines[5].split()[12]  # one id: one sequence
    assert [line for line in lines if not line.startswith("[FOLDED")] == ["x", "y", "z", "q", "r"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fold", "-i"], "--fold cannot be combined with --inverse"),
        (["--fold", "-a"], "--fold cannot be combined with --annotate"),
        (["--fold-every", "5"], "--fold-every requires --fold"),
        (["--fold-idle", "1"], "--fold-idle requires --fold"),
        (["--fold", "--fold-idle", "-1"], "--fold-idle must be 0 or more"),
        (["--fold-format", "json"], "--fold-format requires --fold"),
        (["--fold", "--fold-format", "{nope}"], "--fold-format: unknown placeholder '{nope}'"),
        (["--fold", "--fold-format", ""], "--fold-format must not be empty"),
        (["--fold", "--show-keys"], "cannot be combined with --fold"),
    ],
)
def test_wrong_fold_options_are_one_line_and_no_output(run_cli, args, message):
    done = run_cli(args, b"a\nb\n")
    assert done.returncode == 1 and done.stdout == b""
    error = done.stderr.decode()
    assert error.count("\n") == 1 and message in error, error


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@settings(max_examples=examples(300), deadline=None)
@given(
    keys=st.lists(st.sampled_from("ab"), min_size=1, max_size=40),
    offset=st.integers(0, 50),
    text=st.text(alphabet="0123456789-:T ZJanFeb/.+x", max_size=40),
)
def test_the_kernel_compares_and_scans_as_the_definitions(keys, offset, text):
    from seqdedup import _kernel
    from seqdedup.config.normalize import first_timestamp
    from seqdedup.engine.choice import engine_named

    encoded = b"".join(k.encode() * 16 for k in keys)
    assert _kernel.shortest_period(encoded) == shortest_period(encoded)
    for length in range(1, len(keys) + 1):
        unit, data = encoded[: length * 16], encoded[length * 16 :]
        assert _kernel.periodic_match(unit, data, offset) == periodic_match(unit, data, offset)
    record = text.encode()
    assert engine_named("c").first_timestamp(record) == first_timestamp(record)


@settings(max_examples=examples(200), deadline=None)
@given(
    keys=keys_strategy,
    window=st.integers(1, 5),
    every=st.sampled_from([None, 2, 7]),
    cuts=st.lists(st.integers(1, 300), min_size=1, max_size=5),
    top=st.booleans(),
    settled=st.booleans(),
)
def test_bytes_in_any_cut_give_the_lines_records_give(
    engine, keys, window, every, cuts, top, settled
):
    """Raw bytes (the kernel's chunk path, which hands each run's records over) and
    records (the record path) give the same output, lines included; also with records
    settled early (a history longer than the input: the same decisions), where a
    record written early in one cut is followed by a run's line in the next."""
    records = stamped(keys)
    options = dict(window_size=window, fold_every=every, top=3 if top else 0, **ORACLE_OPTIONS)
    if settled:
        options["max_history"] = 10_000
    d = Deduplicator(**options)
    expected = d.feed(records) + d.flush()
    data = b"".join(record + b"\n" for record in records)
    d = Deduplicator(**options)
    out, at, turn = b"", 0, 0
    while at < len(data):
        out += d.feed_bytes(data[at : at + cuts[turn % len(cuts)]])
        at, turn = at + cuts[turn % len(cuts)], turn + 1
    out += d.flush_bytes()
    got = out.splitlines()
    assert len(got) == len(expected)
    provisional = {
        k for k, part in enumerate(fold_parts([keys], window, every)) if part["source"] is None
    }
    line_number = 0
    for item, want in zip(got, expected, strict=True):
        if not want.startswith(b'{"seqdedup"'):
            assert item == want
            continue
        line, wanted = json.loads(item), json.loads(want)
        if line_number in provisional:  # an interim line while the first piece goes on:
            for field in ("match_file", "match_start", "match_end", "sequence"):
                del line[field], wanted[field]  # its source depends on the cut (documented)
        assert line == wanted
        line_number += 1
    lines = [json.loads(item) for item in got if item.startswith(b'{"seqdedup"')]
    check_against_oracle([keys], window, every, lines)
    if top:
        assert d.stats.top_sequences is not None


@settings(max_examples=examples(100), deadline=None)
@given(
    keys=st.lists(st.sampled_from(["a", "b", "c", "ts"]), max_size=80),
    window=st.integers(1, 4),
    history=st.sampled_from([None, 100]),
    every=st.sampled_from([None, 3]),
)
def test_with_filters_the_lines_count_the_tracked_records_skipped(
    engine, keys, window, history, every
):
    """Records a filter passes through are written where they stand; the lines count
    exactly the tracked records skipped, and without them the output is the normal one
    (the record path, with records settled early on a limited history)."""
    records = [f"{k} {n}".encode() for n, k in enumerate(keys)]
    rules = (FilterRule("bypass", "^ts"),)
    d = Deduplicator(
        window_size=window,
        max_history=history,
        fold=True,
        fold_format="json",
        fold_every=every,
        filters=rules,
        key_steps=(("mask", " [0-9]+$"),),  # the number after the key is not compared
    )
    out: list[bytes] = []
    for k in range(0, len(records), 5):
        out += d.feed(records[k : k + 5])
    out += d.flush()
    lines = [json.loads(o) for o in out if o.startswith(b'{"seqdedup"')]
    written = [o for o in out if not o.startswith(b'{"seqdedup"')]
    tracked = [k for k in keys if k != "ts"]
    flags = iter(skipped_flags(tracked, window, history))
    want = [r for r, k in zip(records, keys, strict=True) if k == "ts" or not next(flags)]
    assert written == want
    assert sum(line["removed"] for line in lines) == d.stats.skipped
    assert all(line["removed"] == line["copies"] * line["length"] + line["extra"] for line in lines)


def test_a_line_ended_by_a_settled_record_numbers_it_among_passed_records(engine):
    """With filters and a limited history, records settled early end a run before the
    matcher decides them: the line still names their input record numbers (once an
    IndexError: attribution does not hold undecided records' numbers)."""
    keys = ["ts", "b", "b", "b", "ts", "b", "b", "b", "a"]
    records = [f"{k} {n}".encode() for n, k in enumerate(keys)]
    d = Deduplicator(
        window_size=3,
        max_history=100,
        fold=True,
        fold_format="json",
        filters=(FilterRule("bypass", "^ts"),),
        key_steps=(("mask", " [0-9]+$"),),
    )
    out = d.feed(records[:5]) + d.feed(records[5:]) + d.flush()
    lines = [json.loads(o) for o in out if o.startswith(b'{"seqdedup"')]
    assert [(line["start"], line["end"], line["removed"]) for line in lines] == [(6, 8, 3)]
    assert [o for o in out if not o.startswith(b"{")] == [*records[:5], records[8]]


@pytest.mark.parametrize("engine", ["c", "python"])
def test_a_fold_line_says_when_its_copies_differ_in_their_text(run_cli, engine, monkeypatch):
    """Under key options, copies of one sequence may differ in their text (--normalize
    number folds exit status 0 into 1): the line says how many texts it folded, never
    counting timestamps (its time span says those differ)."""
    monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
    statuses = [0, 0, 1, 0, 0, 0, 2]
    data = b"".join(b"job exit status %d\n" % s for s in statuses)
    p = run_cli(["-q", "-w", "1", "--normalize", "number", "--fold"], data)
    assert b'like "job exit status 0" (line 1, 6 copies, 3 texts), id ' in p.stdout
    # a run that a kept record ends (lined at once, from its keys, on the kernel's path)
    ended = run_cli(["-q", "-w", "1", "--normalize", "number", "--fold"], data + b"done\n")
    assert b'like "job exit status 0" (line 1, 6 copies, 3 texts), id ' in ended.stdout
    as_json = run_cli(
        ["-q", "-w", "1", "--normalize", "number", "--fold-format", "json", "--fold"], data
    )
    assert json.loads(as_json.stdout.splitlines()[-1])["variants"] == 3
    template = run_cli(
        ["-q", "-w", "1", "--normalize", "number", "--fold", "--fold-format", "{variants}"], data
    )
    assert template.stdout.splitlines()[-1] == b"3"
    stamped = b"".join(b"2026-11-26T10:00:%02dZ job done\n" % k for k in range(6))
    same = run_cli(
        ["-q", "-w", "1", "--normalize", "timestamp", "--fold", "--fold-format", "json"], stamped
    )
    assert json.loads(same.stdout.splitlines()[-1])["variants"] == 1  # only their times differ
    plain = run_cli(["-q", "-w", "1", "--fold"], b"a\na\na\n")
    assert b" texts)" not in plain.stdout
    pods = b"".join(b"[p%d] exit %d\n" % (k % 2, k % 3) for k in range(12))
    streams = run_cli(
        ["-q", "-w", "1", "--stream-by", r"^\[(\w+)\] ", "--normalize", "number", "--fold"], pods
    )
    assert b" texts), id " in streams.stdout


@settings(max_examples=examples(300), deadline=None)
@given(
    values=st.lists(st.integers(0, 3), max_size=40) | st.lists(st.integers(0, 2**64 - 1)),
    length=st.integers(1, 7),
)
def test_the_copies_texts_are_counted_as_the_literal_grouping_counts_them(values, length):
    """distinct_copies (how many texts a fold line's copies have): the digests grouped by
    ``length`` from the first, a shorter last group one of its own, the different groups
    counted; the Python twin and the kernel (its table, exact comparisons) alike, also
    from a buffer at an odd address."""
    from array import array

    from seqdedup.engine.choice import engine_named
    from seqdedup.engine.pyengine import PYTHON

    want = len({tuple(values[k : k + length]) for k in range(0, len(values), length)})
    texts = array("Q", values)
    assert PYTHON.distinct_copies(texts, length) == want
    if not kernel_built():
        pytest.skip("the kernel is not built")
    kernel = engine_named("c")
    assert kernel.distinct_copies(texts, length) == want
    odd = memoryview(b"x" + texts.tobytes())[1:]
    assert kernel.distinct_copies(odd, length) == want  # type: ignore[arg-type]


def test_the_copies_texts_refuse_a_length_below_one_and_a_torn_digest():
    from array import array

    from seqdedup.engine.choice import engine_named
    from seqdedup.engine.pyengine import PYTHON

    engines = [PYTHON, engine_named("c")] if kernel_built() else [PYTHON]
    for engine in engines:
        with pytest.raises(ValueError, match="length >= 1"):
            engine.distinct_copies(array("Q", [1, 2]), 0)
    if kernel_built():
        with pytest.raises(ValueError, match="8-byte digests"):
            engine_named("c").distinct_copies(b"\0" * 9, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["c", "python"])
def test_an_idle_line_counts_every_record_already_certain_to_go(engine, monkeypatch):
    monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
    block = [b"a", b"b", b"c", b"d", b"e"]
    dedup = Deduplicator(window_size=5, fold=True, max_history=100_000, fold_format="{removed}")
    assert dedup.feed(block * 3) == block
    assert dedup.idle() == [b"10"]  # records 6-15: the last four still wait for a window
    assert dedup.feed([*block, b"z"]) + dedup.flush() == [b"5", b"z"]
    assert dedup.stats.skipped == 15  # counted once each


def test_fold_every_takes_a_count_or_a_time():
    from seqdedup.config.groups import Duration

    assert Duration.parse("10") == 10 and isinstance(Duration.parse("10"), int)
    assert [Duration.parse(t) for t in ("30s", "5m", "500ms", "2h", "1.5s")] == [
        30.0,
        300.0,
        0.5,
        7200.0,
        1.5,
    ]
    assert all(isinstance(Duration.parse(t), Duration) for t in ("30s", "5m"))
    for bad in ("1x", "0s", "1.5", "-3s", "", "s"):
        with pytest.raises(ValueError):
            Duration.parse(bad)


def test_fold_every_a_time_on_a_named_file_reads_the_records_own_time(run_cli, tmp_path):
    storm = "".join(
        f"2026-11-26T10:{s // 60:02d}:{s % 60:02d}Z ERROR db connection refused\n"
        for s in range(200)
    )
    log = tmp_path / "storm.log"
    log.write_text(storm)
    args = ["-q", "-w", "1", "--normalize", "timestamp", "--fold", "--fold-format", "{removed}"]
    p = run_cli([*args, "--fold-every", "1m", str(log)])
    assert p.returncode == 0 and p.stdout.splitlines()[1:] == [b"60", b"60", b"60", b"19"]
    (tmp_path / "plain.log").write_text("a\na\na\n")
    refused = run_cli(
        ["-q", "-w", "1", "--fold", "--fold-every", "30s", str(tmp_path / "plain.log")]
    )
    assert refused.returncode == 1
    assert b"reads each removed record's own time on a named file" in refused.stderr
    streams = run_cli(["-q", "--fold", "--fold-every", "30s", "--stream-by", "^x", str(log)])
    assert streams.returncode == 1 and b"cannot be combined with --stream-by" in streams.stderr
    bad = run_cli(["-q", "--fold", "--fold-every", "1x", str(log)])
    assert bad.returncode == 1 and b"not a count nor a duration" in bad.stderr


def test_fold_every_a_time_on_live_input_reads_the_clock(monkeypatch):
    from seqdedup.config.groups import Duration
    from seqdedup.run import fold

    clock = [1000.0]
    monkeypatch.setattr(fold.time, "monotonic", lambda: clock[0])
    options = {"window_size": 1, "fold": True, "fold_format": "{removed}"}
    dedup = Deduplicator(**options, fold_every=Duration(30), max_history=1000)
    out = dedup.feed([b"x"])
    for second in range(1, 100):  # one repeat a second, fed as it comes
        clock[0] = 1000.0 + second
        out += dedup.feed([b"x"])
    out += dedup.flush()
    assert out == [b"x", b"30", b"30", b"30", b"9"]


def test_otel_fold_records_parse_as_otlp_log_records(run_cli):
    """--fold-format otel: each line one OTLP/JSON LogRecord (the protobuf package's own
    JSON parser reads it) with logdedupprocessor's attributes beside seqdedup's; times
    are the records' own where they carry timestamps, else the time written."""

    logs = pytest.importorskip("opentelemetry.proto.logs.v1.logs_pb2")
    from google.protobuf import json_format

    p = run_cli(
        [
            "-w",
            "4",
            "-q",
            "--normalize",
            "all",
            "--fold",
            "--fold-format",
            "otel",
            "examples/requests.log",
        ]
    )
    lines = [line for line in p.stdout.splitlines() if line.startswith(b'{"timeUnixNano"')]
    assert len(lines) == 2
    records = [json_format.Parse(line, logs.LogRecord()) for line in lines]
    attributes = [{a.key: a.value for a in r.attributes} for r in records]
    assert [a["log_count"].int_value for a in attributes] == [5, 4]
    assert attributes[0]["first_observed_timestamp"].string_value == "2026-11-22T09:00:09.412Z"
    assert attributes[0]["last_observed_timestamp"].string_value == "2026-11-22T09:00:16.874Z"
    assert attributes[0]["seqdedup.length"].int_value == 5
    assert attributes[0]["seqdedup.continues"].bool_value is False
    assert records[0].time_unix_nano == 1795338009412000000
    assert records[0].body.string_value.startswith("[FOLDED: lines 7-11 like ")
    before = time.time_ns()
    plain = run_cli(["-w", "1", "-q", "--fold", "--fold-format", "otel"], b"a\na\na\n")
    undated = json_format.Parse(plain.stdout.splitlines()[-1], logs.LogRecord())
    assert undated.time_unix_nano >= before - 10**9  # (no timestamp: the time written)


def _unkeyed(keys: list[str]) -> list[bytes]:
    """Records compared whole (no key options), so a run's line is made at once where
    it lies whole in a batch: a time that is the key's own (copies stay equal), and
    one key without a time; "u" is a record seen once (it ends a run)."""
    return [
        k.encode()
        if k == "c"
        else f"new {n}".encode()
        if k == "u"
        else f"2026-11-24T10:00:0{ord(k) - 97} {k}".encode()
        for n, k in enumerate(keys)
    ]


def _fold_output(engine_name: str, records: list[bytes], cuts, **options) -> bytes:
    """The output of ``engine_name``'s engine, the kernel's fed as bytes in ``cuts``,
    Python's the records those bytes complete (an interim line names the source known
    when it is written: both engines must know the same by then)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SEQDEDUP_ENGINE", engine_name)
        d = Deduplicator(fold=True, **options)
    data = b"".join(record + b"\n" for record in records)
    if engine_name == "python":  # the records complete at each cut, as the kernel sees them
        lines, done, at, turn = [], 0, 0, 0
        while at < len(data):
            at, turn = at + cuts[turn % len(cuts)], turn + 1
            complete = data[:at].count(b"\n")
            lines += d.feed(records[done:complete])
            done = complete
        return b"".join(line + b"\n" for line in lines + d.flush())
    out, at, turn = b"", 0, 0
    while at < len(data):
        out += d.feed_bytes(data[at : at + cuts[turn % len(cuts)]])
        at, turn = at + cuts[turn % len(cuts)], turn + 1
    return out + d.flush_bytes()


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@settings(max_examples=examples(200), deadline=None)
@given(
    keys=st.lists(
        st.sampled_from(["ab", "abc", "ba", "c", "aab", "bcbc", "u", "uu"]), max_size=200
    ).map(lambda blocks: list("".join(blocks))),
    window=st.integers(1, 5),
    every=st.sampled_from([None, 2, 7, 10_000]),
    cuts=st.lists(st.integers(1, 60) | st.integers(500, 4000), min_size=1, max_size=5),
    fold_format=st.sampled_from([None, "json", "{start}-{end} {id} x{copies}+{extra}"]),
    color=st.booleans(),
)
def test_whole_runs_lined_at_once_read_as_the_python_engine_lines_them(
    keys, window, every, cuts, fold_format, color
):
    """Unkeyed records through the kernel's chunk path, where a run that lies whole in
    a batch gets its line straight from its keys (fold_shape, encode_joined, the
    default text inline): the same bytes as the Python engine's, which lines every run
    record by record."""
    records = _unkeyed(keys)
    options = dict(
        window_size=window,
        fold_every=every,
        fold_format=fold_format,
        color=color,
        max_history=None,
    )
    kernel = _fold_output("kernel", records, cuts, **options)
    python = _fold_output("python", records, cuts, **options)
    assert kernel == python


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
def test_whole_runs_are_lined_at_once_on_the_chunk_path(monkeypatch):
    """The fast path is taken (so the test above tests it): a storm's lines in one
    batch come from fold_shape, not from the record-by-record path."""
    from seqdedup.run import fold

    calls = []
    monkeypatch.setattr(fold.Folder, "_extend", lambda *args: calls.append(args))
    records = _unkeyed(list("abab" * 50 + "c" + "ab" * 20 + "cdefghij"))
    out = _fold_output("kernel", records, [1 << 20], window_size=2, max_history=None)
    assert b'[FOLDED: lines 3-200 like "a" (lines 1-2, 99 copies), ' in out
    assert b'[FOLDED: lines 202-242 like "a" (lines 1-2, 20 copies and more), ' in out
    assert calls == []


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@settings(max_examples=examples(300), deadline=None)
@given(
    keys=st.lists(st.sampled_from("ab"), min_size=1, max_size=40),
    at=st.integers(0, 5),
    data=st.data(),
)
def test_fold_shape_is_the_period_and_the_periodic_match(keys, at, data):
    from seqdedup import _kernel

    encoded = b"".join(k.encode() * 16 for k in ["z"] * at + keys)
    extent = data.draw(st.integers(1, len(keys)))
    run = encoded[at * 16 :]
    length = shortest_period(run[: extent * 16])
    want = (length, periodic_match(run[: length * 16], run, 0))
    assert _kernel.fold_shape(encoded, at, extent, len(keys)) == want
    for bad in ((at, 0, len(keys)), (at, extent, extent - 1), (at + 1, extent, len(keys) + 1)):
        with pytest.raises(ValueError):
            _kernel.fold_shape(encoded, *bad)


@pytest.mark.skipif(not kernel_built(), reason="the compiled kernel is not built")
@settings(max_examples=examples(300), deadline=None)
@given(
    records=st.lists(st.binary(max_size=6), min_size=1, max_size=12),
    delimiter=st.sampled_from([b"\n", b"\0", b"--", b"\r\n"]),
    data=st.data(),
)
def test_encode_joined_is_the_library_row_of_the_first_records(records, delimiter, data):
    from seqdedup import _kernel

    records = [r.replace(delimiter, b"") for r in records]
    joined = delimiter.join(records)
    parts = joined.split(delimiter)  # (a record may hold part of a longer delimiter)
    count = data.draw(st.integers(0, len(parts)))
    assert _kernel.encode_joined(joined, delimiter, count) == encode_records(parts[:count])
    skip = data.draw(st.integers(0, len(parts) - count))  # (a piece inside a run: -l)
    row = _kernel.encode_joined(joined, delimiter, count, skip)
    assert row == encode_records(parts[skip : skip + count])
    with pytest.raises(ValueError):
        _kernel.encode_joined(joined, delimiter, len(parts) + 1)
    with pytest.raises(ValueError):
        _kernel.encode_joined(joined, delimiter, 1, len(parts))
    with pytest.raises(ValueError):
        _kernel.encode_joined(joined, b"", 1)


@settings(max_examples=examples(300), deadline=None)
@given(
    start=st.integers(1, 10**6),
    removed=st.integers(1, 50),
    length=st.integers(1, 10),
    source=st.integers(1, 10**6),
    times=st.sampled_from(["", "09:00:03", "2026-11-24T10:00:00"]),
    last=st.sampled_from(["", "09:14:55"]),
    variants=st.integers(1, 4),
)
def test_the_inline_text_is_the_default_text(start, removed, length, source, times, last, variants):
    from seqdedup.run.foldlines import default_text, plain_text

    copies = removed // length
    digest = blake2b(str(start).encode(), digest_size=16).digest()
    fields = {
        "start": start,
        "end": start + removed - 1,
        "file": "-",
        "removed": removed,
        "copies": copies,
        "extra": removed - copies * length,
        "length": length,
        "id": digest.hex()[:12],
        "digest": digest.hex(),
        "sequence": "",
        "count": 1,
        "first_time": times,
        "last_time": last,
        "part": 1,
        "continues": 0,
        "variants": variants,
        "window_size": 3,
        "match_file": "-",
        "match_start": source,
        "match_end": source + length - 1,
        "text": "a record",
    }
    shape = (copies, length, variants)
    inline = plain_text(start, removed, shape, digest, source, (times, last), "a record")
    assert inline == default_text(fields, named=False).encode()


@pytest.mark.parametrize(
    "options",
    [
        {},  # (the kernel's whole-run lines when it runs)
        {"fold_every": 3},  # parts
        {"stream_by": r"^(\w) "},
        {"key_steps": (("normalize", "number"),)},
    ],
)
def test_fold_events_are_objects_with_the_lines_fields(engine, options):
    """Deduplicator(on_fold=...): each fold line's fields as an object, one per line,
    the same fields the line is made of; the records they removed add up to the run's."""
    from seqdedup import Deduplicator

    data = b"".join(b"%s n%d\n" % (b"ab"[k % 2 : k % 2 + 1], k % 4) for k in range(120))
    events: list[dict] = []
    dedup = Deduplicator(window_size=2, fold=True, on_fold=events.append, **options)
    out = dedup.feed_bytes(data) + dedup.flush_bytes()
    lines = [line for line in out.splitlines() if line.startswith(b"[FOLDED")]
    assert events and len(events) == len(lines)
    assert sum(event["removed"] for event in events) == dedup.stats.skipped
    for event, line in zip(events, lines, strict=True):
        assert event["id"].encode() in line and event["digest"].startswith(event["id"])
        start, end, removed = event["start"], event["end"], event["removed"]
        if end - start + 1 != removed:  # (other streams' records between them)
            where = b"%d lines in %d-%d" % (removed, start, end)
        else:
            where = b"line %d" % start if start == end else b"lines %d-%d" % (start, end)
        head = b"[FOLDED (continued): " if event["part"] > 1 else b"[FOLDED: "
        assert line.startswith(head + where + b" ")
        assert b'like "%s"' % event["text"].encode() in line
        assert event["copies"] * event["length"] + event["extra"] == event["removed"]


# -- JSON records get JSON fold lines ------------------------------------------------
def _json_log(count: int = 30) -> bytes:
    import json

    lines = [
        json.dumps({"ts": f"2026-11-22T09:00:{i:02d}Z", "level": "info", "msg": "abc"[i % 3]})
        for i in range(count)
    ]
    return ("\n".join(lines) + "\n").encode()


def _all_json(out: bytes) -> bool:
    import json

    return all(isinstance(json.loads(line), dict) for line in out.splitlines())


def test_a_json_file_gets_json_fold_lines(run_cli, tmp_path):
    """The first 100 records of the (named, regular) input all JSON objects: the fold
    lines are JSON too, so the output stays a JSON stream (| jq)."""
    path = tmp_path / "app.jsonl"
    path.write_bytes(_json_log())
    done = run_cli(["-q", "-w", "3", "--normalize", "timestamp", "--fold", str(path)])
    assert done.returncode == 0 and b'"seqdedup": "fold"' in done.stdout
    assert _all_json(done.stdout)


def test_json_options_give_json_fold_lines_on_standard_input(run_cli):
    done = run_cli(["-q", "-w", "3", "--json-ignore", "ts", "--fold"], _json_log())
    assert b'"seqdedup": "fold"' in done.stdout and _all_json(done.stdout)


@pytest.mark.parametrize(
    ("args", "data", "named"),
    [
        # standard input is not read ahead of the run: text lines, as before
        ([], _json_log(), False),
        # a named format wins
        (["--fold-format", "{removed} gone"], _json_log(), True),
        # one record of the first 100 is no JSON object (the first, or an array)
        ([], b"plain text\n" + _json_log(), True),
        ([], _json_log().replace(b'{"ts"', b'[{"ts"', 1).replace(b"}\n", b"}]\n", 1), True),
    ],
)
def test_text_fold_lines_otherwise(run_cli, tmp_path, args, data, named):
    path = tmp_path / "app.log"
    path.write_bytes(data)
    command = ["-q", "-w", "3", "--normalize", "timestamp", "--fold", *args]
    done = run_cli([*command, str(path)] if named else command, b"" if named else data)
    assert done.returncode == 0 and b"seqdedup" not in done.stdout
    assert b"[FOLDED: " in done.stdout or b" gone\n" in done.stdout


# -- the text of a fold line, in the reader's words -----------------------------------
@pytest.mark.parametrize(
    ("record", "first_time", "quoted"),
    [
        (b"2026-11-22T09:00:01Z GET /health 200", "2026-11-22T09:00:01Z", "GET /health 200"),
        (b"[09:00:01] worker  started\tok", "09:00:01", "worker started ok"),
        (b"Jun 14 15:16:02 combo sshd(pam_unix)[19939]: check pass", "Jun 14 15:16:02",
         "check pass"),  # (a syslog header after the time left out)
        (b"INFO dfs.DataNode: no time", "", "INFO dfs.DataNode: no time"),
        (b"x 09:00:01 the time is not at the start", "09:00:01", "x 09:00:01 the time is..."),
        (b"bell\x07 and \xff bytes", "", "bell\\x07 and \ufffd bytes"),
        (b"a" * 40, "", "a" * 23 + "..."),
    ],
)  # fmt: skip
def test_a_fold_line_quotes_the_first_records_message(record, first_time, quoted):
    from seqdedup.run.foldlines import TEXT_WIDTH, folded_text

    assert folded_text(record, first_time) == quoted
    assert len(folded_text(record * 3, first_time)) <= TEXT_WIDTH


@pytest.mark.parametrize(
    ("first", "last", "said"),
    [
        ("2026-11-22T09:00:01Z", "2026-11-22T09:00:08Z", ", 2026-11-22T09:00:01Z..09:00:08Z"),
        ("081109 204015", "081109 204525", ", 081109 204015..204525"),
        ("Jun 15 12:12:34", "Jun 16 01:00:00", ", Jun 15 12:12:34..Jun 16 01:00:00"),
        ("09:00:01", "09:00:01", ", 09:00:01"),
        ("09:00:01", "", ", from 09:00:01"),
        ("", "", ""),
    ],
)
def test_the_time_span_leaves_out_the_date_both_ends_share(first, last, said):
    from seqdedup.run.foldlines import _times

    assert _times(first, last) == said


def test_fold_lines_on_real_logs_are_short(run_cli):
    """On loghub's eight logs (tests/data/loghub) with the logs profile: the median fold
    line is at most 120 characters, each quotes its first record, and its JSON twin
    holds every field (the counts the text leaves out among them)."""
    import statistics
    from pathlib import Path

    from seqdedup.run.foldlines import JSON_FIELDS

    lengths = []
    for log in sorted((Path(__file__).parent / "data" / "loghub").glob("*_2k.log")):
        out = run_cli(["--profile", "logs", "-q", str(log)]).stdout.decode("utf-8", "replace")
        folds = [line for line in out.splitlines() if line.startswith("[FOLDED")]
        assert folds and all(' like "' in line and ", id " in line for line in folds)
        lengths += [len(line) for line in folds]
    assert statistics.median(lengths) <= 120, statistics.median(lengths)
    as_json = run_cli(["--profile", "logs", "-q", "--fold-format", "json", str(log)])
    first = json.loads(next(line for line in as_json.stdout.splitlines() if b"fold" in line))
    assert set(JSON_FIELDS) <= set(first) and first["text"] in folds[0]
