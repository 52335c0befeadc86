from __future__ import annotations

import io
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Config, Deduplicator, UsageError, deduplicate
from seqdedup.api import process_stream

from conftest import examples
from oracle import kept, skipped_flags

alphabet_lists = st.integers(1, 5).flatmap(
    lambda k: st.lists(st.sampled_from(["a", "b", "c", "d", "e"][:k]), max_size=200)
)


@settings(max_examples=examples(150), deadline=None)
@given(records=alphabet_lists, window=st.integers(1, 12), history=st.sampled_from([None, 100]))
def test_deduplicate_matches_oracle(records, window, history):
    out = list(deduplicate(records, window_size=window, max_history=history, batch_size=7))
    assert out == kept(records, window, history)


@settings(max_examples=examples(100), deadline=None)
@given(
    records=alphabet_lists,
    window=st.integers(1, 8),
    delimiter=st.sampled_from([b"\n", b"\0", b"||"]),
    trailing=st.booleans(),
    cuts=st.lists(st.integers(0, 2000), max_size=10),
)
def test_process_stream_matches_oracle_across_chunkings(records, window, delimiter, trailing, cuts):
    data = delimiter.join(r.encode() for r in records)
    if records and trailing:
        data += delimiter

    class Chunked(io.RawIOBase):
        def __init__(self):
            edges = sorted({0, len(data), *(c for c in cuts if c < len(data))})
            self.parts = [data[a:b] for a, b in itertools.pairwise(edges)]

        def read(self, size=-1):
            return self.parts.pop(0) if self.parts else b""

    sink = io.BytesIO()
    stats = process_stream(Chunked(), sink, window_size=window, delimiter=delimiter)
    want = [r.encode() for r in kept(records, window)]
    expected = delimiter.join(want)
    final_kept = bool(records) and not trailing and bool(want) and kept_last(records, window)
    if want and not final_kept:
        expected += delimiter
    assert sink.getvalue() == expected
    assert stats.total == len(records) == stats.emitted + stats.skipped


def kept_last(records, window):
    from oracle import skipped_flags

    return not skipped_flags(records, window)[-1]


def test_final_record_without_delimiter_keeps_none():
    sink = io.BytesIO()
    process_stream(io.BytesIO(b"x\na\nx\na"), sink, window_size=1)
    assert sink.getvalue() == b"x\na\n"  # the final 'a' was skipped: its twin keeps "\n"
    sink = io.BytesIO()
    process_stream(io.BytesIO(b"x\nx\ny"), sink, window_size=1)
    assert sink.getvalue() == b"x\ny"


def test_empty_records_are_records():
    assert list(deduplicate(["", "", "a", "", ""], window_size=2)) == ["", "", "a"]


def test_bytes_in_bytes_out_and_invalid_utf8_untouched():
    records = [b"\xff\xfe", b"ok", b"\xff\xfe", b"ok"]
    assert list(deduplicate(records, window_size=2)) == [b"\xff\xfe", b"ok"]


def test_new_material_never_waits_and_repeats_wait_for_their_window():
    """A record is written as soon as its decision is certain: at once when it, or a
    record after it, has a key never seen before; a record that may start a repeat waits
    (at most W-1 records) for its window."""
    d = Deduplicator(window_size=3)
    assert d.feed([b"a", b"b"]) == [b"a", b"b"]  # new keys
    assert d.feed([b"c", b"a"]) == [b"c"]  # "a" may start a repeat of "a b c": it waits
    assert d.feed([b"b"]) == []
    assert d.feed([b"c"]) == []  # "a b c" repeats: skipped
    assert d.feed([b"a", b"x"]) == [b"x"]  # "b c a" repeats too; "x" is new: at once
    assert d.flush() == []
    assert d.stats.total == 8 and d.stats.emitted == 4
    # the same on bytes, with a passed-through record among them (the kernel's
    # filtered chunk path, or the record path)
    from seqdedup.config.groups import FilterRule

    e = Deduplicator(window_size=3, filters=(FilterRule("bypass", "^z"),))
    assert e.feed_bytes(b"a\nz1\nb\n") == b"a\nz1\nb\n"
    assert e.feed_bytes(b"a\nz2\n") == b""  # "a" waits, and "z2" behind it
    assert e.feed_bytes(b"c\n") == b"a\nz2\nc\n"


