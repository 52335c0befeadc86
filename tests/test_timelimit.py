"""The time limit on user patterns: a pattern that backtracks without end on a record
ends the run with one line naming it and the record; slow batches of fine records go on."""

from __future__ import annotations

import io
import signal

import pytest

from seqdedup.cli import seqdedup as cli
from seqdedup.config import timelimit
from seqdedup.config.timelimit import PatternTimeout, each_within

from conftest import HANG_GUARD

CATASTROPHIC = "(a+)+$"
DATA = b"first\nsecond\n" + b"a" * 40 + b"b\nlast\n"


@pytest.fixture
def short_limit(monkeypatch):
    monkeypatch.setattr(timelimit, "PATTERN_SECONDS", 0.3)


def on_a_clock_of_its_own(monkeypatch, steps: list[float]):
    """A function for each_within whose record ``x`` takes ``steps[x]`` seconds per look
    on a clock of the test's own, with three looks per record (as the timer would make):
    no duration of this machine decides the outcome. Returns it and its calls."""
    clock, calls = [0.0], []
    monkeypatch.setattr(timelimit, "monotonic", lambda: clock[0])

    def record(x: int) -> int:
        calls.append(x)
        for _ in range(3):
            clock[0] += steps[x]
            signal.raise_signal(signal.SIGALRM)  # (a look, now)
        return x * 2

    return record, calls


def test_a_batch_of_slow_but_fine_records_goes_on(short_limit, monkeypatch):
    """Ten records of 0.27 s each under a 0.3 s limit (three looks 0.09 s apart: less
    than the limit from a record's start to its last look, whenever the real timer
    looks too); the batch, 2.7 s in all, goes on."""
    record, calls = on_a_clock_of_its_own(monkeypatch, [0.09] * 10)
    assert each_within(record, list(range(10)), "--mask 'x'") == [x * 2 for x in range(10)]
    assert calls == list(range(10))


def test_a_record_seen_for_the_whole_limit_ends_the_batch(short_limit, monkeypatch):
    """Record 2 seen at three looks 0.15 s apart: 0.3 s from the first look to the last,
    the limit: it is named, and no later record is matched."""
    record, calls = on_a_clock_of_its_own(monkeypatch, [0.01, 0.01, 0.15, 0.01])
    with pytest.raises(PatternTimeout) as caught:
        each_within(record, [0, 1, 2, 3], "--mask 'x'")
    assert caught.value.index == 2 and calls == [0, 1, 2]


def test_the_record_that_takes_too_long_is_named(short_limit):
    import re

    search = re.compile(CATASTROPHIC).search
    texts = ["x", "aaa", "a" * 40 + "b", "y"]
    with pytest.raises(PatternTimeout) as caught:
        each_within(search, texts, "--track '(a+)+$'")
    assert caught.value.index == 2
    assert (
        caught.value.at("line 9")
        .args[0]
        .startswith("--track '(a+)+$' took more than 0.3 s on line 9:")
    )


@pytest.mark.parametrize("option", ["--mask", "--track", "--bypass"])
def test_each_pattern_option_ends_the_run_with_one_line(short_limit, engine, option):
    out, err = io.BytesIO(), io.StringIO()
    status = cli.main(["-w", "1", "-q", option, CATASTROPHIC], io.BytesIO(DATA), out, err)
    assert status == 1
    assert err.getvalue() == (
        f"seqdedup: {option} '{CATASTROPHIC}' took more than 0.3 s on line 3: the pattern "
        "backtracks without end on it (nested repetition such as (a+)+ does); "
        "simplify the pattern\n"
    )


def test_a_mask_is_timed_on_the_tracked_records_and_named_by_line(short_limit, engine):
    data = b"skip me\n" + DATA  # line 1 bypassed: the mask sees the rest, line 4 is slow
    out, err = io.BytesIO(), io.StringIO()
    args = ["-w", "1", "-q", "--bypass", "^skip", "--mask", CATASTROPHIC]
    assert cli.main(args, io.BytesIO(data), out, err) == 1
    assert "on line 4:" in err.getvalue()


def test_a_later_pattern_names_the_record_by_its_own_line(short_limit, engine):
    """A second pattern sees only the records the first left undecided; the record it
    stalls on is still named by its line (on the kernel's filtered chunk path too)."""
    data = b"zz skip\n" + DATA  # line 1 bypassed by the first pattern, line 4 stalls
    out, err = io.BytesIO(), io.StringIO()
    args = ["-w", "1", "-q", "--bypass", "^zz", "--bypass", CATASTROPHIC]
    assert cli.main(args, io.BytesIO(data), out, err) == 1
    assert "on line 4:" in err.getvalue()


def test_show_keys_names_the_record_too(short_limit):
    out, err = io.BytesIO(), io.StringIO()
    args = ["--show-keys", "--mask", CATASTROPHIC]
    assert cli.main(args, io.BytesIO(DATA), out, err) == 1
    assert "on line 3:" in err.getvalue()


@pytest.mark.slow
def test_the_installed_command_ends_within_the_limit(run_cli):
    """As a user runs it, with the real limit: the run ends (a pattern that would take
    years on line 3: without the limit the hang guard's timeout fails the test), one
    line, no traceback."""
    p = run_cli(["-w", "1", "-q", "--mask", CATASTROPHIC], DATA, timeout=HANG_GUARD)
    assert p.returncode == 1
    assert p.stderr.count(b"\n") == 1 and b"on line 3:" in p.stderr


@pytest.mark.parametrize("pattern", ["(?=a)", r"\b", "(?<=x)", "a*"])
def test_a_mask_that_can_match_the_empty_string_is_refused(run_cli, pattern):
    p = run_cli(["-q", "--mask", pattern], b"a\n")
    assert (p.returncode, p.stdout) == (1, b"")
    assert b"matches the empty string" in p.stderr


def test_a_keep_pattern_is_timed_per_record_and_named_by_line(short_limit):
    """--budget's --keep ran over the whole input with no limit ((a+)+$ took 0.95 s on
    24 'a' and 4x more per two characters): now per record, under the same limit."""
    out, err = io.BytesIO(), io.StringIO()
    status = cli.main(["--budget", "1k", "--keep", CATASTROPHIC], io.BytesIO(DATA), out, err)
    assert status == 1 and out.getvalue() == b""
    assert err.getvalue() == (
        f"seqdedup: --keep '{CATASTROPHIC}' took more than 0.3 s on line 3: the pattern "
        "backtracks without end on it (nested repetition such as (a+)+ does); "
        "simplify the pattern\n"
    )


def test_a_keep_pattern_matches_within_a_record(tmp_path):
    """Per record: ``^`` and ``$`` are the record's own ends, and no match spans two
    records (the whole-input search let ``a\\sb`` keep a line ending in a)."""
    from seqdedup.budget.input import WholeInput, verbatim_flags

    source = WholeInput(b"x a\nb y\nkeep me\n", b"\n")
    assert list(verbatim_flags(source, [r"a\sb"])) == [0, 0, 0]
    assert list(verbatim_flags(source, [r"^keep"])) == [0, 0, 1]
