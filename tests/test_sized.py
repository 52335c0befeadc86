"""The rule with a minimum size (seqdedup.engine.sized) against its literal oracle."""

from __future__ import annotations

import itertools
import json
import subprocess
from array import array
from functools import cache
from hashlib import blake2b

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from seqdedup.engine.sized import SizeDecider

from conftest import (
    ENGINES,
    HANG_GUARD,
    arrived,
    at_its_end,
    examples,
    live,
    seqdedup_command,
    settled,
    user_env,
    wait_until,
)
from oracle import new_material_sized, skipped_flags_sized, skipped_flags_streams


def make(
    engine: str,
    window: int,
    min_size: int,
    history: int | None,
    cap: int = 4096,
    collide: bool = False,
) -> SizeDecider:
    """The decider of ``engine`` ("c": the kernel's twin); ``collide``: every stretch of a
    length shares its fingerprint, so only the key hashes tell contents apart."""
    if engine == "c":
        from seqdedup import _kernel

        decider: SizeDecider = _kernel.SizeDecider(window, min_size, history, 7, cap, collide)
        return decider
    return SizeDecider(window, min_size, history, seed=7, cap=cap, force_collisions=collide)


ALPHABET = ["", "a", "bb", "ccc", "dddddd", "e" * 12]


def size_of(key: object) -> int:
    return len(str(key)) + 1


def key_hashes(keys: list[str]) -> bytes:
    return b"".join(blake2b(k.encode(), digest_size=16).digest() for k in keys)


def decide(
    decider: SizeDecider, streams: list[list[str]], batch: int = 3, new: bytearray | None = None
) -> list[bool]:
    """Skipped flags from ``decider``, fed ``batch`` records at a time (and with ``new``,
    the new-material flags taken after each call: each final after its decision)."""
    keep: list[bool] = []
    for number, stream in enumerate(streams):
        if number:
            decider.new_input()
        for at in range(0, len(stream), batch):
            part = stream[at : at + batch]
            keep += decider.push(key_hashes(part), array("q", [size_of(k) - 1 for k in part]))
            if new is not None:
                new += decider.take_new()
                assert len(new) <= len(keep)
        keep += decider.finish()
        if new is not None:
            new += decider.take_new()
    return [not k for k in keep]


def library_of(sequences: list[list[str]]) -> list[tuple[bytes, list[int]]]:
    return [(key_hashes(seq), array("q", [size_of(k) - 1 for k in seq])) for seq in sequences]


streams_st = st.lists(st.lists(st.sampled_from(ALPHABET[:4]), max_size=24), min_size=1, max_size=3)


# A decider's settings and inputs: what its property tests draw
DECIDER_CASES = {
    "streams": streams_st,
    "window": st.integers(1, 5),
    "min_size": st.integers(0, 14),
    "history": st.none() | st.integers(1, 12),
    "cap": st.integers(1, 8),
    "library": st.lists(st.lists(st.sampled_from(ALPHABET[:4]), max_size=8), max_size=2),
    "collide": st.booleans(),
}


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=examples(300), deadline=None)
@given(**DECIDER_CASES, batch=st.integers(1, 7), saving=st.booleans())
def test_each_decider_is_the_oracle(
    engine: str,
    streams: list[list[str]],
    window: int,
    min_size: int,
    history: int | None,
    cap: int,
    batch: int,
    library: list[list[str]],
    collide: bool,
    saving: bool,
) -> None:
    """The decisions; and where a library is saved, the new material: every first-seen
    shortest stretch, each flag final when taken (once, in order, after its decision)."""
    decider = make(engine, window, min_size, history, cap, collide)
    decider.add_library(library_of(library))
    expected = skipped_flags_sized(streams, window, min_size, size_of, history, library, cap)
    if not saving:
        assert decide(decider, streams, batch) == expected
        return
    decider.track_new()
    new = bytearray()
    assert decide(decider, streams, batch, new) == expected
    assert [bool(f) for f in new] == new_material_sized(
        streams, window, min_size, size_of, history, library, cap
    )


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=examples(300), deadline=None)
@given(**DECIDER_CASES)
def test_a_key_never_met_releases_every_record_at_once(
    engine: str,
    streams: list[list[str]],
    window: int,
    min_size: int,
    history: int | None,
    cap: int,
    library: list[list[str]],
    collide: bool,
) -> None:
    """Never late: a record whose key was never met (in the run, or the library) is
    decided in the call that brings it, and so is every record before it; one whose key
    was met decides nothing waiting, unless its stretches do. Pushed one at a time (under
    W = 1 a record large enough alone is decided by its own stretch: the kernel does not
    ask its table of keys met for it)."""
    decider = make(engine, window, min_size, history, cap, collide)
    decider.add_library(library_of(library))
    met = {key for sequence in library for key in sequence}
    pushed = decided = 0
    for number, stream in enumerate(streams):
        if number:
            decider.new_input()
        for key in stream:
            decided += len(decider.push(key_hashes([key]), array("q", [size_of(key) - 1])))
            pushed += 1
            if key not in met:
                assert decided == pushed, (key, pushed, decided)
            met.add(key)
        decided += len(decider.finish())
        assert decided == pushed


