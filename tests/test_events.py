"""--budget's events and kinds of line: lines that differ only in the fields named by
--event-fields are one event, numbers that carry meaning still separate events, the
levels kept verbatim are chosen by --verbatim, every kind of line is shown once before
a second line of any kind, and a marker says what differs in the lines it holds."""

from __future__ import annotations

import re
from array import array

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from seqdedup import reduce_to_budget
from seqdedup.base.errors import UsageError
from seqdedup.config.budgetfields import host_budget, parse_event_fields, parse_levels
from seqdedup.config.settings import Config

from conftest import every_engine, examples, user_env


def log(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def ci_log(jobs: int) -> bytes:
    lines = []
    for job in range(jobs):
        lines.append(f"2026-11-22T10:{job // 60:02d}:{job % 60:02d}Z INFO job {job} started")
        lines.append(f"2026-11-22T10:{job // 60:02d}:{job % 60:02d}Z ERROR job failed")
    return log(lines)


def test_copies_of_an_event_that_differ_only_in_their_timestamps_are_one_event():
    data = ci_log(40)
    reduction = reduce_to_budget(data, 120, max_history=None)
    text = reduction.text.decode()
    assert (reduction.events, reduction.events_shown, reduction.met) == (1, 1, True)
    # the later copies are in one marker: copies of the first job's two lines, and when
    assert text.count("ERROR job failed") == 1
    assert re.search(r": 39 copies of lines 1-2; until 10:00:39Z\]", text), text
    exact = reduce_to_budget(data, 200, max_history=None, event_fields=())
    assert exact.events == 40  # (compared by their whole text, each is its own event)


def test_numbers_that_carry_meaning_separate_events_and_pids_and_ports_do_not():
    data = log(
        [
            "sshd[101]: error: connect to 10.0.0.7:22 failed",
            "sshd[202]: error: connect to 10.0.0.7:2222 failed",
            "worker exited with status 0 (error check)",
            "worker exited with status 1 (error check)",
        ]
        * 5
    )
    reduction = reduce_to_budget(data, 10_000, max_history=None)
    assert reduction.events == 3  # one sshd event, status 0 and status 1
    strict = reduce_to_budget(data, 10_000, max_history=None, event_fields=("timestamp",))
    assert strict.events == 4


def test_the_verbatim_levels_and_keep():
    data = log(["WARNING disk 91% full", "ERROR disk full", "INFO ok", "NOTICE audit"] * 3)
    both = reduce_to_budget(data, 10_000, max_history=None)
    errors = reduce_to_budget(data, 10_000, max_history=None, verbatim_levels=("error",))
    kept = reduce_to_budget(data, 10_000, max_history=None, verbatim_levels=(), keep=("NOTICE",))
    assert (both.events, errors.events, kept.events) == (2, 1, 1)
    assert (both.kinds, errors.kinds, kept.kinds) == (2, 3, 3)


def test_levels_in_androids_spellings():
    """Android's logcat writes its level as one letter: after the pid and tid
    (threadtime: ``... 1702  2395 E Tag: msg``) or before the tag (brief:
    ``E/Tag( 123): msg``). E and F are errors, W a warning; D, I, V lines are not
    events, and a lone letter elsewhere is none."""
    data = log(
        [
            "03-17 16:13:46.764  2227  2794 E KeyguardUpdateMonitor: mSimDatas is null",
            "03-17 16:13:47.150  1702 17633 W ActivityManager: Unknown animationType=0",
            "03-17 16:13:47.151  1702 17633 F libc: Fatal signal 11",
            "03-17 16:13:47.152  1702 17633 D PowerManagerService: ready=true",
            "03-17 16:13:47.153  1702 17633 I ActivityManager: Start proc 123",
            "E/AndroidRuntime( 4711): FATAL EXCEPTION: main",
            "W/System.err( 4711): at com.example.Main",
            "V/Tag( 4711): verbose",
            "step 5 E then 6",
            "grade E: passed",
        ]
    )
    reduction = reduce_to_budget(data, 10_000, max_history=None)
    assert reduction.events == 5
    errors_only = reduce_to_budget(data, 10_000, max_history=None, verbatim_levels=("error",))
    assert errors_only.events == 3


def test_warnings_spelled_short_are_warnings():
    """Apache's ``[warn]``, logfmt's ``level=warn`` and JSON's ``"level":"warn"`` are
    warnings (each an event, ranked after an error); a word holding "warn" is not."""
    data = log(
        [
            "[Sun Dec 04 04:47:44 2005] [warn] child process 4711 still did not exit",
            'time=2026-12-06T10:00:00Z level=warn msg="disk 91% full"',
            '{"ts": 1, "level": "warn", "msg": "slow response"}',
            "2026-12-06 10:00:01 ERROR disk full",
            "2026-12-06 10:00:02 INFO forewarned is forearmed",
        ]
    )
    reduction = reduce_to_budget(data, 10_000, max_history=None)
    assert reduction.events == 4
    errors_only = reduce_to_budget(data, 10_000, max_history=None, verbatim_levels=("error",))
    assert errors_only.events == 1
    from seqdedup.budget.events import ERROR, WARNING, severity

    assert [severity(line) for line in data.splitlines()[:4]] == [WARNING] * 3 + [ERROR]


def test_error_words_on_lines_without_a_level():
    """A syslog line with no level word is an error when it holds an error word (the
    "words" level: denied, invalid, refused, timed out, timeout); a line with a level
    word is judged by its level; ``--verbatim error,warning`` leaves the words out."""
    data = log(
        [
            "Dec 10 06:55:46 LabSZ sshd[24200]: Invalid user webmaster from 173.234.31.186",
            "Dec 10 06:55:47 host kernel: connection refused by peer",
            "Dec 10 06:55:48 host cron[99]: (root) CMD (run-parts /etc/cron.hourly)",
            "2026-01-01 INFO invalid input ignored",
            "03-17 16:13:38.811  1702  2395 D Tag: request timed out",
        ]
    )
    assert reduce_to_budget(data, 10_000, max_history=None).events == 2
    levels = ("error", "warning")
    assert reduce_to_budget(data, 10_000, max_history=None, verbatim_levels=levels).events == 0


def test_a_failed_password_in_a_syslog_is_shown_before_routine_kinds():
    """A syslog without level words: the one `Failed password` line is shown at a
    budget that leaves most routine kinds out."""
    routine = [
        f"Dec 10 07:{n // 60:02d}:{n % 60:02d} host cron[{n}]: job{n % 40} ran" for n in range(400)
    ]
    routine.insert(300, "Dec 10 07:05:00 LabSZ sshd[4711]: Failed password for root from 10.0.0.7")
    reduction = reduce_to_budget(log(routine), 300, max_history=None)
    assert b"Failed password for root" in reduction.text
    assert reduction.kinds_shown < reduction.kinds


def test_every_kind_of_line_is_shown_once_and_a_marker_says_what_differs():
    kinds = [f"INFO stage{k} step {{n}} on host-{{h}}" for k in range(20)]
    lines = [kinds[n % 20].format(n=n, h=n % 7) for n in range(2_000)]
    data = log(lines)
    reduction = reduce_to_budget(data, 2_000, max_history=None)
    text = reduction.text.decode()
    assert reduction.met and (reduction.kinds, reduction.kinds_shown) == (20, 20)
    assert all(f"INFO stage{k} step" in text for k in range(20))
    assert reduction.tokens_out <= 2_000 < reduction.tokens_in
    one_kind = log([f"mounted vol-{n} in {n % 3}s" for n in range(17, 161)])
    short = reduce_to_budget(one_kind, 50, max_history=None).text.decode()
    assert re.search(r" lines 1-144: 144 like \"mounted vol-17 in 2s\"\]", short), short
    # the long form counts the lines and names the values that differ (each value with
    # the name stuck to its front: the volume, not a bare number)
    folded = reduce_to_budget(one_kind, 60, max_history=None, long_markers=True).text.decode()
    assert re.search(
        r" lines 1-144 \(144 lines\): 144 like \"mounted vol-17 in 2s\"; "
        r"values vol-17 \.\. vol-160 \(144 values\); [012], [012], [012]\]",
        folded,
    ), folded


def test_the_settings_are_checked():
    assert parse_levels("error") == ("error",) and parse_levels("none") == ()
    assert parse_event_fields("pid, port") == ("pid", "port")
    with pytest.raises(UsageError, match="unknown level 'fatal'"):
        parse_levels("error,fatal")
    with pytest.raises(UsageError, match="unknown field 'id'"):
        parse_event_fields("id")
    with pytest.raises(UsageError, match=r"requires (--)?budget"):
        Config(verbatim_levels=("error",))


def test_the_command_refuses_bad_settings_in_one_line(run_cli):
    for args, message in (
        (["--verbatim", "error"], "--verbatim requires --budget"),
        (["--long-markers"], "--long-markers requires --budget"),
        (["--budget", "10", "--verbatim", "loud"], "--verbatim: unknown level 'loud'"),
        (["--budget", "10", "--event-fields", "x"], "--event-fields: unknown field 'x'"),
        (["--budget", "10", "--tokenizer", "no_such"], "--tokenizer: cannot load"),
    ):
        done = run_cli(args, b"a\n")
        assert done.returncode == 1 and done.stdout == b"", args
        err = done.stderr.decode()
        assert err.count("\n") == 1 and message in err, err


def test_budget_host_is_what_claude_codes_shell_keeps():
    assert host_budget({"CLAUDECODE": "1"}) == (29_000, "characters")
    assert host_budget({"CLAUDECODE": "1", "BASH_MAX_OUTPUT_LENGTH": "5000"}) == (
        4_000,
        "characters",
    )
    assert host_budget({"CLAUDECODE": "1", "BASH_MAX_OUTPUT_LENGTH": "9999999"})[0] == 149_000
    assert host_budget({"CLAUDECODE": "1", "BASH_MAX_OUTPUT_LENGTH": "lots"})[0] == 29_000
    with pytest.raises(UsageError, match="--budget host: the calling host is not one"):
        host_budget({})


def test_budget_host_output_and_its_summary_fit_the_shells_limit(run_cli):
    data = log([f"INFO request {n} served in {n % 97} ms" for n in range(20_000)])
    env = {**user_env(), "CLAUDECODE": "1", "BASH_MAX_OUTPUT_LENGTH": "5000"}
    done = run_cli(["--budget", "host"], data, env=env)
    assert done.returncode == 0
    said = done.stdout.decode() + done.stderr.decode()
    assert 3_000 < len(said) <= 5_000 and "characters in" in done.stderr.decode()
    unknown = run_cli(["--budget", "host"], data, env={**user_env(), "CLAUDECODE": ""})
    assert unknown.returncode == 1 and unknown.stdout == b""


def test_kinds_are_taken_in_turn_in_linear_time():
    """The kinds of each shape are taken in turn (item k of every shape, in shape order,
    a shape that is done passed over), as zip_longest without its padding, and with
    work linear in the kinds: 3,000 shapes beside one of 30,000 kinds look at each row
    about as often as it has items (padded, 90 million slots)."""
    import random
    from itertools import zip_longest

    from seqdedup.budget.events import _in_turn

    rng = random.Random(5)
    for _ in range(200):
        rows = [[rng.randrange(99) for _ in range(rng.randrange(5))] for _ in range(6)]
        padded = [item for turn in zip_longest(*rows) for item in turn if item is not None]
        assert _in_turn(rows) == padded
    looks = [0]

    class Row(list):  # (counts every look at a row: its length or an item)
        def __len__(self):
            looks[0] += 1
            return super().__len__()

        def __getitem__(self, index):
            looks[0] += 1
            return super().__getitem__(index)

    rows = [Row([k]) for k in range(3000)] + [Row(range(30_000))]
    assert _in_turn(rows) == [*range(3000), *range(30_000)]
    assert looks[0] <= 3 * (33_000 + len(rows))


def _twins(name):
    """The engines' function ``name``: the Python twin and, where the kernel is built,
    the kernel's."""
    return [getattr(engine, name) for engine in every_engine()]


ALPHABET = b"aAbE/ \n"


@settings(max_examples=examples(300), deadline=None)
@given(
    data=st.binary(max_size=120).map(lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b)),
    literals=st.lists(
        st.binary(min_size=1, max_size=3).map(lambda b: bytes(b"ab e/"[x % 5] for x in b)),
        max_size=4,
    ),
    split=st.integers(0, 4),
    delimiter=st.sampled_from([b"\n", b" ", b"e"]),
)
@example(data=b"a b b", literals=[b"a b", b" b"], split=2, delimiter=b" ")  # (across an end)
@example(data=b"xa\nE/", literals=[b"a", b"e/"], split=1, delimiter=b"\n")
def test_literal_hits_of_either_twin_are_the_literal_reading(data, literals, split, delimiter):
    """A record is a candidate of a level when, its letters in lower case, it holds a
    floating literal or starts with an anchored one (never across its end into the
    delimiter or the next record); blocks of records are cut anywhere (Python)."""
    from seqdedup.base.records import python_record_bounds
    from seqdedup.engine import pykernel

    bounds = python_record_bounds(data, delimiter)
    floating, anchored = tuple(literals[:split]), tuple(literals[split:])
    records = [data[bounds[k] : bounds[k + 1]].lower() for k in range(0, len(bounds), 2)]
    want = bytes(
        any(lit in r for lit in floating) or r.startswith(anchored) for r in records
    )  # fmt: skip
    pykernel.HITS_BLOCK, block = 7, pykernel.HITS_BLOCK  # (blocks of a few records)
    try:
        for twin in _twins("literal_hits"):
            assert twin(data, bounds, floating, anchored) == want, twin
    finally:
        pykernel.HITS_BLOCK = block


