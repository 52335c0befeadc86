"""seqdedup diff's comparison (seqdedup.diff.compare), on each engine, against the oracle of its
definitions (tests/diff_oracle.py): new stretches and what repeats them, broken
sequences, rate changes, and the known records between, plain and with streams."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diff_oracle import oracle_diff
from seqdedup.config.settings import Config
from seqdedup.diff.changes import LONG_SEQUENCE, Broken, Known, New, Rate
from seqdedup.diff.compare import DiffOptions
from seqdedup.diff.inputs import diff_records
from seqdedup.diff.text import as_text

from conftest import every_engine, examples

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


def key_table_oracle(calls):
    """The literal reading of KeyTable.add over ``calls`` (each: keys, weights, links,
    ends; None a separator): ids by first sight, counts of weights, and each key's
    neighbours (-1 an edge, -2 none seen, -3 several) over the stretches the linked
    calls make (a call with ends False continued by the next linked one; a call without
    links ends any stretch left open)."""
    ids, counts, after, before, firsts = {}, [], {}, {}, []
    stretches, stretch, open_end = [], [], False
    for keys, weights, links, ends in calls:
        mine = []
        for k, key in enumerate(keys):
            if key is not None and key not in ids:
                ids[key] = len(ids)
                counts.append(0)
                mine.append(k)
            if key is not None:
                counts[ids[key]] += weights[k]
        firsts.append(mine)
        if not links:
            if open_end:
                stretches.append((stretch, True))
            stretch, open_end = [], False
            continue
        for key in keys:
            if key is None:
                stretches.append((stretch, True))
                stretch = []
            else:
                stretch.append(ids[key])
        if ends:
            stretches.append((stretch, True))
            stretch = []
        open_end = not ends and bool(stretch)
        if not open_end:
            stretch = []
    if open_end:
        stretches.append((stretch, False))  # (its end not seen yet)
    for stretch, closed in stretches:
        for k, key_id in enumerate(stretch):
            before.setdefault(key_id, set()).add(stretch[k - 1] if k else -1)
            if k + 1 < len(stretch) or closed:
                after.setdefault(key_id, set()).add(stretch[k + 1] if k + 1 < len(stretch) else -1)

    def one(seen):
        return -2 if not seen else next(iter(seen)) if len(seen) == 1 else -3

    size = len(ids)
    return (
        firsts,
        counts,
        [one(after.get(k, set())) for k in range(size)],
        [one(before.get(k, set())) for k in range(size)],
    )


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.one_of(st.none(), st.sampled_from("abcde")), max_size=12),
            st.integers(0, 3),
            st.booleans(),
            st.booleans(),
            st.booleans(),
        ),
        max_size=5,
    )
)
def test_both_key_tables_are_the_literal_reading(calls):
    """GOOD's key table (the kernel's and the Python twin): each add's first positions
    of new ids, the counts and each key's neighbour before and after, as the oracle
    reads them; find gives each key's id and -2 for a key never added."""
    from array import array

    separator = b"\xff" * 16

    def hashed(key):
        return separator if key is None else key.encode() * 16

    tables = [engine.key_table() for engine in every_engine()]
    read = []
    for keys, weight, weighted, links, ends in calls:
        weights = [weight if weighted else 1] * len(keys)
        read.append((keys, weights, links, ends))
    firsts, counts, after, before = key_table_oracle(read)
    for table in tables:
        made = []
        for keys, weights, links, ends in read:
            hashes = b"".join(map(hashed, keys))
            packed = array("q", weights).tobytes() if weights and weights[0] != 1 else None
            added = table.add(hashes, packed, separator, links=links, ends=ends)
            made.append(list(array("q", added)))
        assert made == firsts
        got = [list(array(code, raw)) for code, raw in zip("qii", table.arrays(), strict=True)]
        assert got == [counts, after, before]
        assert len(table) == len(counts)
        probe = b"".join(hashed(key) for key in "abcdez")
        ids = {key: k for k, key in enumerate(dict.fromkeys(k for c in read for k in c[0] if k))}
        assert list(array("i", table.find(probe))) == [ids.get(key, -2) for key in "abcdez"]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.integers(-2, 5), max_size=40),
    st.lists(st.integers(0, 2), min_size=6, max_size=6),
    st.lists(st.integers(0, 3), min_size=6, max_size=6),
    st.lists(st.integers(0, 4), min_size=3, max_size=3),
)
def test_broken_fragments_are_the_maximal_stretches_that_are_not_whole(
    ranked, chain_of, index_of, lengths
):
    """The fragments of GOOD's sequences in BAD (the kernel's pass and the Python one):
    every maximal stretch of consecutive ranks whose keys follow each other in one
    checked sequence, left out when it runs from its first record to its last."""
    from array import array

    from seqdedup.diff.compare import broken_fragments

    stretches, current = [], []
    for r, key in enumerate(ranked):
        good = key >= 0 and lengths[chain_of[key]] > 0
        follows = current and good and chain_of[key] == chain_of[ranked[current[-1]]]
        if follows and index_of[key] == index_of[ranked[current[-1]]] + 1:
            current.append(r)
            continue
        if current:
            stretches.append(current)
        current = [r] if good else []
    if current:
        stretches.append(current)
    want = [
        (s[0], s[-1])
        for s in stretches
        if not (
            index_of[ranked[s[0]]] == 0
            and index_of[ranked[s[-1]]] == lengths[chain_of[ranked[s[0]]]] - 1
        )
    ]
    arrays = [array("i", values) for values in (ranked, chain_of, index_of, lengths)]
    for engine in every_engine():
        assert broken_fragments(engine, *arrays) == want, engine.name