@pytest.mark.parametrize("engine", ENGINES)
def test_new_material_is_asked_for_in_order(engine: str) -> None:
    decider = make(engine, 1, 4, None)
    with pytest.raises(RuntimeError):
        decider.take_new()
    decider.push(key_hashes(["a"]), array("q", [1]))
    with pytest.raises(RuntimeError):
        decider.track_new()


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=examples(100), deadline=None)
@given(streams=streams_st, window=st.integers(1, 5), history=st.none() | st.integers(1, 12))
def test_no_minimum_size_is_the_plain_rule(
    engine: str, streams: list[list[str]], window: int, history: int | None
) -> None:
    sized = skipped_flags_sized(streams, window, 0, size_of, history)
    assert sized == skipped_flags_streams(streams, window, history)
    assert decide(make(engine, window, 0, history), streams) == sized


@pytest.mark.parametrize("engine", ENGINES)
def test_a_repeated_short_pair_stays_and_a_long_one_goes(engine: str) -> None:
    # the worked example of the docs: "}" and a blank line repeat, a 2-line error too
    lines = [
        "x = 1",
        "}",
        "",
        "ERROR disk /dev/sda1 is full",
        "  at write(fs.c:120)",
        "y = 2",
        "}",
        "",
        "z = 3",
        "ERROR disk /dev/sda1 is full",
        "  at write(fs.c:120)",
    ]
    flags = decide(make(engine, 1, 32, None), [lines])
    assert flags == [False] * 9 + [True, True]
    assert flags == skipped_flags_sized([lines], 1, 32, size_of)


@pytest.mark.parametrize("engine", ENGINES)
def test_history_is_counted_between_starts(engine: str) -> None:
    lines = ["aaaa", "bbbb"] + [str(k) for k in range(20)] + ["aaaa", "bbbb"]
    assert decide(make(engine, 1, 10, 21), [lines])[-2:] == [False, False]
    assert decide(make(engine, 1, 10, 22), [lines])[-2:] == [True, True]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("history", [None, 300])
def test_long_inputs_with_a_short_history_are_exact(engine: str, history: int | None) -> None:
    import random

    rng = random.Random(5)
    block = [f"line {k} " + "x" * rng.randrange(40) for k in range(30)]
    lines: list[str] = []
    for _ in range(40):
        lines += block[rng.randrange(10) :][: rng.randrange(1, 25)]
        lines += [str(rng.randrange(10**6)) for _ in range(rng.randrange(30))]
    decider = make(engine, 2, 120, history, cap=50)
    flags = decide(decider, [lines], batch=97)
    assert flags == skipped_flags_sized([lines], 2, 120, size_of, history, cap=50, longest=50)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("history", [None, 500])
