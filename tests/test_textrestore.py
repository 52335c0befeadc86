"""seqdedup-expand with no store: a reduced text whose markers all repeat lines it shows
byte for byte is restored from itself, exactly; anything else (a marker that needs the
store, a changed text, a line that only looks like a marker) is one error, never other
bytes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import reduce_to_budget
from seqdedup.errors import SeqdedupError
from seqdedup.textrestore import restore_text

from conftest import examples

LINES = [b"a", b"b", b"ok 1", b"ok 2", b"ERROR x", b"  at y", b"", b"\xff raw"]
COPY = re.compile(rb"^\[sd:[0-9a-f]+: lines? [^\]]*, byte for byte(?:; [^\]]*)?\]$", re.M)
MARKER = re.compile(rb"^\[sd:[0-9a-f]+: lines? ", re.M)


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
    text = reduce_to_budget(data, 100, max_history=None).text
    assert re.search(rb"\d+ copies of lines \d+-\d+ and \d+ of its lines, byte for byte", text)
    assert restore_text(text) == data
    changed = text.replace(b"step 3\n", b"step 9\n", 1)
    with pytest.raises(SeqdedupError, match="do not match it"):
        restore_text(changed)


def test_a_line_that_looks_like_a_copy_marker_is_never_taken_for_one():
    fake = b"[sd:0123456789ab: line 2: a repeat of line 1, byte for byte]"
    with pytest.raises(SeqdedupError, match="do not match it"):
        restore_text(b"x\n" + fake + b"\n")


def test_the_command_restores_from_the_text_or_asks_for_the_store(run_cli, tmp_path):
    from test_expand import expand

    data = b"".join(b"line %d\n" % (k % 5) for k in range(300))
    reduced = run_cli(["-q", "--budget", "80"], data).stdout
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
