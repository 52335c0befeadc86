"""--normalize and --mask (README: Keys for real logs): each class on what it matches and
what it deliberately leaves alone, the kernel's scanner against the regular expressions,
and the written bytes never changed."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Deduplicator, UsageError
from seqdedup.config.normalize import (
    ALL,
    CLASSES,
    EVERY,
    KeySteps,
    normalize_py,
    parse_classes,
)
from seqdedup.engine.choice import chosen_engine
from seqdedup.library.store import encode_records

from conftest import examples, kernel_built
from oracle import skipped_flags

EXAMPLES = [
    # space: two or more spaces and tabs, or one tab, as one space (not part of "all")
    ("space", "a  b", "a b"),
    ("space", "a\tb", "a b"),
    ("space", "a \t  b\t", "a b "),
    ("space", "a b", "a b"),
    ("space,number", "  1702  2250 D", " <NUMBER> <NUMBER> D"),
    ("all", "  1702  2250 D", "  <NUMBER>  <NUMBER> D"),
    # path: '/' and a run of path bytes with a letter or digit, not after a path byte
    ("path", "open /var/log/app-12.log failed", "open <PATH> failed"),
    ("path", "GET /index.html HTTP/1.1", "GET <PATH> HTTP/1.1"),
    ("path", "fetch http://host/x/y?q=1", "fetch http:<PATH>?q=1"),
    ("path", "dir /a/b/ done", "dir <PATH> done"),
    ("path,ip,number", "route 10.0.0.0/24", "route <IP>/<NUMBER>"),
    ("path", "a / b // c ./build/out ~/x", "a / b // c ./build/out ~/x"),
    # quoted: at the start or after = : space tab; closed on its line; not before a letter
    ("quoted", "user=\"bob\" msg='hi there' ok", "user=<QUOTED> msg=<QUOTED> ok"),
    ("quoted", '{"msg":"x y","n":1}', '{"msg":<QUOTED>,"n":1}'),
    ("quoted", '"start" end', "<QUOTED> end"),
    ("quoted", "don't 'q's x=\"open", "don't 'q's x=\"open"),
    ("quoted", "a=\"\" b=''", "a=<QUOTED> b=<QUOTED>"),
    ("all", "open /var/log/x.log user='bob'", "open /var/log/x.log user='bob'"),
    # timestamp
    ("timestamp", "2026-11-22T09:00:01Z GET", "<TIMESTAMP> GET"),
    ("timestamp", "2026-11-22 09:00:01.123+01:00 x", "<TIMESTAMP> x"),
    ("timestamp", "2026-11-22T09:00:01,5-0500", "<TIMESTAMP>"),
    ("timestamp", "day 2026-11-22 ends", "day <TIMESTAMP> ends"),
    ("timestamp", "Nov 22 09:00:01 host sshd", "<TIMESTAMP> host sshd"),
    ("timestamp", "Nov  2 09:00:01.5 host", "<TIMESTAMP> host"),
    (
        "timestamp",
        '1.2.3.4 - - [22/Nov/2026:09:00:01 +0000] "GET"',
        '1.2.3.4 - - [<TIMESTAMP>] "GET"',
    ),
    ("timestamp", "at 9:00:01.123: done", "at <TIMESTAMP>: done"),
    ("timestamp", "ts=09:00:01", "ts=<TIMESTAMP>"),
    # ... and not
    ("timestamp", "12026-11-22", "12026-11-22"),  # a digit before it
    ("timestamp", "09:00 sharp", "09:00 sharp"),  # no seconds
    ("timestamp", "123:45:67", "123:45:67"),
    ("timestamp", "10.11.12.13", "10.11.12.13"),  # looks like a time, is an address
    ("timestamp", "Novel 22 09:00:01", "Novel 22 <TIMESTAMP>"),  # no month name
    # uuid
    ("uuid", "id=123e4567-e89b-12d3-a456-426614174000.", "id=<UUID>."),
    ("uuid", "123E4567-E89B-12D3-A456-426614174000", "<UUID>"),
    ("uuid", "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-42661417400"),
    ("uuid", "x123e4567-e89b-12d3-a456-426614174000", "x123e4567-e89b-12d3-a456-426614174000"),
    # hex
    ("hex", "at 0x7fff5fbff8c8 in f", "at <HEX> in f"),
    ("hex", "request_id=efa81e587ea1ad2e took", "request_id=<HEX> took"),
    ("hex", "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "commit <HEX>"),
    ("hex", "order 12345678", "order <HEX>"),  # 8 or more digits count
    ("hex", "deadbeef cafebabe", "deadbeef cafebabe"),  # no digit: a word
    ("hex", "abc1234", "abc1234"),  # 7 hex digits
    ("hex", "0xZZ", "0xZZ"),
    # ip
    ("ip", "dialing 10.0.0.7:9000 now", "dialing <IP> now"),
    ("ip", "from 192.168.1.1.", "from <IP>."),
    ("ip", "fe80::1 and ::1", "<IP> and <IP>"),
    ("ip", "2001:db8:85a3::8a2e:370:7334", "<IP>"),
    ("ip", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "<IP>"),
    ("ip", "1.2.3.4.5", "1.2.3.4.5"),  # five groups: a version, not an address
    ("ip", "std::vector", "std::vector"),
    ("ip", "mac 00:1a:2b:3c:4d:5e", "mac 00:1a:2b:3c:4d:5e"),  # six groups
    ("ip", "12:30:45", "12:30:45"),  # a time, not an IPv6 address
    ("ip", "1.2.3", "1.2.3"),
    # number
    ("number", "took 550ms status=200", "took <NUMBER>ms status=<NUMBER>"),
    ("number", "pi 3.14, e 2.718.", "pi <NUMBER>, e <NUMBER>."),
    ("number", "delta -5", "delta -<NUMBER>"),
    ("number", 'File "handler_17.py", line 88', 'File "handler_<NUMBER>.py", line <NUMBER>'),
    ("number", "version 1.2.3", "version 1.2.3"),  # a version string stays
    ("number", "x86 v2 sha256", "x86 v2 sha256"),  # digits inside words stay
    # the classes together: a timestamp is one placeholder, not six numbers
    (
        "all",
        "2026-11-22T10:00:01.123Z INFO id=5f3a9c21e0 from 10.0.0.7 took 12ms v1.2.3",
        "<TIMESTAMP> INFO id=<HEX> from <IP> took <NUMBER>ms v1.2.3",
    ),
    (
        "timestamp,number",
        "Nov 22 09:00:01 retry 3 of 5",
        "<TIMESTAMP> retry <NUMBER> of <NUMBER>",
    ),
    ("uuid,hex", "123e4567-e89b-12d3-a456-426614174000", "<UUID>"),
]


# Timestamps as real systems write them (--normalize timestamp): the line, and the text
# that must become one <TIMESTAMP>. From loghub's logs (tests/data/loghub and its other
# systems), the standard formats of common software, and their variants.
REAL_TIMESTAMPS = [
    ("03-17 16:13:38.811  1702  2395 D WindowManager: x", "03-17 16:13:38.811"),  # Android
    ("[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok", "Sun Dec 04 04:47:44 2005"),
    ("081109 203615 148 INFO dfs.DataNode$PacketResponder: x", "081109 203615"),  # HDFS
    ("2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop", "2015-10-18 18:01:47,978"),
    ("Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication", "Jun 14 15:16:01"),
    ("Dec 10 06:55:46 LabSZ sshd[24200]: reverse mapping", "Dec 10 06:55:46"),  # OpenSSH
    ("[10.30 16:49:06] chrome.exe - proxy.cse.cuhk.edu.hk:5070 open", "10.30 16:49:06"),
    ("17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend", "17/06/09 20:10:40"),
    ("- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 RAS KERNEL INFO", "1117838570"),  # BGL
    ("2005.06.03 R02-M1-N0-C:J12-U11 RAS KERNEL", "2005.06.03"),  # a dotted date
    ("R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0", "2005-06-03-15.42.50.675872"),
    ("20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged", "20171223-22:15:29:606"),
    ("1077804742 node-246 unix.hw state_change.unavailable", "1077804742"),  # HPC
    ("- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond", "1131566461"),
    ("- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond", "Nov 9 12:01:01"),
    ("2016-09-28 04:30:30, Info                  CBS    Loaded Servicing", "2016-09-28 04:30:30"),
    ("2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]", "2015-07-29 17:41:44,747"),
    ("nova-api.log 2017-05-16 00:00:00.008 25746 INFO nova.osapi", "2017-05-16 00:00:00.008"),
    ("Jul  1 09:00:55 calvisitor-10-105-160-95 kernel[0]: AppleThunderbolt", "Jul  1 09:00:55"),
    ("Nov 22 09:00:01.123456 host app[12]: ready", "Nov 22 09:00:01.123456"),  # syslog
    ("<34>1 2026-12-06T07:34:21.003Z host app 123 ID47 - msg", "2026-12-06T07:34:21.003Z"),
    ("2026-12-06T07:34:21+01:00 host kernel: eth0 up", "2026-12-06T07:34:21+01:00"),
    ("2026-12-06T07:34:21.123456789Z stdout F GET /healthz", "2026-12-06T07:34:21.123456789Z"),
    ("2026-12-06 07:34:21.123456+0000 [INFO] worker", "2026-12-06 07:34:21.123456+0000"),
    ("2026-12-06 07:34:21,123 - app.module - WARNING - slow", "2026-12-06 07:34:21,123"),
    ("2026-12-06 07:34:21 UTC [123] LOG:  checkpoint starting", "2026-12-06 07:34:21"),
    ("2026-12-06T07:34Z cron started", "2026-12-06T07:34Z"),  # minutes only
    ("2026-12-06 ended", "2026-12-06"),  # a date alone
    ("2009/11/10 23:00:00 Hello, log", "2009/11/10 23:00:00"),  # Go's log package
    ("2009/11/10 23:00:00.123456 main.go:12: Hello", "2009/11/10 23:00:00.123456"),
    ("I1206 03:27:25.123456 1 main.go:42] Starting", "I1206 03:27:25.123456"),  # glog
    ("E0101 00:00:00.000001    7 server.go:1] failed", "E0101 00:00:00.000001"),
    ("W1231 23:59:59.999999 12 x.go:3] slow", "W1231 23:59:59.999999"),
    (
        '10.0.0.7 - - [22/Nov/2026:09:00:01 +0000] "GET / HTTP/1.1" 200',
        "22/Nov/2026:09:00:01 +0000",
    ),
    ("[06/Dec/2026:07:34:21 -0800] GET /", "06/Dec/2026:07:34:21 -0800"),
    ("2026/12/06 07:34:21 [error] 1234#0: *5 connect() failed", "2026/12/06 07:34:21"),  # nginx
    ("[Mon Dec 07 10:00:00.123456 2026] [core:error] [pid 1]", "Mon Dec 07 10:00:00.123456 2026"),
    ("Thu Dec  3 12:00:01 2026 backup done", "Thu Dec  3 12:00:01 2026"),  # ctime, day < 10
    ("Dec 06 07:34:21 myhost systemd[1]: Started", "Dec 06 07:34:21"),  # journald
    ("1733470461 job started", "1733470461"),  # epoch seconds at the start
    ("1733470461123 job started", "1733470461123"),  # epoch milliseconds at the start
    ("12:00:01.500 worker 3 ready", "12:00:01.500"),  # a time of day
    ("took until 9:05:07 to finish", "9:05:07"),
    ("06.12.26 07:34:21 INFO start", "06.12.26 07:34:21"),  # a dotted short date
]

# ... and numbers that are no timestamp: each line, and the text that must stay as it is
# under --normalize timestamp (a time of day beside it may still be masked)
NOT_TIMESTAMPS = [
    ("sshd[24200]: pid 1733470461 died", "1733470461"),  # like an epoch, mid-line
    ("application_1445144423722_0020 finished", "1445144423722"),  # an application id
    ("listening on 0.0.0.0:8080 and :9090", "0.0.0.0:8080 and :9090"),  # ports
    ("served 200 in 12ms, 1733470461 bytes", "1733470461"),
    ("version 2026.12.06.1 installed", "2026.12.06.1"),  # a version, not a date
    ("path 2026/12/06/17/report.txt", "2026/12/06/17"),
    ("order 20171223 shipped", "20171223"),  # eight digits mid-line
    ("20171399-22:15:29:606 bad month", "20171399"),  # compact, month 13
    ("081109 243615 bad hour", "081109 243615"),  # compact, hour 24
    ("081309 203615 bad month", "081309 203615"),
    ("I1306 03:27:25.123456 bad month", "I1306"),
    ("X1206 03:27:25.123456 no level", "X1206"),
    ("4117838570 past 2096", "4117838570"),  # an epoch out of range
    ("12345678901 eleven digits", "12345678901"),
    ("ratio 10.30 of 16", "10.30"),  # a short date needs a time beside it
    ("1.2.3.4 is an address", "1.2.3.4"),
    ("Sunday Dec 04 nothing", "Sunday Dec 04"),
]


@pytest.mark.parametrize(("line", "stamp"), REAL_TIMESTAMPS)
def test_real_timestamps_are_one_placeholder(line, stamp):
    """The stamp is one placeholder: the line normalises as the line with the stamp
    already replaced does (other stamps in it masked the same in both)."""
    assert stamp in line
    marked = line.replace(stamp, "<TIMESTAMP>", 1).encode()
    for name, normalize in implementations():
        got = normalize(line.encode(), CLASSES["timestamp"])
        assert got == normalize(marked, CLASSES["timestamp"]), (name, got)


@pytest.mark.parametrize(("line", "kept"), NOT_TIMESTAMPS)
def test_numbers_that_are_no_timestamp_stay(line, kept):
    assert kept in line
    for name, normalize in implementations():
        assert kept in normalize(line.encode(), CLASSES["timestamp"]).decode(), name


@pytest.mark.parametrize(("line", "stamp"), REAL_TIMESTAMPS)
def test_each_real_timestamp_reads_as_seconds(line, stamp):
    """Fold lines, --fold-every TIME, the page's time axis and diff's spans read the
    first timestamp of a record as seconds: every form of the table gives a number."""
    from seqdedup.config.normalize import first_timestamp, timestamp_seconds

    assert timestamp_seconds(first_timestamp(line.encode())) is not None


@pytest.mark.parametrize(
    ("earlier", "later", "seconds"),
    [
        ("20171223-22:15:29:606", "20171223-22:15:30:106", 0.5),
        ("081109 203615", "081109 203715", 60),
        ("2005-06-03-15.42.50.675872", "2005-06-03-15.42.51.675872", 1),
        ("Sun Dec 04 04:47:44 2005", "Mon Dec 05 04:47:44 2005", 86400),
        ("I1206 03:27:25.5", "I1206 03:27:26", 0.5),
        ("1733470461", "1733470462", 1),
        ("1733470461123", "1733470461623", 0.5),
        ("2009/11/10 23:00:00", "2009/11/11 00:00:00", 3600),
        ("10.30 16:49:06", "10.30 16:49:16", 10),
        ("Jun 14 15:16:01", "Jun 14 15:16:02", 1),
    ],
)
def test_timestamps_of_one_form_differ_by_their_time(earlier, later, seconds):
    from seqdedup.config.normalize import timestamp_seconds

    first, second = timestamp_seconds(earlier), timestamp_seconds(later)
    assert first is not None and second is not None
    assert second - first == pytest.approx(seconds)


def test_the_tables_are_as_long_as_promised():
    assert len(REAL_TIMESTAMPS) >= 40 and len(NOT_TIMESTAMPS) >= 15


def implementations():
    found = [("python", normalize_py)]
    engine = chosen_engine()
    if engine.kernel is not None:
        found.append(("c", engine.normalize))
    return found


@pytest.mark.parametrize(("classes", "text", "expected"), EXAMPLES)
def test_each_class_on_what_it_matches_and_what_it_leaves(classes, text, expected):
    bits = parse_classes(classes)
    for name, normalize in implementations():
        assert normalize(text.encode(), bits).decode() == expected, name


def test_class_names():
    assert parse_classes("all") == ALL
    assert parse_classes(" Timestamp , uuid") == CLASSES["timestamp"] | CLASSES["uuid"]
    with pytest.raises(UsageError, match="unknown class 'dates'"):
        parse_classes("timestamp,dates")


# Pieces that meet at random: digits, hex letters, separators, month names, the
# beginnings and ends of every class.
PIECES = [
    *"0123456789afAFgxXZT :-.,/+[]_=\t\"'~%@\n",
    "/var",
    "log/",
    "//",
    "::",
    "  ",
    "2026",
    "12",
    "Nov",
    "Jan",
    "Dec",
    "Novel",
    "0x",
    "dead",
    "beef",
    "123e4567",
    "e89b",
    "fe80",
    "10.0.0.7",
    "09:00:01",
    "2026-11-22",
    ".123",
    "+0000",
    "\u00e9",
    "\udcff",
    # the forms of real systems (dates with slashes and dots, ctime's weekday and year,
    # glog, compact dates, epochs, short dates)
    "Sun",
    "Thu",
    "Wed ",
    "I",
    "W",
    "E1206",
    "2005.06.03",
    "2009/11/10",
    "-15.42.50",
    "1117838570",
    "1445144423722",
    "20171223",
    "081109",
    "203615",
    "10.30",
    "17/06",
    "03-17",
    "23",
    "59",
    "13",
]
texts = st.lists(st.sampled_from(PIECES), max_size=16).map(
    lambda parts: "".join(parts).encode("utf-8", "surrogateescape")
)


@pytest.mark.skipif(not kernel_built(), reason="needs the compiled kernel")
@settings(max_examples=examples(1000), deadline=None)
@given(text=texts, bits=st.integers(1, EVERY))
def test_the_kernel_scanner_is_the_regular_expressions(text, bits):
    from seqdedup import _kernel

    assert _kernel.normalize(text, bits) == normalize_py(text, bits)
    # (and each match with its class, as the values of --budget's notes read them)
    from seqdedup.config.normalize import python_value_matches
    from seqdedup.engine.choice import engine_named

    assert engine_named("c").value_matches(text, bits) == python_value_matches(text, bits)


@pytest.mark.skipif(not kernel_built(), reason="needs the compiled kernel")
def test_the_kernel_hashes_the_normalised_key_in_pieces():
    """The kernel hashes a normalised key as it makes it (never holding it whole): the
    same as XXH64 of the key, for keys of every length around its 32-byte stripes."""
    from seqdedup import _kernel

    rng = random.Random(5)
    for _ in range(400):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60))).encode(
            "utf-8", "surrogateescape"
        )
        bits, seed, skip = rng.randint(0, EVERY), rng.getrandbits(64), rng.randint(0, 3)
        key = normalize_py(
            text.decode("utf-8", "surrogateescape")[skip:].encode("utf-8", "surrogateescape"), bits
        )
        hashed = _kernel.hash_records([text], seed, skip, False, bits)
        assert hashed == _kernel.hash_records([key], seed)
        assert _kernel.hash_encoded(encode_records([text]), seed, skip, False, bits) == hashed


# A record template with slots, and values of each class to fill them: a copy has the
# same forms (``form``), other values.
def _clock(rng: random.Random) -> str:
    return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def _timestamp(rng: random.Random, form: int) -> str:
    day = rng.randint(1, 28)
    return [
        f"2026-11-{day:02d}T{_clock(rng)}.{rng.randint(0, 999):03d}Z",
        f"Nov {day:2d} {_clock(rng)}",
        f"[{day:02d}/Nov/2026:{_clock(rng)} +0000]",
    ][form % 3]


FILLERS = {
    "timestamp": _timestamp,
    "uuid": lambda rng, form: "-".join(f"{rng.getrandbits(4 * n):0{n}x}" for n in (8, 4, 4, 4, 12)),
    "hex": lambda rng, form: (
        f"{rng.getrandbits(64) | 1 << 60:016x}" if form % 2 else f"0x{rng.getrandbits(32):x}"
    ),
    "ip": lambda rng, form: (
        ".".join(str(rng.randint(0, 255)) for _ in range(4))
        + (f":{rng.randint(1, 65535)}" if form % 2 else "")
    ),
    "number": lambda rng, form: (
        str(rng.randint(0, 10**6)) if form % 2 else f"{rng.randint(0, 999)}.{rng.randint(0, 999)}"
    ),
}


@settings(max_examples=examples(300), deadline=None)
@given(
    words=st.lists(
        st.sampled_from(["GET", "retry", "failed:", "id=", "from", "(", ")", "took"]), max_size=6
    ),
    slots=st.lists(
        st.tuples(st.sampled_from(sorted(FILLERS)), st.integers(0, 5)), min_size=1, max_size=5
    ),
    seeds=st.tuples(st.integers(0, 2**32), st.integers(0, 2**32)),
)
def test_copies_with_other_ids_and_times_get_equal_keys(words, slots, seeds):
    def record(seed: int) -> bytes:
        """The words with a value of each slot's class and form after every other word."""
        rng = random.Random(seed)
        parts = [*words]
        for place, (slot, form) in enumerate(slots):
            parts.insert(min(2 * place, len(parts)), FILLERS[slot](rng, form))
        return " ".join(parts).encode()

    one, other = record(seeds[0]), record(seeds[1])
    bits = parse_classes(",".join(slot for slot, _ in slots))
    for name, normalize in implementations():
        assert normalize(one, bits) == normalize(other, bits), (name, one, other)