def test_what_a_short_history_forgets_is_never_asked_for(engine: str, history: int | None) -> None:
    """Long enough for the tables to be swept and old key hashes dropped (every 4,096
    records), checked against the oracle's stretches of at most ``cap`` records. (Without
    a history nothing is swept: the Python twin's long run is the other test's.)"""
    if history is None and engine == "python":
        pytest.skip("nothing is swept without a history")

    lines = _swept_lines()
    flags = decide(make(engine, 2, 60, history, cap=16, collide=True), [lines], batch=1000)
    assert flags == _swept_oracle(history)


@cache
def _swept_lines() -> list[str]:
    import random

    rng = random.Random(11)
    blocks = [
        [f"{b}-{k} " + "y" * rng.randrange(30) for k in range(rng.randrange(2, 9))]
        for b in range(60)
    ]
    lines: list[str] = []
    while len(lines) < 9_000:  # (two sweeps: one every 4,096 records)
        lines += rng.choice(blocks) if rng.random() < 0.7 else [str(rng.randrange(99))]
    return lines


@cache
def _swept_oracle(history: int | None) -> list[bool]:
    """(once per history, for both engines: the oracle takes seconds here)"""
    return skipped_flags_sized([_swept_lines()], 2, 60, size_of, history, cap=16, longest=16)


@settings(max_examples=examples(60), deadline=None)
@given(
    streams=streams_st, window=st.integers(1, 4), min_size=st.integers(0, 12), cap=st.integers(1, 6)
)
def test_the_oracle_looks_at_short_stretches_only_where_that_changes_nothing(
    streams: list[list[str]], window: int, min_size: int, cap: int
) -> None:
    whole = skipped_flags_sized(streams, window, min_size, size_of, None, cap=cap)
    assert whole == skipped_flags_sized(
        streams, window, min_size, size_of, None, cap=cap, longest=cap
    )


# -- the rule in a run: the record path of both engines, filters, inputs, markers -----

RECORDS = ["a", "bb", "ccc", "dddddd", "#x", "#yy"]  # "#" lines bypass with the rule below


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=examples(120), deadline=None)
@given(
    streams=st.lists(st.lists(st.sampled_from(RECORDS), max_size=30), min_size=1, max_size=3),
    window=st.integers(1, 4),
    min_size=st.integers(1, 14),
    history=st.none() | st.integers(100, 120),
    batch=st.integers(1, 9),
    annotate=st.booleans(),
    bypass=st.booleans(),
)
def test_a_run_writes_what_the_oracle_keeps(
    engine: str,
    streams: list[list[str]],
    window: int,
    min_size: int,
    history: int | None,
    batch: int,
    annotate: bool,
    bypass: bool,
) -> None:
    """Markers stand where records went (and name an earlier equal stretch); filters let
    records through untouched; inputs are streams of one run."""
    from seqdedup import Deduplicator
    from seqdedup.config.groups import FilterRule

    rules = (FilterRule("bypass", "^#"),) if bypass else ()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SEQDEDUP_ENGINE", engine)
        dedup = Deduplicator(
            window_size=window, min_size=min_size, max_history=history, annotate=annotate,
            filters=rules, inputs=tuple(f"in{k}" for k in range(len(streams))),
        )  # fmt: skip
    assert dedup.engine == engine
    out: list[bytes] = []
    for number, stream in enumerate(streams):
        if number:
            out += dedup.next_input()
        records = [r.encode() for r in stream]
        for at in range(0, len(records), batch):
            out += dedup.feed(records[at : at + batch])
    out += dedup.flush()
    tracked = [[r for r in s if not (bypass and r.startswith("#"))] for s in streams]
    flags = skipped_flags_sized(tracked, window, min_size, size_of, history)
    skipped = iter(flags)
    want = [r for s in streams for r in s if (bypass and r.startswith("#")) or not next(skipped)]
    records_out = [r.decode() for r in out if not r.startswith(b"[DUPLICATE")]
    assert records_out == want
    markers = sum(r.startswith(b"[DUPLICATE") for r in out)
    runs = sum(1 for k, f in enumerate(flags) if f and (k == 0 or not flags[k - 1]))
    assert markers >= runs if annotate else markers == 0
    assert (markers == 0) == (runs == 0 or not annotate)


