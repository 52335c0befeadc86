"""seqdedup diff's inputs (seqdedup.diff.inputs): rates per hour only over hours, GOOD
as a library read row by row where stream names must leave the keys, and --min-bytes on
what counts as a repeat of new material."""

from __future__ import annotations

import io
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.engine.choice import chosen_engine

from conftest import examples


def run_diff(run_cli, *args):
    done = run_cli(["diff", "--format", "json", *map(str, args)])
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def timed(path, hours, lines):
    """``lines`` spread evenly over ``hours`` hours, each with an ISO timestamp."""
    step = int(hours * 3600) // len(lines)

    def stamp(s):
        return f"2026-11-2{1 + s // 86400}T{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z"

    path.write_text("".join(f"{stamp(k * step)} {line}\n" for k, line in enumerate(lines)))
    return path


def test_rates_are_per_hour_when_both_sides_span_hours(run_cli, tmp_path):
    lines = ["sync done", "poll"] * 10
    good = timed(tmp_path / "good.log", 4.8, lines)  # 10 syncs in 4.8 hours
    bad = timed(tmp_path / "bad.log", 1.2, lines)  # 10 in 1.2 hours: 4x as often
    answer = run_diff(run_cli, "--normalize", "timestamp", good, bad)
    assert answer["per"] == "hour"
    more = [c for c in answer["changes"] if c["kind"] == "more"]
    assert [round(c["bad_rate"] / c["good_rate"], 1) for c in more] == [4.0]
    per_input = run_diff(run_cli, "--normalize", "timestamp", "--per", "input", good, bad)
    assert per_input["per"] == "input" and not per_input["changed"]


def test_short_runs_are_compared_per_input(run_cli, tmp_path):
    lines = ["sync done", "poll"] * 10
    good = timed(tmp_path / "good.log", 0.5, lines)  # (half an hour: too short for rates per hour)
    bad = timed(tmp_path / "bad.log", 0.1, lines)
    answer = run_diff(run_cli, "--normalize", "timestamp", good, bad)
    assert answer["per"] == "input" and not answer["changed"]
    forced = run_diff(run_cli, "--normalize", "timestamp", "--per", "hour", good, bad)
    assert forced["per"] == "hour" and forced["counts"]["more"] == 1


def test_a_library_of_streams_is_read_row_by_row(run_cli, tmp_path):
    good = tmp_path / "good.log"
    good.write_text(
        "".join(
            f"{pod} {step}\n" for _ in range(3) for pod in ("p1", "p2") for step in ("a", "b", "c")
        )
    )
    library = tmp_path / "lib"
    saved = run_cli(["-q", "-w", "1", "--stream-by", r"^\S+ ", "-l", str(library), str(good)])
    assert saved.returncode == 0, saved.stderr
    bad = tmp_path / "bad.log"
    bad.write_text("p1 a\np2 a\np1 b\np9 boom\np2 b\n")
    from_library = run_diff(run_cli, "--stream-by", r"^\S+ ", library, bad)
    new = [
        [line["text"] for line in c["records"]]
        for c in from_library["changes"]
        if c["kind"] == "new"
    ]
    assert new == [["p9 boom"]]
    # the keys leave the pod names out: every other record is known
    known = sum(c["length"] for c in from_library["changes"] if c["kind"] == "known")
    assert known == 4 and from_library["good_inputs"] == 1