def test_a_long_broken_sequence_shows_its_ends_and_where_it_broke():
    """A sequence of 30 records, twice whole in GOOD, in BAD cut short after 20 (then
    X), or run with records 11-20 left out. A break shows BAD's first and last EDGE
    records of it (with the lines around) and GOOD's first and last EDGE with those
    within EDGE of where BAD left the sequence or came back into it."""
    steps = [f"step {k:02}" for k in range(30)]
    options = DiffOptions(per="input")
    diff = diff_records([steps + steps], [*steps[:20], "X"], Config(), options)
    (cut,) = [c for c in diff.changes if isinstance(c, Broken)]
    assert (cut.how, cut.done, cut.left_out, cut.left_out_after) == ("cut short", 20, 14, 3)
    assert [line.number for line in cut.records] == [1, 2, 3, 18, 19, 20, 21]
    assert cut.expected_at == (1, 2, 3, 20, 21, 22, 23, 28, 29, 30)
    assert [line.text for line in cut.expected] == [steps[k - 1] for k in cut.expected_at]
    text = as_text(diff, "bad", ["good"])
    assert "!       3 | step 02\n!         ... 14 records of the sequence\n!      18 |" in text
    assert "!         | step 02\n!         ... 16 records\n!         | step 19\n" in text
    diff = diff_records([steps + steps], ["X", *steps[:10], *steps[20:], "Y"], Config(), options)
    (partly,) = [c for c in diff.changes if isinstance(c, Broken)]
    assert (partly.how, partly.done, partly.left_out) == ("partly", 20, 14)
    assert [line.number for line in partly.records] == [1, 2, 3, 4, 19, 20, 21, 22]
    assert partly.expected_at == (1, 2, 3, 10, 11, 12, 13, 18, 19, 20, 21, 28, 29, 30)


def test_a_sequence_of_twelve_records_is_shown_whole():
    steps = [f"step {k:02}" for k in range(LONG_SEQUENCE)]
    diff = diff_records([steps + steps], [*steps[:8], "X"], Config(), DiffOptions(per="input"))
    (cut,) = [c for c in diff.changes if isinstance(c, Broken)]
    assert cut.left_out == 0 and [line.text for line in cut.expected] == steps
    assert [line.number for line in cut.records] == list(range(1, 10))


