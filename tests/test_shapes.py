"""--budget's error shapes: one error with other values (a volume, a number of seconds)
is shown once, and the line after it counts the others and names their values; the
values read field by field (budget.values) against a literal reading."""

from __future__ import annotations

import random
import re
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import reduce_to_budget
from seqdedup.budget.removed import RemovedStore, restore
from seqdedup.budget.values import Column, briefly, columns, named
from seqdedup.config.normalize import EVERY, compiled_pattern

from conftest import every_engine, examples

VALUES = compiled_pattern(EVERY)
# (the engines' value_matches: the Python twin's, and the kernel's where it is built)
FINDERS = [partial(engine.value_matches, bits=EVERY) for engine in every_engine()]


def log(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def quota_log(volumes: int) -> bytes:
    """A CI log: jobs that start and pass, and one job in five that runs out of disk
    quota on its own volume (the same error, another value each time)."""
    rng = random.Random(5)
    lines = []
    for job in range(5 * volumes):
        lines.append(f"2026-11-22T10:{job // 60 % 60:02d}:{job % 60:02d}Z INFO job {job} started")
        if job % 5 == 0:
            lines.append(f"2026-11-22T10:00:00Z ERROR disk quota exceeded on vol-{job // 5}")
        lines.append(f"2026-11-22T10:00:00Z INFO job {job} passed in {rng.randrange(9, 99)}s")
    return log(lines)


def test_every_value_of_an_error_shape_is_named(tmp_path):
    """144 volumes at 7,500 tokens (at 8k every error line fits): one error line shown, the
    line after it counts the 144 and names every volume (the CI log of the budget
    issue); the note stands for no input: the store restores the input byte for byte."""
    data = quota_log(144)
    store = tmp_path / "removed.db"
    reduction = reduce_to_budget(data, 7_500, max_history=None, keep_removed=store)
    assert reduction.events_shown < reduction.events == 144
    lines = reduction.text.decode().split("\n")
    error = next(k for k, line in enumerate(lines) if "disk quota" in line)
    assert lines[error].endswith("ERROR disk quota exceeded on vol-0")
    note = lines[error + 1]
    assert re.fullmatch(r"\[seqdedup: 144 like line 2 in lines 2-\d+: on vol-0, vol-1, .*\]", note)
    text = reduction.text.decode()
    assert all(re.search(rf"\bvol-{n}\b", text) for n in range(144))
    opened = RemovedStore(store, create=False)
    try:
        assert restore(reduction.text, opened) == data
    finally:
        opened.close()


def test_a_small_budget_ranges_the_values_and_the_error_comes_first():
    """At 2k tokens: a FATAL among 300 WARNs that differ in a number is shown, one WARN
    too, and the WARN's note gives the range of the 300 numbers."""
    lines = [f"WARN lease not renewed for {30 + n} seconds" for n in range(300)]
    lines.insert(217, "FATAL no route to host datanode-7")
    reduction = reduce_to_budget(log(lines), 2_000, max_history=None)
    text = reduction.text.decode()
    assert "\nFATAL no route to host datanode-7\n" in text
    assert re.search(
        r"\n\[seqdedup: 300 like line 1 in lines 1-301: for 30 \.\. 329 \(300 values\)\]\n", text
    ), text


def test_a_shape_of_two_events_or_one_shown_whole_gets_no_note():
    """Two events of a shape: the second, shown, says more than a note would; a shape
    whose every line is shown: a note would tell nothing."""
    pair = log(["INFO start", "ERROR exit status 1", "INFO retry", "ERROR exit status 2"])
    assert b"like line" not in reduce_to_budget(pair, 1_000, max_history=None).text
    three = log(
        [f"ERROR exit status {n}" for n in range(3)] + [f"INFO step {n}" for n in range(40)]
    )
    whole = reduce_to_budget(three, 1_000, max_history=None)
    assert b"ERROR exit status 2" in whole.text and b"[seqdedup: 3 like" not in whole.text


def test_values_keep_the_name_stuck_to_them_and_the_word_before_them():
    records = [
        b"2026-11-22T10:00:0%dZ job %d wrote blk_%d uid=%d" % (n, 5 * n, n, n % 2) for n in range(4)
    ]
    found = columns(records, FINDERS[0])
    assert all(columns(records, finder) == found for finder in FINDERS)
    assert found == [
        Column("job ", ["0", "5", "10", "15"]),
        Column("wrote ", ["blk_0", "blk_1", "blk_2", "blk_3"]),
        Column("uid=", ["0", "1"]),
    ]
    assert named(found[0], 100) == "job 0, 5, 10, 15"
    assert named(found[1], 10) == "wrote blk_0 .. blk_3 (4 values)"
    assert named(Column("", ["a.log", "b.log", "c.log"]), 14) == "a.log, ... (3 values)"
    assert named(found[0], 100, complete=False) == "job 0 .. 15 (4+ values)"
    assert briefly(found[2]) == "0, 1" and briefly(found[0]) == "0 .. 15 (4 values)"


NAME = re.compile(rb"(?:[A-Za-z][A-Za-z_-]{0,11})?$")  # (a name stuck to a value's front)


def literal_columns(records: list[bytes]) -> list[list[bytes]]:
    """The oracle: each record's value matches (no timestamps), each with the name stuck
    to its front (the longest run of letters, '_' and '-' up to 12 that starts with a
    letter and ends where the value begins), and for each position that every record of
    the example's width has, its distinct values if more than one."""
    rows = [
        [
            NAME.search(r, max(0, m.start() - 48), m.start()).group() + m.group()
            for m in VALUES.finditer(r)
            if m.lastgroup != "c1"
        ]
        for r in records
    ]
    rows = [row for row in rows if len(row) == len(rows[0])]
    out = []
    for field in range(len(rows[0])):
        seen = list(dict.fromkeys(row[field] for row in rows))
        if len(seen) > 1:
            out.append(seen)
    return out


words = st.sampled_from(
    ["a", "job", "vol-", "x=", "id:", " ", "7", "12", "0x1f", "/p/q", "10.0.0.1"]
)
lines = st.lists(words, min_size=1, max_size=8).map(lambda ws: " ".join(ws).encode())


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(lines, min_size=1, max_size=6))
def test_columns_hold_the_literal_values_with_their_names(records):
    """Field by field, the values are the literal matches, each with the name stuck to
    its front (letters, '_' and '-' ending right where the value begins), on either
    engine's matches."""
    found = columns(records, FINDERS[-1])
    assert all(columns(records, finder) == found for finder in FINDERS)
    want = literal_columns(records)
    assert [column.values for column in found] == [
        [value[:24].decode() for value in literal] for literal in want
    ]