def test_min_bytes_shows_a_small_repeat_of_new_material(run_cli, tmp_path):
    good = tmp_path / "good.log"
    good.write_text("ok\n" * 5)
    bad = tmp_path / "bad.log"
    bad.write_text("ok\nERROR x\nok\nERROR x\nok\n")
    folded = run_diff(run_cli, good, bad)
    shown = run_diff(run_cli, "--min-bytes", "100", good, bad)

    def new(answer):
        return [(c["first"], c["again"]) for c in answer["changes"] if c["kind"] == "new"]

    assert new(folded) == [(2, 1)]  # the second ERROR is a repeat: counted as again
    assert new(shown) == [(2, 0), (4, 0)]  # 7 bytes: too small to count as a repeat


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b 1", "b 2", "c", "d"]), min_size=1, max_size=30),
    st.lists(st.sampled_from(["a", "b 3", "c", "e", "f"]), min_size=1, max_size=30),
)
def test_a_library_knows_what_its_runs_saw(tmp_path_factory, good_lines, bad_lines):
    """GOOD as the library a run saved (-w 1) and as the file it read: the same new
    records, the same known ones, and each key's count (rows times their sightings)."""
    from seqdedup.cli.seqdedup import main

    folder = tmp_path_factory.mktemp("library")
    good, bad, library = folder / "good.log", folder / "bad.log", folder / "lib"
    good.write_text("".join(line + "\\n" for line in good_lines))
    bad.write_text("".join(line + "\\n" for line in bad_lines))
    out = io.BytesIO()
    assert (
        main(["-q", "-w", "1", "--normalize", "number", "-l", str(library), str(good)], stdout=out)
        == 0
    )
    answers = []
    for source in (good, library):
        out = io.BytesIO()
        status = main(
            [
                "diff",
                "--normalize",
                "number",
                "--format",
                "json",
                "--min-count",
                "1",
                "--per",
                "input",
                str(source),
                str(bad),
            ],
            stdout=out,
        )
        assert status in (0, 1)
        answers.append(json.loads(out.getvalue()))
    from_file, from_library = answers

    def new(answer):
        return [
            (c["first"], c["length"], c["again"]) for c in answer["changes"] if c["kind"] == "new"
        ]

    assert new(from_library) == new(from_file)
    from seqdedup.config.settings import Config
    from seqdedup.diff.inputs import keying_for, read_good

    config = Config(key_steps=(("normalize", "number"),))
    counts = []
    keying = keying_for(config)
    for source in (good, library):
        profile = read_good([str(source)], config, keying)
        keys = keying.keys(profile.texts)[0]  # (each id's key hash, from its first record)
        counts.append({keys[16 * k : 16 * k + 16]: n for k, n in enumerate(profile.counts)})
    assert counts[0] == counts[1]


def test_a_library_row_is_read_once_however_many_new_keys_it_holds():
    """Each new key's first record is read from its library row: a row of 3,000
    distinct records has its record offsets read once (counted), not once per key
    (which made a diff against a large suite's library take minutes), and no record of
    it is made but the new keys' own; every text is the row's."""
    from seqdedup.config.settings import Config
    from seqdedup.diff.inputs import _add_rows, keying_for
    from seqdedup.diff.profile import GoodProfile
    from seqdedup.keys.kind import kind_keys
    from seqdedup.library.store import encode_records, record_offsets

    rows = [[b"test %d passed" % k for k in range(3000)], [b"test 1 passed", b"other"]]
    read = []

    def counted(blob):
        read.append(blob)
        return record_offsets(blob)

    keying = keying_for(Config())
    if not keying.rows_at_once:
        pytest.skip("the Python engine decodes every row to key it (no kernel here)")
    profile = GoodProfile(keying.engine, kind_keys(Config().key_options, keying.engine.kernel))
    batch = [(encode_records(records), 1, len(records) + 1) for records in rows]
    _add_rows(batch, profile, keying, counted)
    assert len(read) == 2
    assert list(profile.texts) == [*rows[0], b"other"]
    profile.close()