@settings(max_examples=examples(300), deadline=None)
@given(
    keys=st.lists(st.integers(0, 6), max_size=60),
    first=st.integers(0, 60),
    length=st.integers(0, 60),
    top=st.integers(0, 4),
)
def test_occurrences_and_tallies_of_either_twin_are_the_literal_reading(keys, first, length, top):
    """Each hash numbered in the order of first occurrence, with its previous position;
    each number's first and last position and count; and a stretch's distinct ids and
    its most frequent, ties in the order first met."""
    from collections import Counter

    hashes = b"".join(key.to_bytes(16, "little") for key in keys)  # (0: the zero hash)
    order = list(dict.fromkeys(keys))
    want = (
        [order.index(key) for key in keys],
        [max((j for j in range(k) if keys[j] == key), default=-1) for k, key in enumerate(keys)],
        [keys.index(key) for key in order],
        [keys.count(key) for key in order],
        [len(keys) - 1 - keys[::-1].index(key) for key in order],
    )
    for twin in _twins("occurrences"):
        assert [list(array("q", part)) for part in twin(hashes)] == list(want), twin
    if not keys:
        return
    ids = array("q", want[0])
    first = min(first, len(ids) - 1)
    last = min(first + length - 1, len(ids) - 1)
    counted = Counter(ids[first : last + 1])
    pairs = [n for pair in counted.most_common(top) for n in pair]
    for twin in _twins("tally"):
        distinct, found = twin(ids, first, last, len(order), top)
        assert (distinct, list(array("q", found))) == (len(counted), pairs), twin


