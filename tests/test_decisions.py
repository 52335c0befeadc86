"""seqdedup.Decisions, the decision-level API: keep flags against the oracle of the
rule (plain and per stream, with histories, idle streams and a stream limit), and the
closed runs against the records they cover."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.engine.decisions import Decided, Decisions

from conftest import examples
from oracle import (
    attribution_pieces_streams,
    interleaved_skipped,
    skipped_flags,
    skipped_flags_streams,
)


def decide_all(decisions: Decisions, keys, streams, step: int) -> tuple[list[bool], list]:
    """Everything fed in batches of ``step``, then finished: the flags and the blocks,
    checking that each call's flags start where the last one's ended."""
    keep, blocks = [], []
    for at in range(0, len(keys), step):
        part = streams[at : at + step] if streams is not None else None
        done = decisions.feed(keys[at : at + step], part)
        assert isinstance(done, Decided) and done.first == len(keep)
        keep += done.keep
        blocks += done.pieces
    done = decisions.finish()
    assert done.first == len(keep)
    return keep + done.keep, blocks + done.pieces


keys_strategy = st.lists(st.sampled_from([b"a", b"b", b"c", b""]), max_size=60)


@settings(max_examples=examples(200), deadline=None)
@given(keys=keys_strategy, window=st.integers(1, 4), step=st.integers(1, 7))
def test_one_stream_is_the_plain_rule(engine, keys, window, step):
    keep, _ = decide_all(Decisions(window), keys, None, step)
    assert keep == [not s for s in skipped_flags(keys, window)]


@settings(max_examples=examples(300), deadline=None)
@given(
    records=st.lists(st.tuples(st.sampled_from("xyz"), st.sampled_from([b"a", b"b"])), max_size=50),
    window=st.integers(1, 3),
    history=st.none() | st.integers(3, 12),
    idle=st.none() | st.integers(1, 6),
    max_streams=st.none() | st.integers(1, 2),
    step=st.integers(1, 9),
)
def test_streams_follow_the_oracle_and_blocks_cover_the_skipped(
    engine, records, window, history, idle, max_streams, step
):
    names = [name for name, _ in records]
    keys = [key for _, key in records]
    history = None if history is None else max(history, window)
    decisions = Decisions(window, history, idle, max_streams)
    keep, blocks = decide_all(decisions, keys, names, step)
    skipped = interleaved_skipped(
        list(zip(names, keys, strict=True)), window, history, idle, max_streams
    )
    assert keep == [not s for s in skipped]
    covered: list[int] = []
    contents: list[tuple[bytes, ...]] = []
    for block in blocks:
        # a block: records of one stream, in order, every one skipped
        members = [k for k in range(block.start, block.end + 1) if names[k] == block.stream]
        assert len(members) == block.length and not any(keep[k] for k in members)
        covered += members
        content = tuple(keys[k] for k in members)
        # its count: the first occurrence and each earlier block of the same content
        assert block.seen == 2 + contents.count(content)
        assert block.source_start <= block.source_end < block.start
        contents.append(content)
    assert sorted(covered) == [k for k, kept in enumerate(keep) if not kept]
    identities = {}
    for block, content in zip(blocks, contents, strict=True):
        assert identities.setdefault(content, block.identity) == block.identity
    assert len(set(identities.values())) == len(identities)
    assert decisions.sequences == len(identities)


def test_a_pause_ends_every_stream_and_the_streams_go_on(engine):
    d = Decisions(2)
    assert d.feed([b"a", b"b"], ["s", "s"]).keep == [True]  # (b waits for its window)
    assert d.feed([b"a"], ["t"]).keep == []  # (b of s still waits: order is kept)
    paused = d.pause()
    assert (paused.first, paused.keep) == (1, [True, True])
    after = d.feed([b"a", b"b"], ["t", "t"])
    assert (after.first, after.keep, after.pieces) == (3, [False], [])
    end = d.finish()
    assert (end.first, end.keep) == (4, [False])
    [block] = end.pieces
    assert (block.start, block.end, block.length, block.stream) == (3, 4, 2, "t")
    assert (block.source_start, block.source_end, block.seen) == (0, 1, 2)


def test_one_stream_per_key():
    with pytest.raises(ValueError, match="one stream per key"):
        Decisions(2).feed([b"a", b"b"], ["s"])


@settings(max_examples=examples(300), deadline=None)
@given(
    records=st.lists(st.tuples(st.sampled_from("xyz"), st.sampled_from([b"a", b"b"])), max_size=60),
    window=st.integers(1, 3),
    history=st.none() | st.integers(3, 12),
    idle=st.none() | st.integers(1, 6),
    max_streams=st.none() | st.integers(1, 2),
    step=st.integers(1, 9),
    pause_at=st.integers(0, 60),
)
def test_the_flags_alone_are_the_same_from_either_twin(
    engine, records, window, history, idle, max_streams, step, pause_at
):
    """closed=False: the kernel's stream matcher where it is built; the flags equal the
    Python decider's (with a pause on the way: every stream ends, lanes are reused)."""
    names = [name for name, _ in records]
    keys = [key for _, key in records]
    history = None if history is None else max(history, window)
    results = []
    for closed in (True, False):
        d = Decisions(window, history, idle, max_streams, closed=closed)
        keep = []
        for at in range(0, len(keys), step):
            keep += d.feed(keys[at : at + step], names[at : at + step]).keep
            if at <= pause_at < at + step:
                keep += d.pause().keep
        done = d.finish()
        assert done.pieces == [] or closed
        results.append(keep + done.keep)
    assert results[0] == results[1]