@settings(max_examples=examples(300), deadline=None)
@given(
    st.integers(0, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(-3, n - 1), min_size=n, max_size=n),
            st.lists(st.integers(-3, n - 1), min_size=n, max_size=n),
        )
    )
)
def test_chains_follow_each_key_to_its_one_neighbour(links):
    """GOOD's sequences from each key's one neighbour after and before (the kernel's and
    the Python one): every key in one chain, at its place; a key is followed in its
    chain by its neighbour after exactly when that one's neighbour before is the key;
    a chain starts at a key no link enters, or (a cycle) at the first of its keys."""
    from array import array
    from itertools import pairwise

    after, before = (array("i", side) for side in links)
    found, *others = [engine.chains(after, before) for engine in every_engine()]
    assert all(other == found for other in others)
    members, starts, chain_of, index_of = (array("i", part) for part in found)
    n = len(after)
    assert sorted(members) == list(range(n)) and starts[0] == 0 and starts[-1] == n
    chains = [members[a:b] for a, b in pairwise(starts)]
    assert all(chains)
    linked = {k: f for k, f in enumerate(after) if 0 <= f != k and before[f] == k}
    for c, chain in enumerate(chains):
        for place, key in enumerate(chain):
            assert (chain_of[key], index_of[key]) == (c, place)
        for a, b in pairwise(chain):
            assert linked.get(a) == b
        if chain[0] in linked.values():  # (entered: only where a cycle was cut)
            assert linked.get(chain[-1]) == chain[0] and chain[0] == min(chain)
        else:
            assert chain[-1] not in linked


@settings(max_examples=examples(200), deadline=None)
@given(
    st.permutations(range(9)).flatmap(
        lambda keys: st.tuples(
            st.just(keys),
            st.sets(st.integers(1, len(keys) - 1)).map(lambda cuts: [0, *sorted(cuts), len(keys)]),
            st.lists(st.integers(-2, len(keys) - 1), max_size=60),
        )
    )
)
def test_bad_counts_per_chain_are_its_most_frequent_keys(chains):
    """BAD's count of a sequence (the kernel's pass and the Python one): the most times
    one of its keys occurs in BAD, keys GOOD lacks (negative) left out."""
    from array import array
    from itertools import pairwise

    keys, starts, ids = chains
    members, bounds, found = array("i", keys), array("i", starts), array("i", ids)
    want = [max(ids.count(k) for k in keys[a:b]) for a, b in pairwise(starts)]
    for engine in every_engine():
        assert list(array("q", engine.chain_counts(found, members, bounds))) == want


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from([-2, -1, 0, 1, 254, 65535, -65536, -33554432])),
    st.sampled_from([-2, -1, 0, 65535]),
)
def test_the_places_of_a_value_are_where_it_is(values, value):
    """The new keys are found by searching an int32 array's bytes: a match that lies
    across two values (-33554432 then -1 holds the bytes of -2 at an odd place) is
    none."""
    from array import array

    from seqdedup.diff.compare import places_of

    want = [k for k, v in enumerate(values) if v == value]
    assert list(places_of(value, array("i", values))) == want
    assert list(places_of(value, values)) == want


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.lists(st.integers(0, 5), max_size=6), max_size=5), st.integers(0, 40))
def test_new_keys_are_a_mapping_of_positions_to_hashes(parts, probe):
    """BAD's new keys, added a part at a time (24 bytes a record), read as the dict of
    position -> 16-byte hash they stand for: in order, by position, a missing one a
    KeyError."""
    from array import array

    from seqdedup.diff.compare import NewKeys

    keys, wanted, at = NewKeys(), {}, 0
    for gaps in parts:
        positions = array("q")
        for gap in gaps:
            at += gap + 1
            positions.append(at)
            wanted[at] = at.to_bytes(16, "little")
        keys.add(positions, b"".join(wanted[p] for p in positions))
    assert dict(keys) == wanted and list(keys) == list(wanted) and len(keys) == len(wanted)
    assert keys.hash_list() == list(wanted.values())
    if probe in wanted:
        assert keys[probe] == wanted[probe]
    else:
        with pytest.raises(KeyError):
            keys[probe]
