"""`seqdedup diff`'s new values: a new record of a kind GOOD shows (or one word apart
from GOOD's kinds of a form whose word varies there) is its own class, apart from
kinds GOOD never had; checked by hand and against a literal reading of the rule."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup import Config, Values, diff_records
from seqdedup.diff.changes import New
from seqdedup.engine.choice import chosen_engine
from seqdedup.keys.kind import ANY, WORDS, kind_of

from conftest import examples

pytestmark = pytest.mark.usefixtures("engine")

GOOD = [
    "Dec 10 06:55:46 sshd[24200]: Invalid user webmaster from 173.234.31.186",
    "Dec 10 06:55:48 sshd[24201]: Invalid user test9 from 52.80.34.196",
    "Dec 10 06:56:01 sshd[24202]: Accepted password for root from 10.0.0.1",
    "Dec 10 06:56:07 block blk_17 written",
]
BAD = [
    "Dec 10 10:54:27 sshd[24868]: Invalid user zhangyan from 183.62.140.253",
    "Dec 10 10:54:28 sshd[24202]: Accepted password for root from 10.0.0.1",
    "Dec 10 10:54:29 block blk_99 written",
    "Dec 10 10:54:30 kernel: Out of memory: Killed process 4711",
    "Dec 10 10:54:31 sshd[24870]: Invalid user dff from 183.62.140.253",
]


TIMES = Config(key_steps=(("normalize", "timestamp"),))  # (keys: the times masked)


def test_a_new_value_is_apart_from_a_kind_never_seen():
    """The user names and the block id are new values of kinds GOOD shows (the user
    name a word where GOOD's lines take more than one); the OOM kill is new."""
    diff = diff_records([GOOD], BAD, TIMES)
    values = [c for c in diff.changes if isinstance(c, Values)]
    new = [c for c in diff.changes if isinstance(c, New)]
    assert [(c.first, c.last) for c in new] == [(4, 4)]
    assert [(c.shape, c.first, c.last, c.length, c.values) for c in values] == [
        (
            "<TIMESTAMP> sshd[<NUMBER>]: Invalid user <...> from <IP>",
            1,
            5,
            2,
            ("zhangyan", "dff"),
        ),
        ("<TIMESTAMP> block blk_<NUMBER> written", 3, 3, 1, ("blk_99",)),
    ]
    assert values[0].good.text == GOOD[0] and values[0].distinct == 2
    assert diff.changed and diff.number_of("values") == 2 and diff.number_of("new") == 1


def test_a_column_padded_to_a_width_is_one_kind():
    """Android pads its pid and tid to a width: a line whose numbers are shorter or
    longer than GOOD's has a known kind (runs of spaces as one), so it is a new value,
    not new; a tab is a space too."""
    good = [
        "03-17 16:13:54.877  1702 27357 D ActivityManager: attachApplication, pid = 12787",
        "03-17 16:13:55.001  1702 27357 I Tag:\tready",
    ]
    bad = [
        "03-17 16:15:21.126  1702  2250 D ActivityManager: attachApplication, pid = 13003",
        "03-17 16:15:22.001   702  2250 I Tag: ready",
    ]
    diff = diff_records([good], bad, TIMES)
    assert [type(c).__name__ for c in diff.changes if c.kind != "known"] == ["Values", "Values"]
    assert kind_of(bad[0].encode()) == kind_of(good[0].encode())
    assert kind_of(b"a  \t b") == b"a b" and kind_of(b"a b") == b"a b"


def test_the_command_writes_the_class(tmp_path, run_cli):
    good, bad = tmp_path / "good.log", tmp_path / "bad.log"
    good.write_text("".join(line + "\n" for line in GOOD))
    bad.write_text("".join(line + "\n" for line in BAD))
    text = run_cli(["diff", "--normalize", "timestamp", good, bad]).stdout.decode()
    assert "1 new, 2 kinds with new values, " in text.splitlines()[0]
    assert (
        "~ lines 1-5: new values of a known kind, 2 records: <TIMESTAMP> sshd[<NUMBER>]: "
        "Invalid user <...> from <IP>: 2 new values: zhangyan, dff\n" in text
    )
    assert f"~         | {GOOD[0]}\n" in text  # (as GOOD has it)
    done = run_cli(["diff", "--normalize", "timestamp", "--format", "json", good, bad])
    answer = json.loads(done.stdout)
    assert done.returncode == 1 and answer["counts"]["values"] == 2
    entry = next(c for c in answer["changes"] if c["kind"] == "values")
    assert entry["values"] == ["zhangyan", "dff"] and entry["good"] == GOOD[0]


def literal_groups(good: list[str], bad: list[str]) -> dict[str, list[int]]:
    """The oracle: each BAD line (0-based) whose text GOOD never shows and whose kind
    GOOD shows, or whose kind of WORDS words or more is one word apart from GOOD's kinds
    of that form that take more than one word there (the first such word), or whose
    kind has the outline of GOOD's kinds with, at each run of values, a run they have
    there or a place where GOOD's kinds have two runs or more; by label."""
    good_kinds = {kind_of(line.encode()) for line in good}
    groups: dict[str, list[int]] = {}
    for at, line in enumerate(bad):
        if line in good:
            continue
        kind = kind_of(line.encode())
        label = kind if kind in good_kinds else None
        words = kind.split()
        for place in range(len(words)) if label is None and len(words) >= WORDS else ():
            others = words[:place] + words[place + 1 :]
            taken = {
                g.split()[place]
                for g in good_kinds
                if len(g.split()) == len(words)
                and g.split()[:place] + g.split()[place + 1 :] == others
            }
            if len(taken) >= 2:
                label = b" ".join([*words[:place], ANY, *words[place + 1 :]])
                break
        same = [
            g for g in good_kinds if outlined(kind) is not None and outlined(g) == outlined(kind)
        ]
        if (
            label is None
            and same
            and all(
                run in {runs_of(g)[at] for g in same}
                or len(
                    {
                        r
                        for g in good_kinds
                        for p, r in zip(places_of(g), runs_of(g), strict=True)
                        if p == place
                    }
                )
                >= 2
                for at, (place, run) in enumerate(zip(places_of(kind), runs_of(kind), strict=True))
            )
        ):
            label = b" ".join(
                w
                for k, w in enumerate(valued(kind))
                if w != ANY or k == 0 or valued(kind)[k - 1] != ANY
            )
        if label is not None:
            groups.setdefault(label.decode(), []).append(at)
    return groups


ALNUM = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def holds_value(word: bytes) -> bool:
    """A digit or a placeholder, or one of ``._:/@=`` between two letters or digits."""
    if any(c in b"0123456789<" for c in word):
        return True
    return any(
        word[i] in ALNUM and word[i + 1] in b"._:/@=" and word[i + 2] in ALNUM
        for i in range(len(word) - 2)
    )


def valued(kind: bytes) -> list[bytes]:
    """The words of ``kind``, each that holds a value as ANY."""
    return [ANY if holds_value(w) else w for w in kind.split()]


def runs_of(kind: bytes) -> list[tuple[bytes, ...]]:
    """The runs of words that hold values before, between and after the others."""
    runs: list[list[bytes]] = [[]]
    for word in kind.split():
        if holds_value(word):
            runs[-1].append(word)
        else:
            runs.append([])
    return [tuple(run) for run in runs]


def places_of(kind: bytes) -> list[tuple[bytes, bytes]]:
    """Each run's place: the words that hold no value before and after it."""
    words = [w for w in kind.split() if not holds_value(w)]
    return list(zip([b"", *words], [*words, b""], strict=True))


def outlined(kind: bytes) -> bytes | None:
    """The words that hold no value (None: fewer than WORDS)."""
    words = [w for w in kind.split() if not holds_value(w)]
    return b" ".join(words) if len(words) >= WORDS else None


words = st.sampled_from(
    ["user", "alice", "bob", "carol", "from", "10.0.0.1", "10.0.0.2", "7", "x", "a.exe", "ret:1"]
)
names = st.sampled_from(["alice", "bob", "carol", "7", "x"])
# lines of a few forms with a word that varies (a user, a job's state), and any others
lines = st.one_of(
    st.builds("user {} from {}".format, names, st.sampled_from(["10.0.0.1", "10.0.0.2"])),
    st.builds("job {} is {}".format, st.sampled_from(["7", "8"]), names),
    # (programs and hosts: values in any number, as Proxifier names them)
    st.builds(
        "{} - {} open through proxy".format,
        st.sampled_from(["a.exe", "b.exe", "a.exe *7", "x"]),
        st.sampled_from(["h.com:80", "g.org:1", "x", "h.com:80 7"]),
    ),
    st.lists(words, min_size=1, max_size=5).map(" ".join),
)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(lines, min_size=1, max_size=12), st.lists(lines, min_size=1, max_size=12))
def test_the_classes_follow_the_rule(good, bad):
    diff = diff_records([good], bad)
    want = literal_groups(good, bad)
    got = {c.shape: c for c in diff.changes if isinstance(c, Values)}
    assert sorted(got) == sorted(want)
    for shape, members in want.items():
        entry = got[shape]
        assert (entry.first, entry.last, entry.length) == (
            members[0] + 1,
            members[-1] + 1,
            len(members),
        )
    unknown = sum(1 for line in bad if line not in good)
    new = sum(c.length + c.again_length for c in diff.changes if isinstance(c, New))
    assert new + sum(len(m) for m in want.values()) == unknown