def test_a_word_that_varies_makes_one_family():
    """Kinds one word apart where the log's kinds of that form take several words are
    one family; a form whose word never varies, or a kind under three words, is not."""
    from seqdedup.keys.kind import families

    kinds = [
        b"Invalid user alice from <IP>",
        b"Invalid user bob from <IP>",
        b"Accepted password for root",
        b"Accepted password for root",
        b"job ok",
        b"job failed",
    ]
    assert families(kinds) == {
        b"Invalid user alice from <IP>": b"Invalid user <...> from <IP>",
        b"Invalid user bob from <IP>": b"Invalid user <...> from <IP>",
        b"Accepted password for root": b"Accepted password for root",
        b"job ok": b"job ok",
        b"job failed": b"job failed",
    }


def test_an_error_with_another_word_each_time_is_one_shape_with_its_words_named():
    """A syslog's `Invalid user NAME from IP` with 60 names: one shape (its first line
    shown before any routine kind), its note naming the users; every routine kind
    shown, most of the 60 not."""
    names = [f"user{chr(97 + n % 26)}{chr(97 + n // 26)}" for n in range(60)]
    lines = []
    for n, name in enumerate(names):
        lines.append(
            f"Dec 10 07:00:{n % 60:02d} host sshd[{n}]: Invalid user {name} from 10.0.0.{n}"
        )
        lines.append(f"Dec 10 07:00:{n % 60:02d} host cron[{n}]: step{n % 12} done")
    reduction = reduce_to_budget(log(lines), 800, max_history=None)
    text = reduction.text.decode()
    note = next(line for line in text.splitlines() if line.startswith("[seqdedup: 60 like"))
    assert note.startswith("[seqdedup: 60 like line 1 in lines 1-119: user useraa, userba, userca")
    assert reduction.kinds_shown == reduction.kinds == 12
    assert reduction.events == 60 and reduction.events_shown < 30