DELIMITERS = [b"\n", b"a", b"ab", b"aa", b"\r\n"]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.binary(max_size=60).map(lambda b: bytes(b"ab\n\r"[x % 4] for x in b)),
    st.sampled_from(DELIMITERS),
    st.lists(st.integers(1, 9), min_size=1, max_size=6),
    st.integers(1, 12),
    st.booleans(),
    st.integers(1, 4),
)
def test_stored_records_split_as_one_pass_over_the_whole_input(
    data, delimiter, cuts, part, from_file, stride
):
    """An input read in parts of a few bytes (chunks of any size, delimiters of several
    bytes, even ones that overlap themselves, cut across chunks; the bytes set aside
    spilled to a temporary file past 16 bytes, or a plain file read back from itself):
    its parts' records are the whole input's records, in order, and each is read back
    by its number, alone or in blocks (every ``stride``-th record's start held)."""
    import tempfile
    from unittest import mock

    from seqdedup.base.records import python_record_bounds
    from seqdedup.diff import stored as stored_module

    bounds = python_record_bounds(data, delimiter)
    whole = [data[bounds[2 * k] : bounds[2 * k + 1]] for k in range(len(bounds) // 2)]
    chunks, at = [], 0
    for k in range(len(data)):
        size = cuts[k % len(cuts)]
        if at < len(data):
            chunks.append(data[at : at + size])
            at += size
    with (
        mock.patch.object(stored_module, "PART", part),
        mock.patch.object(stored_module, "IN_MEMORY", 16),
        mock.patch.object(stored_module, "BLOCK", 5),
        mock.patch.object(stored_module, "STRIDE", stride),
    ):
        stored = stored_module.StoredRecords(delimiter, chosen_engine())
        if from_file:
            with tempfile.NamedTemporaryFile(delete=False) as file:
                file.write(data)
            stored, _ = stored_module.stored_input(file.name, None, delimiter, chosen_engine())
            os.unlink(file.name)  # (the open file is read back: its name is not needed)
        read = []
        for first, piece, found in stored.read(chunks, 1 << 20):
            assert first == len(read)
            read += [piece[found[2 * k] : found[2 * k + 1]] for k in range(len(found) // 2)]
        assert read == whole
        assert stored.count == len(whole)
        assert [stored.record(k) for k in range(len(whole))] == whole
        assert stored.texts(range(0, len(whole), 2)) == whole[::2]
        backwards = [*range(len(whole) - 1, -1, -3), *range(len(whole))[:1]]  # (and a repeat)
        assert stored.texts(backwards) == [whole[k] for k in backwards]
        stored.close()


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.lists(st.binary(max_size=9), max_size=7), max_size=6),
    st.integers(1, 20),
    st.integers(1, 5),
)
def test_stored_texts_give_back_what_was_added(batches, block, written):
    """GOOD's first records, kept one after another (spilled to a temporary file past
    16 bytes, read back a few bytes at a time, written a few at a time), are the records
    added, in order: each by its number, all by iteration."""
    from unittest import mock

    from seqdedup.diff import stored as stored_module

    with (
        mock.patch.object(stored_module, "IN_MEMORY", 16),
        mock.patch.object(stored_module, "BLOCK", block),
        mock.patch.object(stored_module, "WRITTEN", written),
    ):
        texts = stored_module.StoredTexts()
        added: list[bytes] = []
        for batch in batches:
            texts.extend(iter(batch))
            added += batch
        assert len(texts) == len(added)
        assert list(texts) == added
        assert [texts[k] for k in reversed(range(len(added)))] == added[::-1]
        texts.close()


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.binary(max_size=20), max_size=30))
def test_a_rows_record_offsets_slice_out_its_records(records):
    """A library row's records read out by their offsets are the row's records."""
    from seqdedup.library.store import decode_records, encode_records, record_offsets

    blob = encode_records(records)
    at = record_offsets(blob)
    assert [blob[at[k] : at[k + 1]] for k in range(len(records))] == records
    assert decode_records(blob) == records and at[-1] == len(blob)


