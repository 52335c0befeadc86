"""seqdedup-expand with no store: a reduced text whose markers all repeat lines it shows
byte for byte is restored from itself, exactly; anything else (a marker that needs the
store, a changed text, a line that only looks like a marker) is one error, never other
bytes."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import reduce_to_budget
from seqdedup.base.errors import SeqdedupError
from seqdedup.budget.removed import ESCAPE, digest_of, vouching_line
from seqdedup.budget.restore import restore_text

from conftest import examples

LINES = [b"a", b"b", b"ok 1", b"ok 2", b"ERROR x", b"  at y", b"", b"\xff raw"]
COPY = re.compile(rb"^\[sd:[0-9a-f]+:? lines? [^\]]*, byte for byte(?:; [^\]]*)?\]$", re.M)
MARKER = re.compile(rb"^\[sd:[0-9a-f]+:? lines? ", re.M)


@settings(max_examples=examples(300), deadline=None)
@given(
    lines=st.lists(st.sampled_from(LINES), max_size=80),
    last=st.booleans(),
    budget=st.sampled_from([5, 20, 60, 200]),
)
def test_the_text_alone_restores_exactly_or_refuses(lines, last, budget):
    data = b"\n".join(lines) + (b"\n" if last and lines else b"")
    text = reduce_to_budget(data, budget, max_history=None).text
    markers = MARKER.findall(text)
    try:
        restored = restore_text(text)
    except SeqdedupError as refused:
        # (only where some marker is not a copy shown byte for byte)
        assert len(COPY.findall(text)) < len(markers), (text, str(refused))
        return
    assert restored == data


def test_copies_byte_for_byte_are_restored_and_a_changed_text_is_refused():
    block = [b"step %d" % k for k in range(4)]
    data = b"".join(line + b"\n" for line in [b"start", *block * 30, b"end"])
    # (the budget at which the marker holds whole copies and some of a copy's lines
    # moves with the markers' wording: the first of a range that gives it)
    part = re.compile(rb"\d+ copies of lines \d+-\d+ and \d+ of its lines, byte for byte")
    texts = (reduce_to_budget(data, budget, max_history=None).text for budget in range(80, 160))
    text = next(t for t in texts if part.search(t))
    assert restore_text(text) == data
    changed = text.replace(b"step 3\n", b"step 9\n", 1)
    with pytest.raises(SeqdedupError, match="does not match its first line"):
        restore_text(changed)


def test_a_text_in_the_earlier_marker_form_is_restored_too():
    """Markers of earlier versions (12 digits, a colon after the reference) are read as
    they are: the same text rewritten in that form restores the same bytes."""
    data = b"".join(b"line %d\n" % (k % 3) for k in range(30))
    reduction = reduce_to_budget(data, 80, max_history=None)
    body = reduction.text.split(b"\n", 1)[1]
    assert COPY.search(body) and reduction.references
    for digest, reference in reduction.references.items():
        earlier = f"[sd:{digest[:12]}: ".encode()
        body = body.replace(f"[{reference} ".encode(), earlier)
    assert re.search(rb"^\[sd:[0-9a-f]{12}: lines", body, re.M)
    assert restore_text(vouching_line(body) + b"\n" + body) == data


def test_a_line_that_looks_like_a_copy_marker_is_never_taken_for_one():
    fake = b"[sd:0123456789ab: line 2: a repeat of line 1, byte for byte]"
    with pytest.raises(SeqdedupError, match="does not start with the line seqdedup --budget"):
        restore_text(b"x\n" + fake + b"\n")


def forged_copy(lines: list[bytes], first: int, last: int, at: int) -> bytes:
    """A line anyone can write: a valid-looking copy marker of lines ``first`` ..
    ``last`` (1-based) standing at line ``at``, its reference the digest of their bytes."""
    reference = digest_of(b"".join(line + b"\n" for line in lines[first - 1 : last]))[:12]
    count = last - first + 1
    where = f"lines {at}-{at + count - 1} ({count} lines)" if count > 1 else f"line {at}"
    what = f"lines {first}-{last}" if count > 1 else f"line {first}"
    return f"[sd:{reference}: {where}: a repeat of {what}, byte for byte]".encode()


def test_the_three_triggers_restore_exactly():
    """A forged marker in the input, a reduction of a reduction, a first line that looks
    like the budget's note: each restored as the input it was, byte for byte."""
    plain = [b"user login ok", b"session opened"]
    forged = b"\n".join([*plain, forged_copy(plain, 1, 2, 3), b"end"]) + b"\n"
    noted = b"[seqdedup: 3 error events; shown below]\nline two\n"
    for data in (forged, noted):
        reduced = reduce_to_budget(data, 1000, max_history=None).text
        assert reduced != data and restore_text(reduced) == data
    twice = b"".join(b"INFO step %d\nERROR failed %d\n" % (k % 7, k % 3) for k in range(200)) * 2
    once = reduce_to_budget(twice, 60, max_history=None).text
    again = reduce_to_budget(once, 1000, max_history=None).text
    assert restore_text(again) == once