@settings(max_examples=examples(300), deadline=None)
@given(
    lines=st.lists(st.sampled_from([b"", b"a", b"b", b"ab", b"a\x00"]), max_size=40),
    flags=st.lists(st.booleans(), max_size=40),
)
def test_distinct_records_of_either_twin_are_the_literal_reading(lines, flags):
    """The flagged records numbered by their bytes in the order of first occurrence,
    each number's first record."""
    from seqdedup.base.records import python_record_bounds

    data = b"".join(line + b"\n" for line in lines)
    bounds = python_record_bounds(data, b"\n")
    picks = bytes(flag for flag, _ in zip(flags + [True] * len(lines), lines, strict=False))
    picked = [k for k, flag in enumerate(picks) if flag]
    order = list(dict.fromkeys(lines[k] for k in picked))
    want = (
        [order.index(lines[k]) for k in picked],
        [next(k for k in picked if lines[k] == line) for line in order],
    )
    engines = every_engine()
    for engine in engines:
        found = engine.distinct_records(data, bounds, picks)
        assert [list(array("q", part)) for part in found] == list(want), engine.name


@settings(max_examples=examples(200), deadline=None)
@given(
    width=st.sampled_from([1, 8, 16]),
    count=st.integers(1, 6),
    picks=st.lists(st.integers(0, 5), max_size=20),
)
def test_items_taken_and_put_by_either_twin_are_the_literal_reading(width, count, picks):
    """A table's items read out by index: item k for each k, in order; an index past
    the table refused. And put back: the places a flag picks filled in order."""
    items = bytes(range(width * count))
    engines = every_engine()
    for engine in engines:
        take = engine.take
        if all(k < count for k in picks):
            want = b"".join(items[k * width : (k + 1) * width] for k in picks)
            assert take(items, width, array("q", picks)) == want, engine.name
        else:
            with pytest.raises(IndexError):
                take(items, width, array("q", picks))
        flags = bytes(k % 2 for k in range(count))  # (every other item replaced)
        values = bytes([255]) * width * flags.count(1)
        target = bytearray(items)
        engine.put(target, width, flags, values)
        assert target == b"".join(
            values[:width] if flags[k] else items[k * width : (k + 1) * width] for k in range(count)
        ), engine.name
        with pytest.raises(ValueError):
            engine.put(bytearray(items), width, flags, values + bytes(width))