@settings(max_examples=examples(300), deadline=None)
@given(
    keys=keys_strategy,
    window=st.integers(1, 4),
    history=st.none() | st.integers(4, 15),
    step=st.integers(1, 7),
    pause_at=st.none() | st.integers(0, 60),
)
def test_pieces_follow_the_oracle_and_repeat_their_sources(
    engine, keys, window, history, step, pause_at
):
    """pieces=True: the plain rule (per input between pauses), and pieces that tile the
    skipped records, each equal record for record to the earlier stretch it names."""
    d = Decisions(window, history, pieces=True)
    keep, blocks, inputs = [], [], [[]]
    for at in range(0, len(keys), step):
        done = d.feed(keys[at : at + step])
        assert done.first == len(keep)
        keep += done.keep
        blocks += done.pieces
        inputs[-1] += keys[at : at + step]
        if pause_at is not None and at <= pause_at < at + step:
            done = d.pause()
            keep += done.keep
            blocks += done.pieces
            inputs.append([])
    done = d.finish()
    keep += done.keep
    blocks += done.pieces
    # the oracle: no window spans a pause, every earlier one is remembered (history)
    assert keep == [not s for s in skipped_flags_streams(inputs, window, history)]
    if history is None:
        pieces = [(b.start, b.end, b.source_start) for b in blocks]
        assert pieces == attribution_pieces_streams(inputs, window)
    covered = []
    for block in blocks:
        assert block.length == block.end - block.start + 1 and block.stream is None
        assert block.source_end - block.source_start == block.end - block.start
        assert block.source_start < block.start
        assert keys[block.start : block.end + 1] == keys[block.source_start : block.source_end + 1]
        assert block.seen >= 2
        covered += range(block.start, block.end + 1)
    assert covered == [k for k, kept in enumerate(keep) if not kept]


def test_pieces_take_no_streams():
    with pytest.raises(ValueError, match="one stream"):
        Decisions(2, pieces=True).feed([b"a"], ["s"])
    with pytest.raises(ValueError, match="closed=False leaves out"):
        Decisions(2, closed=False, pieces=True)