LOGHUB = Path(__file__).parent / "data" / "loghub"
NORMALIZED = Config(key_steps=(("normalize", "all"),))


@pytest.mark.parametrize(
    "name", ["Android", "Apache", "HDFS", "Hadoop", "Linux", "OpenSSH", "Proxifier", "Spark"]
)
def test_a_real_logs_second_half_is_new_only_where_its_template_is(name):
    """Two halves of each real log, nothing planted, keys normalised: of the second
    half's lines whose ground-truth template (loghub's) the first half has, at most 2%
    of the half are called new; the rest are known or new values. (Each record's class
    depends on its own key and kind only, so those lines are diffed alone.)"""
    lines = (LOGHUB / f"{name}_2k.log").read_bytes().splitlines()
    rows = (LOGHUB / "templates" / f"{name}_2k.log_structured.csv").read_text(encoding="utf-8")
    events = [row["EventId"] for row in csv.DictReader(rows.splitlines())]
    good, bad = lines[:1000], lines[1000:]
    known = set(events[:1000])
    named = [line for line, event in zip(bad, events[1000:], strict=True) if event in known]
    diff = diff_records([good], named, NORMALIZED)
    new = sum(c.length + c.again_length for c in diff.changes if isinstance(c, New))
    assert new <= 0.02 * len(bad), (
        new,
        [c.records[0].text for c in diff.changes if isinstance(c, New)][:5],
    )


