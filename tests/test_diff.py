"""seqdedup diff's comparison (seqdedup.diff.compare), on each engine, against the oracle of its
definitions (tests/diff_oracle.py): new stretches and what repeats them, broken
sequences, rate changes, and the known records between, plain and with streams."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diff_oracle import oracle_diff
from seqdedup.config.settings import Config
from seqdedup.diff.changes import Broken, Known, New, Rate
from seqdedup.diff.compare import DiffOptions
from seqdedup.diff.inputs import diff_records

from conftest import examples

STREAMED = Config(stream_by=r"^\S+ ")


def records_of(named, streamed):
    if streamed:
        return [f"{name} {key}" for name, key in named]
    return [key for _, key in named]


def compared(good, bad, window, factor, min_count, streamed):
    options = DiffOptions(window=window, factor=factor, min_count=min_count, per="input")
    diff = diff_records(
        [records_of(records, streamed) for records in good],
        records_of(bad, streamed),
        STREAMED if streamed else Config(),
        options,
    )
    expected = oracle_diff(good, bad, window, factor, min_count)
    new = [
        {
            "first": c.first,
            "last": c.last,
            "length": c.length,
            "shown": [line.number for line in c.records],
            "repeated": c.repeated,
            "again": c.again,
            "again_last": c.again_last,
            "again_length": c.again_length,
        }
        for c in diff.changes
        if isinstance(c, New)
    ]
    broken = [
        (c.how, c.done, c.length, c.whole, c.times, c.first, c.last, c.last_break)
        for c in diff.changes
        if isinstance(c, Broken)
    ]
    rates = sorted(
        (c.kind, c.good, c.bad, c.first, c.last) for c in diff.changes if isinstance(c, Rate)
    )
    assert new == expected["new"]
    assert sorted(broken, key=lambda b: b[5]) == expected["broken"]
    assert rates == expected["rates"]
    return diff


def check_known_and_order(diff, bad_count, new_count):
    known = [c for c in diff.changes if isinstance(c, Known)]
    assert sum(c.length for c in known) == bad_count - new_count
    placed = [c for c in diff.changes if not (isinstance(c, Rate) and c.kind == "gone")]
    # in BAD's order: a broken sequence after its records, the others at their first
    places = [c.last if isinstance(c, Broken) else c.first for c in placed]
    assert places == sorted(places)


keys = st.sampled_from(["a", "b", "c", "d", "e", "x", "y"])
plain = st.lists(st.tuples(st.just("s"), keys), max_size=40)
named = st.lists(st.tuples(st.sampled_from(["s1", "s2", "s3"]), keys), max_size=40)


@settings(max_examples=examples(250), deadline=None)
@given(
    st.lists(plain, min_size=1, max_size=3),
    plain,
    st.integers(1, 6),
    st.sampled_from([1.5, 2.0, 3.0]),
    st.integers(1, 4),
)
def test_one_stream_is_the_oracles(engine, good, bad, window, factor, min_count):
    diff = compared(good, bad, window, factor, min_count, False)
    known = {key for records in good for _, key in records}
    check_known_and_order(diff, len(bad), sum(key not in known for _, key in bad))


@settings(max_examples=examples(250), deadline=None)
@given(
    st.lists(named, min_size=1, max_size=3),
    named,
    st.integers(1, 6),
    st.integers(1, 4),
)
def test_streams_are_the_oracles(engine, good, bad, window, min_count):
    compared(good, bad, window, 2.0, min_count, True)


def blocks(*names):
    return [("s", name) for name in names]


def test_each_kind_of_change_on_a_small_pair():
    good = [blocks("start", "load", "ready", "a", "b", "c", "a", "b", "c", "g", "r", "r", "g")]
    bad = blocks("start", "load", "ready", "a", "b", "E1", "E2", "r", "r", "r", "r", "r", "r")
    bad += blocks("E1", "E2", "b", "a", "c")
    diff = compared(good, bad, 1, 2.0, 2, False)
    kinds = [c.kind for c in diff.changes]
    assert kinds.count("new") == 1 and kinds.count("broken") == 1
    assert {c.kind for c in diff.changes if isinstance(c, Rate)} == {"more", "gone"}
    (new,) = [c for c in diff.changes if isinstance(c, New)]
    assert (new.first, new.last, new.again, new.again_last) == (6, 7, 1, 15)
    (broken,) = [c for c in diff.changes if isinstance(c, Broken)]
    assert (broken.how, broken.done, broken.times) == ("cut short", 2, 2)
    assert diff.changed


def test_nothing_changed_when_bad_is_good_again():
    records = blocks("start", "a", "b", "c", "a", "b", "c", "stop")
    diff = compared([records], records, 1, 2.0, 1, False)
    assert not diff.changed
    assert [c.kind for c in diff.changes] == ["known"]


@pytest.mark.parametrize(("window", "again"), [(1, 1), (300, 1), (400, 1), (401, 0), (1000, 0)])
def test_a_long_new_block_repeats_at_every_window_up_to_its_length(engine, window, again):
    """A new block of 400 records twice, known records of different kinds around each
    copy: the second copy repeats the first at every W up to 400 (counted as again),
    and at no W past it (shown)."""
    block = [f"new {k}" for k in range(400)]
    known = [f"known {k}" for k in range(30)]
    good = [known]
    bad = known[:10] + block + known[10:20] + block + known[20:]
    diff = diff_records(good, bad, options=DiffOptions(window=window, min_count=1))
    new = [c for c in diff.changes if isinstance(c, New)]
    if again:
        assert [(c.first, c.length, c.again, c.again_length) for c in new] == [(11, 400, 1, 400)]
        assert [line.number for line in new[0].records] == list(range(11, 411))
    else:
        assert [(c.first, c.length, c.again) for c in new] == [(11, 400, 0), (421, 400, 0)]