@pytest.mark.parametrize(
    "change", ["append", "truncate", "rewrite", "reflow", "replace"], ids=lambda change: change
)
def test_a_plain_file_is_read_back_from_itself_and_a_change_under_it_is_an_error(tmp_path, change):
    """BAD as a plain file is not copied aside: its records are read back from the file
    (held open). Lines appended after the read change nothing; a record no longer where
    it was (the file cut short, rewritten in place with other lines, or its lines ending
    elsewhere at the same size) is an error
    that says so, never other bytes given as the record; a file replaced under the name
    (a rotation) is still read from the one that was open."""
    from seqdedup.base.errors import SeqdedupError
    from seqdedup.diff import stored as stored_module

    path = tmp_path / "bad.log"
    lines = [b"record %d of the job" % k for k in range(40)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    stored, chunks = stored_module.stored_input(str(path), None, b"\n", chosen_engine())
    for _ in stored.read(chunks, 1 << 20):
        pass
    if change == "append":
        with path.open("ab") as file:
            file.write(b"a line written later\n")
    elif change == "truncate":
        with path.open("r+b") as file:
            file.truncate(100)
    elif change == "rewrite":
        path.write_bytes(b"\n".join(b"other %d" % k for k in range(40)) + b"\n")
    elif change == "reflow":  # (the same bytes but for where lines end: the same size)
        path.write_bytes(path.read_bytes().replace(b" of ", b"\nof "))
    else:
        path.rename(tmp_path / "bad.log.1")
        path.write_bytes(b"a new log\n")
    try:
        if change in ("truncate", "rewrite", "reflow"):
            with pytest.raises(SeqdedupError, match="changed while seqdedup diff read it"):
                stored.texts(range(40))
            with pytest.raises(SeqdedupError, match="changed while seqdedup diff read it"):
                stored.record(39)
        else:
            assert stored.texts(range(40)) == lines
            assert [stored.record(k) for k in (0, 17, 39)] == [lines[0], lines[17], lines[39]]
    finally:
        stored.close()


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(0, 1500), st.integers(1, 400), st.integers(2, 6))
def test_an_input_not_set_aside_is_sampled_evenly_first_and_last_among_them(count, part, samples):
    """GOOD's files are not set aside (their first records are copied as they pass):
    the records sampled for the time span are those at multiples of the least power of
    two that leaves fewer than 2 * SAMPLES of them, and the last; whatever the parts."""
    from unittest import mock

    from seqdedup.diff import stored as stored_module

    records = [b"%d" % k for k in range(count)]
    data = b"".join(r + b"\n" for r in records)
    chunks = [data[k : k + 7] for k in range(0, len(data), 7)]
    with (
        mock.patch.object(stored_module, "PART", part),
        mock.patch.object(stored_module, "SAMPLES", samples),
    ):
        stored = stored_module.StoredRecords(b"\n", chosen_engine(), kept=False)
        for _ in stored.read(chunks, 1 << 20):
            pass
        stride = 1
        while -(-count // stride) >= 2 * samples:
            stride *= 2
        wanted = list(range(0, count, stride))
        wanted += [count - 1] if count and wanted[-1] != count - 1 else []
        assert stored.samples() == [records[k] for k in wanted]
        assert stored.count == count
        stored.close()


@pytest.mark.parametrize(
    "options",
    [["--normalize", "all"], ["--normalize", "all", "-w", "3"], ["--stream-by", r"^(\w+):"]],
)
def test_a_diff_read_in_small_parts_is_the_diff_read_whole(run_cli, tmp_path, options):
    """GOOD and BAD of 2.6 MB read in parts of a read's 1 MiB (their records cut across
    reads, GOOD's sequences linked across parts, CRLF lines in one part only, records
    read back for the answer) give the answer of one part of 64 MiB."""
    from unittest import mock

    from seqdedup.diff import stored as stored_module

    steps = ["start", "fetch", "build", "test", "pack", "done"]
    pad = "x" * 90  # (2.6 MB in 25,200 lines)
    lines = [f"{pod}: {step} {pad}" for _ in range(2100) for step in steps for pod in ("p1", "p2")]
    good = tmp_path / "good.log"
    good.write_bytes("".join(line + "\n" for line in lines).encode())
    # a new line, and one run of the job cut short (its test, pack and done missing)
    changed = [*lines[:250], "p1: disk full", *lines[250:258], *lines[264:]]
    changed.insert(20_000, "p2: quota exceeded")  # (one in a later part)
    bad = tmp_path / "bad.log"
    bad.write_bytes(
        "".join(
            line + ("\r\n" if 100 <= k < 110 else "\n") for k, line in enumerate(changed)
        ).encode()
    )
    with mock.patch.object(stored_module, "PART", 64 << 20):
        whole = run_diff(run_cli, *options, good, bad)
    with mock.patch.object(stored_module, "PART", 64):
        parts = run_diff(run_cli, *options, good, bad)
    assert parts == whole and whole["counts"]["new"] and whole["counts"]["broken"]


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(0, 30), max_size=40), st.integers(1, 5), st.integers(1, 60))
def test_library_rows_are_keyed_in_batches_bounded_by_rows_and_bytes(sizes, rows, held):
    """A library's rows keyed together: every row once, in order; a batch ends at ROWS
    rows or once ROW_BYTES of records are held (the row that reaches it the last)."""
    from unittest import mock

    from seqdedup.diff import inputs as inputs_module

    table = [(bytes(size), 1, 1) for size in sizes]

    class Cursor:  # (as sqlite3's: fetchmany hands out what is left)
        def __init__(self) -> None:
            self.left = list(table)

        def fetchmany(self, count: int) -> list[tuple[bytes, int, int]]:
            taken, self.left = self.left[:count], self.left[count:]
            return taken

    with (
        mock.patch.object(inputs_module, "ROWS", rows),
        mock.patch.object(inputs_module, "ROW_BYTES", held),
    ):
        batches = list(inputs_module._row_batches(Cursor()))
    assert [row for batch in batches for row in batch] == table
    for batch in batches:
        assert batch and len(batch) <= rows
        assert sum(len(row[0]) for row in batch[:-1]) < held