def test_kinds_of_one_outline_are_one_kind_with_new_values():
    """Lines that differ from GOOD's in values only, however many and wherever (a
    program, a host, a value one line has and another leaves out), are new values of a
    known kind, where GOOD's own lines take more than one run of values between the
    same two words; a run GOOD shows one way only is part of the kind (another proxy:
    new), and a line whose words that hold no value differ is new."""
    proxy = "open through proxy proxy.cse.cuhk.edu.hk:5070 HTTPS"
    good = [
        f"[10.30 16:49:06] chrome.exe - proxy.cse.cuhk.edu.hk:5070 {proxy}",
        f"[10.30 16:49:07] firefox.exe - proxy.cse.cuhk.edu.hk:5070 {proxy}",
        f"[10.30 16:49:08] chrome.exe - tcpconn.tencent.com:80 {proxy}",
    ]
    bad = [
        f"[07.26 13:31:12] chrome.exe *64 - api.share.baidu.com:80 {proxy}",
        f"[07.26 13:44:26] Dropbox.exe - d.dropbox.com:443 {proxy}",
        "[07.26 13:44:27] Dropbox.exe - d.dropbox.com:443 error : Could not connect through proxy",
        "[07.26 13:44:28] chrome.exe - a.b.com:80 open through proxy socks.cuhk.edu.hk:1080 HTTPS",
    ]
    diff = diff_records([good], bad, NORMALIZED)
    values = [c for c in diff.changes if isinstance(c, Values)]
    assert [(c.shape, c.first, c.last, c.length, c.values) for c in values] == [
        ("<...> - <...> open through proxy <...> HTTPS", 1, 2, 2, ("*<NUMBER>", "Dropbox.exe")),
    ]
    assert values[0].good.text == good[0]
    assert [(c.first, c.last) for c in diff.changes if isinstance(c, New)] == [(3, 4)]