@settings(max_examples=examples(300), deadline=None)
@given(
    lines=st.lists(
        st.sampled_from([b"x", b" y", b"\tz", b"Traceback (most", b"  Traceback", b"E: v", b""]),
        max_size=30,
    ),
    flagged=st.lists(st.booleans(), max_size=30),
)
def test_tracebacks_spread_by_either_twin_as_read_literally(lines, flagged):
    """Left to right, each flagged record not already continuing one takes the indented
    records after it, and after a line that starts Traceback (after white space) the
    one that ends them; those are flagged and are no heads."""
    from seqdedup.base.records import python_record_bounds

    data = b"".join(line + b"\n" for line in lines)
    bounds = python_record_bounds(data, b"\n")
    start = bytes(flag for flag, _ in zip(flagged + [False] * len(lines), lines, strict=False))
    want_flags, want_heads, at = bytearray(start), bytearray(start), 0
    while at < len(lines):  # (the reading: a record at a time)
        if want_flags[at]:
            end = at + 1
            while end < len(lines) and lines[end][:1] in (b" ", b"\t"):
                end += 1
            if end < len(lines) and lines[at].lstrip().startswith(b"Traceback"):
                end += 1
            for k in range(at + 1, end):
                want_flags[k], want_heads[k] = 1, 0
            at = end
        else:
            at += 1
    indented = bytes(line[:1] in (b" ", b"\t") for line in lines)
    engines = every_engine()
    for engine in engines:
        flags = bytearray(start)
        heads = engine.spread_tracebacks(data, bounds, flags, indented)
        assert (flags, bytes(heads)) == (want_flags, bytes(want_heads)), engine.name