@settings(max_examples=examples(200), deadline=None)
@given(
    st.binary(max_size=40).map(lambda b: bytes(b" \t\n\rab\x00"[x % 7] for x in b)),
    st.sampled_from([b"\n", b"\r\n", b" ", b"ab", b"\x00", b"a"]),
)
def test_a_part_is_blank_when_every_record_is_whitespace(data, delimiter):
    """BAD's blankness found as it is read: a part is blank when every one of its
    records is whitespace, whatever the delimiter (whitespace itself or not)."""
    from seqdedup.base.records import python_record_bounds
    from seqdedup.diff.inputs import all_blank

    bounds = python_record_bounds(data, delimiter)
    records = [data[bounds[2 * k] : bounds[2 * k + 1]] for k in range(len(bounds) // 2)]
    assert all_blank(data, bounds, delimiter) == (not any(record.strip() for record in records))


def test_a_blank_bad_is_found_blank_without_reading_it_back(run_cli, tmp_path):
    """A BAD of 20,000 blank lines is "BAD is empty" with its records read back in a
    handful of calls (the new records' values, the answer's), not one call a record to
    find that none holds anything: that took 13 seconds for 300,000 lines."""
    from unittest import mock

    from seqdedup.diff import stored as stored_module

    good, bad = tmp_path / "good.log", tmp_path / "bad.log"
    good.write_bytes(b"start\nwork\ndone\n")
    bad.write_bytes(b"  \n" * 20_000)
    asked: list[int] = []
    texts = stored_module.StoredRecords._texts

    def counted(self, positions):
        asked.append(len(positions))
        return texts(self, positions)

    with mock.patch.object(stored_module.StoredRecords, "_texts", counted):
        done = run_cli(["diff", str(good), str(bad)])
    assert done.returncode == 1, done.stderr
    assert done.stdout.decode().startswith(f"seqdedup diff: BAD is empty: {bad} holds 20,000 ")
    assert len(asked) <= 10, asked