@pytest.mark.parametrize("engine", ENGINES)
def test_planted_blocks_of_any_length_go_whole_and_nothing_else(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-w auto: blocks of 2 to 200 records of about 100 bytes, each planted twice far
    apart among distinct records: every second copy goes whole, no distinct record goes."""
    import random

    from seqdedup import Deduplicator

    monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
    rng = random.Random(2)

    def record(tag: str) -> bytes:
        return (f"{tag} " + "".join(rng.choice("abcdefghij ") for _ in range(90))).encode()

    blocks = [[record(f"block{b}-{k}") for k in range(n)] for b, n in enumerate(range(2, 201, 9))]
    lines: list[bytes] = []
    for copy in range(2):
        for b, block in enumerate(blocks):
            lines += [record(f"noise{copy}-{b}-{k}") for k in range(30)] + block
    from seqdedup.engine.sized import AUTO_MIN_BYTES

    dedup = Deduplicator(window_size=1, min_size=AUTO_MIN_BYTES, max_history=None)
    out = dedup.feed(lines) + dedup.flush()
    assert out == [line for line in lines[: len(lines) // 2]] + [
        line for line in lines[len(lines) // 2 :] if line.startswith(b"noise")
    ]


# -- the options ------------------------------------------------------------------------
ERROR_PAIR = b"ERROR disk /dev/sda1 is full\n  at write(fs.c:120)\n"
EXAMPLE = b"x = 1\n}\n\n" + ERROR_PAIR + b"y = 2\n}\n\nz = 3\n" + ERROR_PAIR


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        (["-w", "auto"], EXAMPLE),  # the pair is 50 bytes: below 64
        (["-w", "1", "--min-bytes", "32"], EXAMPLE[: -len(ERROR_PAIR)]),
        (["-w", "1", "--min-bytes", "51"], EXAMPLE),
        (["-w", "1", "--min-tokens", "8"], EXAMPLE[: -len(ERROR_PAIR)]),
        (["-w", "3", "--min-bytes", "32"], EXAMPLE),  # (and W records too)
    ],
)
def test_the_size_options(run_cli, args: list[str], kept: bytes) -> None:
    p = run_cli(["-q", *args], EXAMPLE)
    assert (p.returncode, p.stdout, p.stderr) == (0, kept, b"")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--min-bytes", "8", "--min-tokens", "8"], "--min-bytes"),
        (["--min-bytes", "-1"], "--min-bytes"),
        (["--min-tokens", "x"], "--min-tokens"),
        (["-w", "autox"], "--window-size"),
    ],
)
def test_size_option_errors_are_one_line(run_cli, args: list[str], needle: str) -> None:
    p = run_cli(args, EXAMPLE)
    err = p.stderr.decode()
    assert (p.returncode, p.stdout) == (1, b"")
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_a_settings_file_may_say_auto_and_the_statistics_show_the_size(run_cli, tmp_path) -> None:
    settings = tmp_path / "s.toml"
    settings.write_text('window-size = "auto"\n')
    p = run_cli(["--config", settings, "--stats-format", "json"], EXAMPLE * 3)
    doc = json.loads(p.stderr)
    assert doc["configuration"]["min_size"] == {"bytes": 64}
    assert p.stdout == EXAMPLE  # three copies of an 82-byte body: the later two go


def test_a_budget_takes_the_size_options_and_they_change_nothing(run_cli) -> None:
    plain = run_cli(["-q", "--budget", "60"], EXAMPLE * 4)
    for args in (["-w", "auto"], ["--min-bytes", "32"], ["--min-tokens", "9"]):
        assert run_cli(["-q", "--budget", "60", *args], EXAMPLE * 4).stdout == plain.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_top_lists_each_planted_trace_once_and_whole(
    engine: str, run_cli, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row of --top is one whole trace of the generated log's pool, none twice.
    (Rows that share a first line, "KeyError in worker 28" in four rows of 39, 22, 15
    and 34 records, are four traces of the pool that begin alike: -w 5 lists them so
    too.)"""
    import random
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from genlog import _stack_trace, log_lines  # type: ignore[import-not-found]

    rng = random.Random(1)  # (the pool log_lines draws first, seed 1)
    pool = {tuple(_stack_trace(rng, rng.randint(5, 40))) for _ in range(200)}
    lines = log_lines(20_000)
    log = tmp_path / "generated.log"
    log.write_text("".join(line + "\n" for line in lines))
    monkeypatch.setenv("SEQDEDUP_ENGINE", engine)
    args = ["-w", "auto", "--normalize", "timestamp", "--top", "20", "--stats-format", "json"]
    p = run_cli([*args, log])
    rows = json.loads(p.stderr)["top_sequences"]
    shown = [
        tuple(lines[r["first_seen"]["lines"][0] - 1 : r["first_seen"]["lines"][1]]) for r in rows
    ]
    assert len(rows) == 20 and all(trace in pool for trace in shown)
    assert len(set(shown)) == len(shown)


@pytest.mark.skipif("c" not in ENGINES, reason="the kernel is not built")
@settings(max_examples=examples(200), deadline=None)
@given(keys=st.lists(st.binary(max_size=40) | st.text(max_size=30).map(str.encode), max_size=12))
def test_token_sizes_are_the_same_counted_by_the_kernel(keys: list[bytes]) -> None:
    from seqdedup.base.tokens import estimate_tokens
    from seqdedup.engine.choice import engine_named
    from seqdedup.keys.maker import key_sizes

    by_kernel = key_sizes(keys, "tokens", engine_named("c").record_tokens)
    assert list(by_kernel) == [estimate_tokens(k) for k in keys] == list(key_sizes(keys, "tokens"))


# -- live input: a record with a key never seen is written before the next is fed ---------

WORDS = ["gamma", "kilo", "lima", "mike", "oscar", "papa", "quebec", "romeo", "sierra"]
LIVE_SIZES = [
    ["-w", "auto"],
    ["-w", "1", "--min-bytes", "20"],
    ["-w", "2", "--min-bytes", "200"],
    ["-w", "auto", "--normalize", "all"],
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("size", LIVE_SIZES, ids=lambda a: " ".join(a))
def test_a_new_key_is_written_at_once_with_what_waited_before_it(engine, size):
    """Under a minimum size a record whose key was seen may wait for its stretch; one
    whose key was never seen cannot lie in any repeat: it comes out before the next
    record is fed, and so does every record that waited before it (the last line
    before a crash is never held). Order of events, no durations."""
    lines = [f"{word} 2026-12-06T10:00:0{k}Z ready\n".encode() for k, word in enumerate(WORDS)]
    panic = b"panic: runtime error: index out of range\n"
    whole = b"".join(lines) + b"".join(lines[:2]) + panic
    file_run = subprocess.run(  # (what the rule keeps: a live run writes the same)
        [*seqdedup_command(), "-q", *size],
        input=whole,
        capture_output=True,
        env={**user_env(), "SEQDEDUP_ENGINE": engine},
        check=True,
    ).stdout
    assert file_run.endswith(panic)
    proc = live("-q", *size, env={"SEQDEDUP_ENGINE": engine})
    try:
        assert proc.stdin is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        proc.stdin.write(b"".join(lines))  # all new: out at once
        proc.stdin.flush()
        assert arrived(fd, len(b"".join(lines))) == b"".join(lines)
        proc.stdin.write(b"".join(lines[:2]))  # seen keys: they may start a repeat
        proc.stdin.flush()
        settled(proc)
        proc.stdin.write(panic)  # never seen: decides what waited, and comes out
        proc.stdin.flush()
        rest = file_run[len(b"".join(lines)) :]
        assert arrived(fd, len(rest)) == rest  # all of it, the input still open
        proc.stdin.close()
        assert proc.stdout.read() == b"" and proc.wait(HANG_GUARD) == 0
    finally:
        proc.kill()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_new_key_is_written_at_once_when_a_file_is_followed(engine, tmp_path):
    """The same with -F: the appended lines that a file run keeps are all written while
    the file is still followed (no line after the new one was written)."""
    log = tmp_path / "app.log"
    log.write_bytes(b"before the follow\n")  # (not read: a follow starts at the end)
    env = {**user_env(), "SEQDEDUP_ENGINE": engine}
    lines = [f"{word} ready\n".encode() for word in WORDS]
    panic = b"panic: runtime error: index out of range\n"
    whole = b"".join(lines) + b"".join(lines[:2]) + panic
    file_run = subprocess.run(
        [*seqdedup_command(), "-q", "-w", "auto"], input=whole, capture_output=True, env=env
    ).stdout
    proc = subprocess.Popen(
        [*seqdedup_command(), "-F", "-q", "-w", "auto", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdout is not None
        wait_until(lambda: at_its_end(proc.pid, log), "the follow to start")
        with log.open("ab") as writer:
            writer.write(whole)
        assert arrived(proc.stdout.fileno(), len(file_run)) == file_run
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=examples(150), deadline=None)
@given(
    streams=st.lists(st.lists(st.sampled_from(RECORDS), max_size=80), min_size=1, max_size=3),
    window=st.integers(1, 4),
    min_size=st.integers(1, 14),
    history=st.none() | st.integers(100, 110),  # (the least: 100 records)
    cuts=st.lists(st.integers(1, 12), min_size=1, max_size=5),
    skip=st.sampled_from([0, 1]),
)
# (each record's size at the boundary: "a" weighs 2, a pair 4)
@example(streams=[["a", "a", "b"]], window=1, min_size=3, history=None, cuts=[1], skip=0)
@example(streams=[["a", "a", "b"]], window=1, min_size=2, history=None, cuts=[5], skip=0)
@example(streams=[["#x", "#x", "a"]], window=1, min_size=3, history=None, cuts=[2], skip=1)
def test_raw_bytes_in_any_cuts_keep_what_the_oracle_keeps(
    engine: str,
    streams: list[list[str]],
    window: int,
    min_size: int,
    history: int | None,
    cuts: list[int],
    skip: int,
) -> None:
    """`-q -w auto`'s path: raw bytes with nothing reading a source (on the kernel the
    size decider attached to the chunk matcher, which splits the records and makes their
    keys and sizes, ``--skip-chars`` here): the records kept are the oracle's, the input
    cut anywhere, over several inputs."""
    from seqdedup import Deduplicator

    def quiet_run() -> Deduplicator:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SEQDEDUP_ENGINE", engine)
            return Deduplicator(
                window_size=window, min_size=min_size, max_history=history,
                sequence_stats=False, skip_chars=skip,
                inputs=tuple(f"in{k}" for k in range(len(streams))),
            )  # fmt: skip

    dedup = quiet_run()
    assert dedup._stages.parts.plan.feeding == ("chunk" if engine == "c" else "record")
    out = b""
    for number, stream in enumerate(streams):
        if number:
            out += dedup.next_input_bytes()
        data, at = "".join(f"{r}\n" for r in stream).encode(), 0
        for step in itertools.cycle(cuts):
            if at >= len(data):
                break
            out += dedup.feed_bytes(data[at : at + step])
            at += step
    out += dedup.flush_bytes()
    keys = [[r[skip:] for r in stream] for stream in streams]
    flags = skipped_flags_sized(keys, window, min_size, size_of, history)
    skipped = iter(flags)
    assert out == "".join(f"{r}\n" for s in streams for r in s if not next(skipped)).encode()
    records = quiet_run()  # the same run fed records (the decider takes them from Python)
    kept: list[bytes] = []
    for number, stream in enumerate(streams):
        kept += records.next_input() if number else []
        kept += records.feed([r.encode() for r in stream])
    kept += records.flush()
    skipped = iter(flags)
    assert kept == [r.encode() for s in streams for r in s if not next(skipped)]