PIECES = [
    "ERROR", "Error", "error", "ERR", "FATAL", "Critical", "CRIT", "ALERT", "EMERG", "panic",
    "panic:", "Traceback (most recent call last)", "ValueError", "NullPointerException",
    "FAIL", "FAILED", "failure", "Failed", "Assertion", "WARN", "Warning", "warn", "E", "F",
    "W", "V", "I", "D", "/", "Tag", ": ", ":", " ", "1", "12", "INFO", "debug", "denied",
    "INVALID", "Refused", "timed out", "TimeOut", "x", "[", "]", "=", "level",
    "1 E ", "1 W ", "1 F ", "1 I ", "E/", "W/", "F/", "Tag: ",  # (logcat's shapes)
]  # fmt: skip


LOGCAT = st.tuples(  # (a logcat line: pid and tid, one-letter level, tag; or E/Tag)
    st.sampled_from(["", "1702 2395 ", "x 1 "]),
    st.sampled_from("EFWIVD"),
    st.sampled_from([" Tag: x", "/Tag: x", " Tag x", "/"]),
).map("".join)


@settings(max_examples=examples(600), deadline=None)
@given(
    st.lists(
        st.one_of(LOGCAT, st.lists(st.sampled_from(PIECES), max_size=8).map("".join)),
        max_size=6,
    )
)
def test_every_line_a_level_pattern_matches_holds_one_of_its_literals(lines):
    """The level patterns are tried only on the lines that hold one of their literals
    (letters folded; logcat's ``E/`` at a line's start): no line they match is passed
    over, on either engine."""
    from seqdedup.base.records import python_record_bounds
    from seqdedup.budget.input import ANCHORED, LEVELS, LITERALS

    data = "\n".join(lines).encode()
    bounds = python_record_bounds(data, b"\n")
    records = [data[bounds[k] : bounds[k + 1]] for k in range(0, len(bounds), 2)]
    for level in LEVELS:
        pattern = re.compile(LEVELS[level].encode())
        matched = bytes(bool(pattern.search(record)) for record in records)
        for twin in _twins("literal_hits"):
            hits = twin(data, bounds, LITERALS[level], ANCHORED[level])
            assert all(hit for hit, match in zip(hits, matched, strict=True) if match), level