records_strategy = st.lists(
    st.sampled_from(["a 1", "a 2", "b 0x1f", "b 0x2e", "c", "t 09:00:01", "t 10:11:12", "d"]),
    max_size=80,
)


@pytest.mark.usefixtures("engine")
class TestInTheEngine:
    @settings(max_examples=examples(200), deadline=None)
    @given(
        records=records_strategy,
        window=st.integers(1, 5),
        classes=st.sampled_from(["all", "number", "hex,timestamp"]),
        cuts=st.lists(st.integers(1, 40), min_size=1, max_size=6),
        by_bytes=st.booleans(),
        inverse=st.booleans(),
    )
    def test_the_written_bytes_are_the_records_the_oracle_keeps(
        self, records, window, classes, cuts, by_bytes, inverse
    ):
        """Normalised keys decide; the output is the original records, byte for byte
        (the kernel's chunk path with feed_bytes, the record path with feed), in normal
        and inverse mode."""
        bits = parse_classes(classes)
        skipped = skipped_flags([normalize_py(r.encode(), bits) for r in records], window)
        want = [r.encode() for r, s in zip(records, skipped, strict=True) if s == inverse]
        d = Deduplicator(window_size=window, key_steps=(("normalize", classes),), inverse=inverse)
        if by_bytes:
            data = b"".join(r.encode() + b"\n" for r in records)
            out, at = b"", 0
            for size in cuts * (len(data) // sum(cuts) + 1):
                out += d.feed_bytes(data[at : at + size])
                at += size
            out += d.flush_bytes()
            assert out == b"".join(r + b"\n" for r in want)
        else:
            assert d.feed([r.encode() for r in records]) + d.flush() == want

    def test_masks_and_normalisation_in_command_line_order(self):
        records = [b"job 7 user=ann", b"job 8 user=bob"]
        # number first: both become "job <NUMBER> user=..." and the mask then hides the user
        d = Deduplicator(
            window_size=1,
            key_steps=(("normalize", "number"), ("mask", r"user=\w+")),
        )
        assert d.feed(records) + d.flush() == records[:1]
        # a mask that eats the number first leaves nothing for number to do
        d = Deduplicator(window_size=1, key_steps=(("mask", r"job \d"),))
        assert d.feed(records) + d.flush() == records  # the users differ

    def test_a_mask_on_text_keeps_invalid_bytes(self):
        d = Deduplicator(window_size=1, key_steps=(("mask", "é+"),))
        records = [b"x \xff \xc3\xa9\xc3\xa9", b"x \xff \xc3\xa9", b"x \xfe \xc3\xa9"]
        assert d.feed(records) + d.flush() == [records[0], records[2]]


def test_consecutive_normalize_options_are_one_pass():
    steps = KeySteps((("normalize", "uuid"), ("normalize", "number"), ("mask", "x")))
    assert steps.passes[0] == CLASSES["uuid"] | CLASSES["number"]
    assert len(steps.passes) == 2
    assert KeySteps((("normalize", "ip"),)).only_normalize == CLASSES["ip"]
    assert KeySteps((("mask", "x"),)).only_normalize == 0


def test_an_invalid_mask_is_a_usage_error():
    with pytest.raises(UsageError, match=r"--mask: invalid regular expression '\('"):
        Deduplicator(key_steps=(("mask", "("),))
    with pytest.raises(UsageError, match="matches the empty string"):
        Deduplicator(key_steps=(("mask", "[0-9]*"),))
    for steps in ((("normalize", 5),), (("normalize",),), ("normalize",)):
        with pytest.raises(UsageError, match="a \\(kind, text\\) pair"):
            Deduplicator(key_steps=steps)
    with pytest.raises(UsageError, match="json_key: paths are a sequence of text"):
        Deduplicator(json_key="msg")


# -- the installed command ------------------------------------------------------------
EXAMPLE = "examples/requests.log"  # retry blocks that differ only in ids, times, addresses


def test_blocks_that_differ_only_in_ids_and_times_are_dropped(run_cli):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    plain = run_cli(["-q", "-w", "4", EXAMPLE], cwd=root)
    assert plain.stdout == (root / EXAMPLE).read_bytes()  # nothing repeats byte for byte
    p = run_cli(["-q", "-w", "4", "--normalize", "all", EXAMPLE], cwd=root)
    lines = (root / EXAMPLE).read_bytes().splitlines(keepends=True)
    # Lines 7-11 (a request and a failed payment) repeat 2-6, lines 13-16 repeat 3-6.
    assert p.stdout == b"".join(lines[:6] + lines[11:12] + lines[16:])
    keys = run_cli(["--show-keys", "--normalize", "all", EXAMPLE], cwd=root)
    assert keys.stdout.splitlines()[2] == (
        b"<TIMESTAMP> WARN  gateway  req=<HEX> POST /payments from <IP> -> upstream timeout "
        b"after <NUMBER>ms"
    )
    assert len(keys.stdout.splitlines()) == len(lines)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--normalize", "timestamp,dates"], "--normalize: unknown class 'dates'"),
        (["--mask", "a("], "--mask: invalid regular expression 'a('"),
        (["--json-key", "a", "--json-ignore", "b"], "cannot be used together"),
        (["--json-key", "a", "-b"], "need text mode"),
    ],
)
def test_bad_key_options_are_one_line_and_no_output(run_cli, args, message):
    p = run_cli(args, input_bytes=b"x\n")
    assert p.returncode == 1
    assert p.stdout == b""
    assert message in p.stderr.decode()
    assert len(p.stderr.splitlines()) == 1