def test_the_names_before_the_vocabulary_was_one_still_work(engine):
    """``Block``, ``Decided.blocks`` and ``blocks=False`` are the earlier names of
    ``Piece``, ``Decided.pieces`` and ``closed=False``."""
    import seqdedup

    assert seqdedup.Block is seqdedup.Piece
    done = Decisions(1).feed([b"a", b"a", b"b"], ["s", "s", "s"])
    assert done.blocks == done.pieces and [p.start for p in done.pieces] == [1]
    flags_only = Decisions(1, blocks=False).feed([b"a", b"a", b"b"], ["s", "s", "s"])
    assert flags_only.keep == done.keep and flags_only.pieces == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"window": 2**40}, "window (--window-size) must be at most 1,048,576"),
        ({"window": 0}, "window (--window-size) must be at least 1, got 0"),
        ({"window": 2.5}, "window (--window-size) must be a whole number"),
        ({"history": -1}, "history (--max-history) must be at least 1, got -1"),
        ({"idle": 0}, "idle (--stream-idle) must be at least 1"),
        ({"max_streams": -3}, "max_streams (--max-streams) must be at least 1"),
        ({"sequences": float("nan")}, "sequences (--max-unique-sequences) must be a whole"),
    ],
)
def test_values_the_command_line_refuses_are_a_value_error_before_any_work(arguments, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Decisions(**arguments)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"factor": 0.5}, "--factor must be a number more than 1, not 0.5"),
        ({"factor": float("nan")}, "--factor must be a number more than 1, not nan"),
        ({"factor": float("inf")}, "--factor must be a number more than 1, not inf"),
        ({"min_count": 0}, "--min-count must be at least 1, got 0"),
        ({"min_bytes": -1}, "--min-bytes must be at least 0, got -1"),
        ({"window": -2}, "--window-size must be at least 1, got -2"),
        ({"per": "day"}, "--per must be auto, input or hour"),
    ],
)
def test_diff_options_the_command_line_refuses_are_a_value_error(arguments, message):
    from seqdedup import DiffOptions

    with pytest.raises(ValueError, match=re.escape(message)):
        DiffOptions(**arguments)


def test_a_wide_window_is_built_at_once():
    """2**20 records (the widest the command line takes) by counted work: its
    coefficients are one multiplication each (they were a modular power each)."""
    from seqdedup.engine import fingerprints

    calls = []
    real_pow = pow

    def counted_pow(*args):
        calls.append(args)
        return real_pow(*args)

    fingerprints.__dict__["pow"] = counted_pow
    try:
        coefficients = fingerprints.coefficients(1 << 12, 12345)
    finally:
        del fingerprints.__dict__["pow"]
    assert calls == []
    base = coefficients[(1 << 12) - 2]  # (the low lane's B ** 1)
    assert coefficients[0] == real_pow(base, (1 << 12) - 1, fingerprints.PRIME)
    Decisions(window=1 << 20)  # (the widest: built, not refused)


def test_pieces_cost_what_the_input_does_not_its_square(monkeypatch, engine):
    """Random lines of 5 values, W = 1: every earlier occurrence of a key was a candidate
    source (26 s at 80,000 keys); pieces now choose among --max-candidates' 10, as
    --annotate does, and twice the keys cost about twice the work (the kernel counts the
    keys attribution compares; in the Python engine its key slices are counted)."""
    import random

    from seqdedup.engine.attribution import Attributor

    compared = [0]
    original = Attributor._key_slice

    def counting(attributor, start, stop):
        compared[0] += max(0, stop - start)
        return original(attributor, start, stop)

    monkeypatch.setattr(Attributor, "_key_slice", counting)
    work = []
    for n in (4_000, 8_000):
        rng = random.Random(1)
        keys = [b"value %d" % rng.randrange(5) for _ in range(n)]
        compared[0] = 0
        rule = Decisions(1, pieces=True)
        blocks = rule.feed(keys).pieces + rule.finish().pieces
        assert sum(b.end - b.start + 1 for b in blocks) == n - 5  # (all but the 5 firsts)
        attribution = rule._twin._attribution  # type: ignore[attr-defined]
        work.append(compared[0] if engine == "python" else attribution.work)
    assert work[0] > 4_000 // 4, work  # attribution ran, and was counted
    assert work[1] <= 2.5 * work[0], work