@settings(max_examples=examples(300), deadline=None)
@given(
    lines=st.lists(
        st.one_of(LOGCAT, st.lists(st.sampled_from(PIECES), max_size=8).map("".join)),
        max_size=6,
    ),
    levels=st.lists(st.sampled_from(["error", "warning", "words"]), min_size=1, unique=True),
)
def test_a_line_holds_a_level_where_the_levels_joined_pattern_matches_it(lines, levels):
    """The level test (the error words' pattern tried last, only on a line that holds one
    of its words) against the levels' patterns joined into one."""
    from seqdedup.budget.input import LEVELS, _level_test

    joined = re.compile("|".join(LEVELS[level] for level in levels).encode())
    for delimiter in (b"\n", b"\x00"):  # (read where it stands, or cut out)
        found, worded = _level_test(levels, delimiter)
        data = delimiter.join(line.encode() for line in lines)
        at = 0
        for line in lines:
            record, end = line.encode(), at + len(line.encode())
            want = joined.search(record) is not None
            held = found(data, at, end) is not None or worded(data[at:end])
            assert held == want, (record, levels, delimiter)
            at = end + len(delimiter)


@given(
    verbatim=st.lists(st.booleans(), max_size=40).flatmap(
        lambda flags: st.tuples(
            st.just(flags), st.lists(st.booleans(), min_size=len(flags), max_size=len(flags))
        )
    )
)
def test_units_are_a_head_with_the_verbatim_records_that_continue_it(verbatim):
    """_unit_bounds against its reading: a unit starts at every record that is not a
    verbatim record continuing a unit (verbatim, not a head), and ends where the next
    starts; the ends, read where asked, are those of the whole list, by index and by slice."""
    from seqdedup.budget.events import _unit_bounds

    flags, head_flags = verbatim
    is_verbatim = bytearray(flags)
    heads = bytearray(v and h for v, h in zip(flags, head_flags, strict=True))
    engines = every_engine()  # (the starts listed by either twin of flag_positions)
    want_starts = [r for r in range(len(flags)) if not (is_verbatim[r] and not heads[r])]
    want_ends = [s - 1 for s in want_starts[1:]] + ([len(flags) - 1] if want_starts else [])
    for engine in engines:
        starts, ends = _unit_bounds(is_verbatim, heads, engine)
        assert list(starts) == want_starts, engine.name
    assert [ends[u] for u in range(len(ends))] == want_ends == ends[:]
    assert ends[-1:] == want_ends[-1:] and ends[1::2] == want_ends[1::2]
    with pytest.raises(IndexError):
        ends[len(want_ends)]