@pytest.mark.parametrize("end", ["", "\r"])
def test_a_short_kind_good_shows_is_known_by_its_hash(end):
    """BAD's new kinds of fewer than three words have neither a form nor an outline to
    share: whether GOOD shows them is asked of GOOD's kinds' hashes alone (a CR at the
    end of GOOD's lines is no part of a kind)."""
    good = [f"x 10.0.0.1{end}", f"z 10.0.0.1{end}"]
    diff = diff_records([good], ["x 10.0.0.2", "y", "x 10.0.0.3"], TIMES)
    values = [c for c in diff.changes if isinstance(c, Values)]
    assert [(c.shape, c.first, c.last, c.length) for c in values] == [("x <IP>", 1, 3, 2)]
    assert values[0].good.text == f"x 10.0.0.1{end}"
    assert [(c.first, c.last) for c in diff.changes if isinstance(c, New)] == [(2, 2)]


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["job", "job 7 done", "job 9 done", "disk 3", "user ann", "x"]),
            st.booleans(),
        ),
        max_size=24,
    ),
    st.integers(1, 40),
)
def test_goods_kind_index_is_each_keys_kind(lines, part):
    """GOOD's kinds, hashed as each key's first record passes (a part of the input at a
    time, CRLF lines or not): key id k's is the hash of its first record's kind, a
    final CR left out, as a literal reading of GOOD's first records makes it."""
    from unittest import mock

    from seqdedup.diff import stored as stored_module
    from seqdedup.diff.inputs import keying_for
    from seqdedup.diff.profile import GoodProfile
    from seqdedup.keys.kind import kind_keys

    config = Config(key_steps=(("normalize", "all"),))
    keying = keying_for(config)
    kinds = kind_keys(config.key_options, keying.engine.kernel)
    data = b"".join(text.encode() + (b"\r\n" if crlf else b"\n") for text, crlf in lines)
    with mock.patch.object(stored_module, "PART", part):
        profile = GoodProfile(keying.engine, kinds)
        stored = stored_module.StoredRecords(b"\n", chosen_engine(), kept=False)
        for _, piece, bounds in stored.read([data], 1 << 20):
            hashes, _, _ = keying.part_keys(piece, bounds)
            profile.add_stretch(hashes, piece, bounds)
        profile.end_stretch()
    profile.settle()
    firsts = list(profile.texts)  # (each key's first record, in key id order)
    assert len(firsts) == len(profile.counts)  # (one a distinct key)
    wanted = b"".join(kinds.hashes([text.removesuffix(b"\r")]) for text in firsts)
    assert bytes(profile.kinds.hashes) == wanted
    profile.close()


@pytest.mark.parametrize("batch", [1, 2, 3])
def test_new_records_kinds_made_a_batch_at_a_time_are_the_same_answer(batch):
    """BAD's new records have their kinds made BATCH at a time (a million new records
    are not held as texts and kinds at once): any batch size gives the same answer."""
    from unittest import mock

    from seqdedup.diff import values as values_module

    whole = diff_records([GOOD], BAD * 3, Config(key_steps=(("normalize", "all"),)))
    with mock.patch.object(values_module, "BATCH", batch):
        batched = diff_records([GOOD], BAD * 3, Config(key_steps=(("normalize", "all"),)))
    assert batched == whole
    assert any(isinstance(change, Values) for change in whole.changes)