@pytest.mark.parametrize("bypass", [False, True])
@pytest.mark.parametrize("history", [None, 100])
def test_settled_records_are_decided_as_the_rule_decides(history, bypass):
    """Whatever arrives when, the records written early are exactly those the rule
    keeps, passed-through records in their place (random inputs, every chunking, as
    records and as bytes): early release changes when, never what."""
    import random

    from seqdedup.config.groups import FilterRule

    rng = random.Random(5)
    filters = (FilterRule("bypass", "^d"),) if bypass else ()
    for _ in range(150):
        keys = [rng.choice(b"abcde") for _ in range(rng.randint(0, 60))]
        window = rng.randint(1, 5)
        tracked = [k for k in keys if not (bypass and k == ord("d"))]
        skipped = iter(skipped_flags(tracked, window, history))
        want = [bytes([k]) for k in keys if (bypass and k == ord("d")) or not next(skipped)]
        d = Deduplicator(window_size=window, max_history=history, filters=filters)
        e = Deduplicator(window_size=window, max_history=history, filters=filters)
        out, raw, at = [], b"", 0
        while at < len(keys):
            step = rng.randint(1, 6)
            part = [bytes([k]) for k in keys[at : at + step]]
            out += d.feed(part)
            raw += e.feed_bytes(b"".join(r + b"\n" for r in part))
            at += step
        out += d.flush()
        raw += e.flush_bytes()
        assert out == want
        assert raw == b"".join(r + b"\n" for r in want)


def test_stats_count_sequences():
    d = Deduplicator(window_size=2)
    d.feed([b"a", b"b", b"x", b"a", b"b", b"y", b"a", b"b", b"z", b"c", b"d", b"c", b"d"])
    d.flush()
    assert d.stats.skipped == 6
    assert d.stats.unique_sequences == 2  # "a b" (twice repeated) and "c d"
    assert d.stats.redundancy_pct == pytest.approx(100 * 6 / 13)


def test_config_validation_names_the_keyword_in_python_and_the_option_on_the_command_line(
    run_cli,
):
    with pytest.raises(UsageError, match=r"^window_size must be at least 1, got 0$"):
        Config(window_size=0)
    with pytest.raises(UsageError, match=r"^max_history must be at least 100"):
        Config(max_history=50)
    with pytest.raises(UsageError, match="at least window_size"):
        Config(window_size=200, max_history=150)
    with pytest.raises(TypeError):
        Deduplicator(Config(), window_size=3)
    p = run_cli(["-w", "0"], b"")
    assert (p.returncode, p.stderr) == (1, b"seqdedup: --window-size must be at least 1, got 0\n")
    p = run_cli(["-w", "200", "-m", "150"], b"")
    assert b"--max-history (150) must be at least --window-size (200)" in p.stderr


def test_a_misspelled_keyword_gets_a_suggestion():
    with pytest.raises(
        TypeError, match=r"^unknown option 'windowsize' \(did you mean 'window_size'\?\)$"
    ):
        Deduplicator(windowsize=2)
    with pytest.raises(TypeError, match=r"^unknown option 'zzz'$"):
        Config(zzz=1)


def test_deduplicate_checks_its_options_at_the_call():
    with pytest.raises(UsageError, match="window_size must be at least 1"):
        deduplicate(["a"], window_size=0)  # (not only once iterated)
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        deduplicate(["a"], batch_size=0)


# Every test here runs once per engine (compiled kernel and pure Python).
pytestmark = pytest.mark.usefixtures("engine")


def test_explain_without_a_callback_collects_the_lines():
    d = Deduplicator(window_size=1, explain=True)
    assert d.feed([b"a", b"b", b"a"]) + d.flush() == [b"a", b"b"]
    assert d.explanations == ["EXPLAIN: Line 3 skipped (duplicate of line 1, seen 2x)"]
    heard: list[str] = []
    d = Deduplicator(window_size=1, explain=True, on_explain=heard.append)
    d.feed([b"a", b"a"])
    d.flush()
    assert heard == ["EXPLAIN: Line 2 skipped (duplicate of line 1, seen 2x)"]
    assert d.explanations == []