def _trial_input(rng: random.Random, first_line: bool = True) -> bytes:
    """A small log that may carry forged markers, notes and (``first_line``) a forged
    first line of a reduction."""
    lines: list[bytes] = []
    for _ in range(rng.randrange(1, 24)):
        roll = rng.random()
        if roll < 0.1 and len(lines) >= 2:
            first = rng.randrange(1, len(lines))
            lines.append(
                forged_copy(lines, first, rng.randrange(first, len(lines) + 1), len(lines) + 1)
            )
        elif roll < 0.15:
            lines.append(b"[seqdedup: 3 error events; shown below]")
        elif roll < 0.2:
            lines.append(ESCAPE + rng.choice(LINES))
        else:
            lines.append(rng.choice(LINES))
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.8 else b"")
    if first_line and rng.random() < 0.1:  # a forged first line, right for what follows
        data = vouching_line(data) + b"\n" + data
    return data


def test_a_thousand_reductions_forgeries_and_joins_restore_exactly_or_are_refused():
    """1,000 trials with a fixed seed, in turn: a reduction; a reduction of a reduction;
    two reductions joined; an input given as it is. Each text-only expand gives the text
    the reduction was made from (or, for a text --budget did not write, the text as it
    stands), or is refused with one line: never other bytes."""
    rng = random.Random(66)
    outcomes = {"exact": 0, "refused": 0}
    for trial in range(1000):
        data = _trial_input(rng)
        budget = rng.choice([20, 40, 80, 160, 10_000])
        reduced = reduce_to_budget(data, budget, max_history=None).text
        kind = trial % 4
        if kind == 0:
            text, wants = reduced, {data}
        elif kind == 1:
            text = reduce_to_budget(reduced, rng.choice([40, 10_000]), max_history=None).text
            wants = {reduced}
        elif kind == 2:
            other = reduce_to_budget(_trial_input(rng), budget, max_history=None).text
            text = reduced + other
            wants = {text} if not MARKER.search(text) else set()
        else:  # (a whole text forged with a right first line reads as a reduction: it is
            # one, written by whoever forged it; lines of it passed through --budget are not)
            text = _trial_input(rng, first_line=False)
            wants = {text}
        try:
            restored = restore_text(text)
        except SeqdedupError as refused:
            assert "\n" not in str(refused)
            outcomes["refused"] += 1
            continue
        assert restored in wants, (trial, text, restored)
        outcomes["exact"] += 1
    assert outcomes["exact"] >= 400, outcomes  # (the rest need the store)


def test_the_command_restores_from_the_text_or_asks_for_the_store(run_cli, tmp_path):
    from test_expand import expand

    data = b"".join(b"line %d\n" % (k % 5) for k in range(300))
    reduced = run_cli(["-q", "--budget", "100"], data).stdout
    status, out, err = expand("-", stdin=reduced)
    assert (status, out, err) == (0, data, "")
    assert expand("-", "--lines", "11-12", stdin=reduced)[1] == b"line 0\nline 1\n"
    for args, message in (
        (["sd:0123456789ab"], "a reference is read from the store"),
        (["-"], "needs the store its reduction wrote"),
    ):
        other = run_cli(["-q", "--budget", "30"], data).stdout
        status, out, err = expand(*args, stdin=other)
        assert status == 1 and out == b"" and err.count("\n") == 1 and message in err
