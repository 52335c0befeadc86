from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import SeqdedupError, deduplicate
from seqdedup.keys import ShellTransform

from oracle import reference_output


def test_line_wise_command_takes_the_batch_path():
    transform = ShellTransform("tr a-z A-Z")
    assert transform([b"ab", b"cd", b"ef"]) == [b"AB", b"CD", b"EF"]
    assert transform.batch_mode is True


@pytest.mark.parametrize("command", ["tac", "nl -ba", "sort -r"])
def test_command_that_is_not_line_wise_falls_back_to_per_record(command):
    transform = ShellTransform(command)
    keys = transform([b"b", b"a", b"c"])
    assert transform.batch_mode is False
    assert keys == [ShellTransform(command)._run_one(k) for k in (b"b", b"a", b"c")]


def test_records_with_newlines_go_one_by_one():
    transform = ShellTransform("wc -l")
    assert transform([b"a\nb", b"c"]) == [b"2", b"1"]


def test_failing_command_is_a_clear_error():
    with pytest.raises(SeqdedupError, match="exit status 3: oops"):
        ShellTransform("echo oops >&2; exit 3")([b"x"])


@settings(max_examples=25, deadline=None)
@given(
    records=st.lists(st.sampled_from(["1:a", "2:a", "1:b", "3:b", "2:c"]), max_size=40),
    window=st.integers(1, 4),
)
def test_transform_keys_match_oracle(records, window):
    out = list(deduplicate(records, window_size=window, hash_transform="cut -d: -f2"))
    assert out == reference_output(records, window, transform=lambda k: k.split(":")[1])


def test_transform_applies_after_skip_chars():
    records = ["xx1:a", "yy2:a"]
    out = list(deduplicate(records, window_size=1, skip_chars=2, hash_transform="cut -c3-"))
    assert out == ["xx1:a"]


# Every test here runs once per engine (compiled kernel and pure Python).
pytestmark = pytest.mark.usefixtures("engine")


def test_order_dependent_command_on_sorted_first_records_is_caught(run_cli):
    """`sort` passes the first-records check when they are already sorted (as
    timestamped logs are); the shuffled rerun of every batch catches it."""
    data = b"".join(b"%d\n" % i for i in range(1, 21)) * 2
    p = run_cli(["-q", "-w", "2", "-t", "sort"], data)
    assert p.stdout == b"".join(b"%d\n" % i for i in range(1, 21))
    transform = ShellTransform("sort")
    keys = [b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"10", b"9"]
    assert transform(keys) == keys  # sorting one line at a time changes nothing
    assert transform.batch_mode is False


@settings(max_examples=25, deadline=None)
@given(records=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=2, max_size=40))
def test_sort_as_a_transform_matches_the_oracle(records):
    """Per record, `sort` is the identity: the result must be that of no transform."""
    out = list(deduplicate(records, window_size=2, hash_transform="sort", batch_size=40))
    assert out == reference_output(records, 2)