def test_a_call_cut_short_makes_every_later_call_say_so():
    """KeyboardInterrupt in the middle of a feed (here from the explanation callback)
    leaves the state incomplete: later calls say the run was interrupted, never an
    internal error nor a wrong answer."""
    from seqdedup import Deduplicator

    def explain(line: str) -> None:
        raise KeyboardInterrupt

    dedup = Deduplicator(window_size=1, explain=True, on_explain=explain)
    with pytest.raises(KeyboardInterrupt):
        dedup.feed_bytes(b"a\nb\na\nb\nc\n")
    for call in (lambda: dedup.feed_bytes(b"d\n"), dedup.flush_bytes, dedup.idle_bytes):
        with pytest.raises(RuntimeError, match="interrupted in an earlier call"):
            call()


def test_two_threads_at_once_are_refused_not_let_in():
    import threading

    from seqdedup import Deduplicator

    inside, release = threading.Event(), threading.Event()

    def explain(line: str) -> None:  # holds the first call open
        inside.set()
        release.wait(30)

    dedup = Deduplicator(window_size=1, explain=True, on_explain=explain)
    first = threading.Thread(target=lambda: dedup.feed([b"a", b"a", b"b"]))
    first.start()
    assert inside.wait(30)
    with pytest.raises(RuntimeError, match="in use by another call"):
        dedup.feed([b"b"])
    release.set()
    first.join()
    assert dedup.feed([b"c"]) == [b"c"]  # the refused call changed nothing


def test_feed_takes_str_or_bytes_and_gives_back_what_it_was_given():
    d: Deduplicator[str] = Deduplicator(window_size=2, annotate=True)
    out = d.feed(["a", "b", "c", "a", "b"]) + d.feed(["é"]) + d.flush()
    assert out == [
        "a",
        "b",
        "c",
        "[DUPLICATE: Lines 4-5 matched lines 1-2 (sequence seen 2 times)]",
        "é",
    ]
    assert list(deduplicate(["a", "b", "a", "b", "c"], window_size=2)) == ["a", "b", "c"]
    both = Deduplicator(window_size=2)
    assert both.feed([b"a"]) == [b"a"] and both.flush() == []
    mixed = Deduplicator(window_size=2)
    mixed.feed(["a"])
    with pytest.raises(TypeError, match=r"all str or all bytes \(this one's: str\)"):
        mixed.feed([b"a"])
    with pytest.raises(TypeError, match=r"all str or all bytes \(this one's: str\)"):
        Deduplicator(window_size=2).feed(["a", b"b"])  # type: ignore[list-item]
    folded: Deduplicator[str] = Deduplicator(window_size=1, fold=True, fold_format="{removed}")
    assert folded.feed(["x", "x", "x"]) + folded.idle() + folded.flush() == ["x", "2"]


def test_paths_may_be_given_as_strings(tmp_path):
    """``library_dir="L"`` as the API is called (a str was taken, then failed at the
    first use with an AttributeError); one ``read_sequences`` directory alone too."""
    from seqdedup import Deduplicator

    library = str(tmp_path / "L")
    first = Deduplicator(window_size=1, library_dir=library)
    first.feed([b"a", b"b"])
    first.flush()
    first.save()
    again = Deduplicator(window_size=1, read_sequences=library)
    assert again.config.read_sequences == (tmp_path / "L",)
    assert again.feed([b"a", b"c"]) + again.flush() == [b"c"]


def test_key_options_take_the_command_lines_names():
    """``normalize`` and ``mask`` as the command line names them (a str or a list, in
    the order given), the same run as ``key_steps``; both at once is an error."""
    from seqdedup import Config, deduplicate

    lines = ["at 09:00:01 port 1 up", "at 09:00:02 port 2 up", "done"]
    named = list(deduplicate(lines, window_size=1, normalize="timestamp", mask=r"port \d+"))
    steps = (("normalize", "timestamp"), ("mask", r"port \d+"))
    assert named == list(deduplicate(lines, window_size=1, key_steps=steps))
    assert named == ["at 09:00:01 port 1 up", "done"]
    assert Config(mask=["a", "b"], normalize="all").key_steps == (
        ("mask", "a"),
        ("mask", "b"),
        ("normalize", "all"),
    )
    with pytest.raises(TypeError, match="not both"):
        Config(normalize="all", key_steps=(("mask", "x"),))


def test_every_keyword_of_the_api_is_documented():
    """The Python API page lists every field of Config (the keywords it takes)."""
    from pathlib import Path

    from seqdedup.config.settings import Config

    page = (Path(__file__).resolve().parent.parent / "docs" / "python-api.md").read_text()
    assert [field for field in Config._fields if f"`{field}`" not in page] == []
