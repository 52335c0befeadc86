"""The sequence library: continuity across runs, stores, plain folders, errors."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqdedup import Deduplicator, SeqdedupError
from seqdedup.library import save as saving
from seqdedup.library.load import load_library
from seqdedup.library.store import DB_NAME, decode_records, encode_records

from conftest import examples, kernel_built
from oracle import skipped_flags


def run(records, **options):
    d = Deduplicator(**options)
    out = d.feed(records) + d.flush()
    return out, d.stats


def expected(keys, window, history=None, library=()):
    flags = skipped_flags(keys, window, history, library=library)
    return [k for k, s in zip(keys, flags, strict=True) if not s]


alphabet = st.integers(1, 4).flatmap(
    lambda k: st.lists(st.sampled_from([b"a", b"b", b"c", b"d"][:k]), max_size=60)
)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    x=alphabet,
    y=alphabet,
    z=alphabet,
    window=st.integers(1, 5),
    history=st.sampled_from([None, 100]),
)
def test_runs_continue_from_the_library(tmp_path_factory, x, y, z, window, history):
    library = tmp_path_factory.mktemp("lib") / "L"
    run(x, window_size=window, library_dir=library)
    only_read, _ = run(y, window_size=window, max_history=history, read_sequences=(library,))
    out_y, _ = run(y, window_size=window, max_history=history, library_dir=library)
    assert out_y == expected(y, window, history, library=[x])
    assert only_read == out_y
    out_z, _ = run(z, window_size=window, read_sequences=(library,))
    assert out_z == expected(z, window, library=[x, y])


def library_rows(library):
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        return db.execute("SELECT digest, length FROM sequences ORDER BY digest").fetchall()


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(x=alphabet, y=alphabet, window=st.integers(1, 5))
def test_what_the_library_holds_is_not_saved_again(tmp_path_factory, x, y, window):
    library = tmp_path_factory.mktemp("lib") / "L"
    run(x, window_size=window, library_dir=library)
    after_one = library_rows(library)
    again, stats = run(x, window_size=window, library_dir=library)
    assert library_rows(library) == after_one  # the same input twice: nothing new
    assert stats.library_saved == 0
    assert again == expected(x, window, library=[x])
    # A run that also reads another library saves what it took from there, so that
    # the library it saves to stands on its own.
    other = tmp_path_factory.mktemp("lib") / "M"
    run(y, window_size=window, read_sequences=(library,), library_dir=other)
    out, _ = run(x + y, window_size=window, read_sequences=(other,))
    assert out == expected(x + y, window, library=[y])


def sequence_rows(library):
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        query = "SELECT digest, records, length, kind, count, run_id, last_run FROM sequences"
        return db.execute(query + " ORDER BY rowid").fetchall()


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(x=alphabet, y=alphabet, window=st.integers(1, 4), fold=st.booleans())
def test_a_piece_seen_again_counts_as_a_row_staged_again(tmp_path_factory, x, y, window, fold):
    """A repeated piece whose identity was staged already in the run is counted
    against that row, not staged again: the library (every row, its count and runs) is
    the one that staging every piece makes, a fresh one and one merged into, with fold
    lines' sequences staged under their ids beside."""
    libraries = []
    for held in (saving.REPEATS_HELD, 0):  # (0: every piece staged as its own row)
        library = tmp_path_factory.mktemp("lib") / "L"
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(saving, "REPEATS_HELD", held)
            run(x + x, window_size=window, library_dir=library, fold=fold)
            run(y + x + y, window_size=window, library_dir=library, fold=fold)
        libraries.append(sequence_rows(library))
    assert libraries[0] == libraries[1]


@pytest.mark.parametrize("window", [1, 2, 5, 40])
def test_long_new_stretches_are_staged_in_overlapping_pieces(tmp_path, monkeypatch, window):
    monkeypatch.setattr(saving, "STRETCH_CHUNK", 3)
    library = tmp_path / "L"
    records = [b"r%d" % i for i in range(200)]
    run(records, window_size=window, library_dir=library)
    out, _ = run(records, window_size=window, read_sequences=(library,))
    assert out == []  # every window of the first run is in the library


def test_saves_new_material_compactly_and_counts(tmp_path):
    library = tmp_path / "L"
    block = [b"t1", b"t2", b"t3"]
    records = [b"u1", *block, b"u2", *block, b"u3", *block]
    _, stats = run(records, window_size=3, library_dir=library)
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        rows = db.execute("SELECT kind, length, count FROM sequences ORDER BY kind").fetchall()
        runs = db.execute("SELECT config, statistics FROM runs").fetchall()
    # New material: records 1-11, covered by first-seen windows (the last window,
    # "t1 t2 t3" again, is a repeat, so record 12 is not new); the repeated piece
    # "t1 t2 t3" seen twice in this run.
    assert rows == [("new", 11, 1), ("repeat", 3, 2)]
    assert stats.library_saved == len(rows)
    assert len(runs) == 1 and '"window_size": 3' in runs[0][0]


def test_records_are_stored_independently_of_the_delimiter(tmp_path):
    library = tmp_path / "L"
    records = [b"a\nb", b"\x00\xff", b"", b"c"]
    run(records, window_size=2, byte_mode=True, delimiter=b"\0", library_dir=library)
    out, _ = run(
        [b"a\nb", b"\x00\xff", b"x"],
        window_size=2,
        byte_mode=True,
        delimiter=b"::",
        read_sequences=(library,),
    )
    assert out == [b"x"]
    assert decode_records(encode_records(records)) == records


def test_plain_folder_written_by_hand(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "timeout.txt").write_bytes(b"Traceback\n  File x\nTimeoutError\n")
    (folder / "README.md").write_text("my known traces\n")
    (folder / ".DS_Store").write_bytes(b"\0\0junk")
    (folder / ".gitignore").write_text("*\n")
    (folder / ".keep").write_text("")
    (folder / "latin1.txt").write_bytes(b"caf\xe9\nna\xefve")  # not UTF-8: read as bytes
    sequences = list(load_library(folder, b"\n"))
    assert [s.name for s in sequences] == ["latin1.txt", "timeout.txt"]
    assert sequences[1].records == [b"Traceback", b"  File x", b"TimeoutError"]
    out, stats = run(
        [b"start", b"Traceback", b"  File x", b"TimeoutError", b"caf\xe9", b"end"],
        window_size=2,
        read_sequences=(folder,),
    )
    assert out == [b"start", b"caf\xe9", b"end"]
    assert stats.library_loaded == 2


def test_uniqseq_layout_loads_as_it_is(tmp_path):
    library = tmp_path / "uniqseq-lib"
    (library / "sequences").mkdir(parents=True)
    (library / "metadata-20251125-144204-290932").mkdir()
    (library / "metadata-20251125-144204-290932" / "config.json").write_text("{}")
    content = b"Line 1\nLine 2\nLine 3"  # no trailing delimiter
    (library / "sequences" / "d736e8f24318e94f50d8fea7ae1f6aa4.uniqseq").write_bytes(content)
    lines: list[str] = []
    d = Deduplicator(
        window_size=3, read_sequences=(library,), annotate=True, on_explain=lines.append
    )
    out = d.feed([b"x", b"Line 1", b"Line 2", b"Line 3", b"y"]) + d.flush()
    assert out == [
        b"x",
        b"[DUPLICATE: Lines 2-4 matched library sequence "
        b"d736e8f24318e94f50d8fea7ae1f6aa4.uniqseq records 1-3 (sequence seen 2 times)]",
        b"y",
    ]
    assert lines == [
        "EXPLAIN: Lines 2-4 skipped (duplicate of library sequence "
        "d736e8f24318e94f50d8fea7ae1f6aa4.uniqseq records 1-3, seen 2x)"
    ]


def test_library_errors(tmp_path):
    with pytest.raises(SeqdedupError, match="does not exist"):
        Deduplicator(read_sequences=(tmp_path / "missing",))
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(SeqdedupError, match="not a directory"):
        Deduplicator(read_sequences=(a_file,))
    with pytest.raises(SeqdedupError, match=r"not a directory|cannot be created"):
        Deduplicator(library_dir=a_file)
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / DB_NAME).write_bytes(b"this is not a database" * 100)
    with pytest.raises(SeqdedupError, match="cannot be read"):
        Deduplicator(read_sequences=(corrupt,))


def test_a_row_whose_lengths_do_not_match_its_data_is_one_error(tmp_path, engine):
    """Checked where the row is read: in Python, or by the kernel as it hashes it."""
    library = tmp_path / "L"
    run([b"a", b"b", b"c", b"a", b"b", b"c"], window_size=2, library_dir=library)
    with closing(sqlite3.connect(library / DB_NAME)) as db, db:
        blob = db.execute("SELECT records FROM sequences LIMIT 1").fetchone()[0]
        damaged = (len(decode_records(blob)) + 7).to_bytes(4, "little") + blob[4:]
        db.execute("UPDATE sequences SET records = ?", (damaged,))
    with pytest.raises(SeqdedupError, match="corrupt"):
        run([b"x"], window_size=2, read_sequences=(library,))


def test_failed_run_saves_nothing(tmp_path):
    library = tmp_path / "L"
    run([b"a", b"b"], window_size=1, library_dir=library)
    d = Deduplicator(window_size=1, library_dir=library)
    d.feed([b"c", b"d"])
    d.abort()
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    out, _ = run([b"a", b"c"], window_size=1, read_sequences=(library,))
    assert out == [b"c"]


# Every test here runs once per engine (compiled kernel and pure Python).
pytestmark = pytest.mark.usefixtures("engine")


OLD_LAYOUT = """
CREATE TABLE sequences (digest BLOB PRIMARY KEY, records BLOB NOT NULL,
    length INTEGER NOT NULL, kind TEXT NOT NULL, count INTEGER NOT NULL, run_id INTEGER
) WITHOUT ROWID;
CREATE TABLE runs (id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT NOT NULL,
    config TEXT NOT NULL, statistics TEXT NOT NULL);
"""


def old_layout_library(folder, finished=None):
    """A library in the earlier table layout (WITHOUT ROWID, no last_run) holding the
    sequence x, y; with ``finished``, saved by one run that finished then."""
    from seqdedup.library.store import digest_of

    library = folder / "old"
    library.mkdir()
    encoded = encode_records([b"x", b"y"])
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        db.executescript(OLD_LAYOUT)
        if finished is not None:
            db.execute("INSERT INTO runs VALUES (1, ?, ?, '{}', '{}')", (finished, finished))
        db.execute(
            "INSERT INTO sequences VALUES (?, ?, 2, 'new', 1, ?)",
            (digest_of(encoded), encoded, None if finished is None else 1),
        )
        db.commit()
    return library, encoded


def test_a_library_made_with_the_earlier_table_layout_loads_and_saves(tmp_path):
    library, encoded = old_layout_library(tmp_path)
    d = Deduplicator(window_size=2, library_dir=library)
    assert d.feed([b"x", b"y", b"z", b"x", b"y"]) + d.flush() == [b"z"]
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        rows = db.execute("SELECT count FROM sequences WHERE records = ?", (encoded,)).fetchall()
    assert rows == [(3,)]  # seen twice more in this run: counted, not stored again


def test_a_failed_save_loses_no_output(tmp_path, monkeypatch):
    """The whole output is written and flushed before the library is saved: a save
    that fails (a full disk, a read-only library) is exit 1 with one line, and the
    output is complete."""
    import io

    from seqdedup.cli import seqdedup as cli
    from seqdedup.library.save import LibraryWriter

    def failing_commit(self, config, statistics, on_committed=None):
        self.discard()
        raise SeqdedupError("library 'L' cannot be saved: database or disk is full")

    monkeypatch.setattr(LibraryWriter, "commit", failing_commit)
    source = tmp_path / "in.txt"
    source.write_bytes(b"".join(b"%d\n" % i for i in range(5000)))
    stdout, stderr = io.BytesIO(), io.StringIO()
    status = cli.main(
        ["-q", "-w", "3", "-l", str(tmp_path / "L"), str(source)], None, stdout, stderr
    )
    assert status == 1
    assert stdout.getvalue() == source.read_bytes()  # every record, the last W-1 too
    assert stderr.getvalue().count("\n") == 1 and "cannot be saved" in stderr.getvalue()


def test_staging_holds_a_bounded_number_of_bytes(tmp_path):
    """Stretches of large records go to the staging file by bytes, not only by rows."""
    import sqlite3
    from contextlib import closing

    from seqdedup.library.save import STAGE_BYTES, StagingFile

    staging = StagingFile(str(tmp_path / "staging.sqlite"))
    stretch = [b"x" * 1000] * 1000  # about 1 MB per staged row
    for _ in range(40):
        staging.add(stretch, "new")
        held = sum(len(row[1]) for row in staging._rows)
        assert held < STAGE_BYTES + 1_100_000
    staging.close()
    with closing(sqlite3.connect(tmp_path / "staging.sqlite")) as db:
        assert db.execute("SELECT COUNT(*) FROM staged").fetchone()[0] == 40


@pytest.mark.parametrize("where", ["add_encoded", "_insert"])
def test_a_staging_failure_is_one_line(tmp_path, monkeypatch, where):
    """A full disk or an unwritable library while staging (when a row is added, or in
    the worker thread that inserts the rows): exit 1, one line, no traceback, and
    nothing left behind."""
    import io

    from seqdedup.cli import seqdedup as cli
    from seqdedup.library.save import StagingFile

    def full(self, *args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(StagingFile, where, full)
    source = tmp_path / "in.txt"
    # (The worker's failure comes out when it is next handed rows, or at the end.)
    source.write_bytes(b"".join(b"%d\n" % i for i in range(100_000)))
    library = tmp_path / "L"
    stderr = io.StringIO()
    status = cli.main(
        ["-q", "-w", "3", "-l", str(library), str(source)], None, io.BytesIO(), stderr
    )
    assert status == 1
    assert stderr.getvalue() == (
        f"seqdedup: library '{library}': cannot stage this run's sequences: "
        "database or disk is full\n"
    )
    assert [p.name for p in library.iterdir()] == []


def test_plain_files_beside_the_database_and_in_sub_folders_are_read(tmp_path):
    library = tmp_path / "L"
    first = Deduplicator(window_size=2, library_dir=library)
    first.feed([b"saved one", b"saved two"])
    first.flush()
    (library / "known-trace.txt").write_bytes(b"Traceback\n  at f\n  at g\n")
    (library / "team" / "deeper").mkdir(parents=True)
    (library / "team" / "deeper" / "retry.log").write_bytes(b"retry 1\nretry 2\n")
    (library / ".hidden").write_bytes(b"h1\nh2\n")  # hidden: not a sequence
    (library / "loop").symlink_to(library, target_is_directory=True)  # not followed
    (library / "self").symlink_to(library / "self")  # a link loop: skipped
    d = Deduplicator(window_size=2, read_sequences=(library,), annotate=True)
    out = d.feed(
        [b"saved one", b"saved two", b"Traceback", b"  at f", b"retry 1", b"retry 2", b"h1", b"h2"]
    )
    out += d.flush()
    assert [r for r in out if not r.startswith(b"[DUPLICATE")] == [b"h1", b"h2"]
    markers = b"\n".join(r for r in out if r.startswith(b"[DUPLICATE"))
    assert b"known-trace.txt" in markers and b"retry.log" in markers


def test_an_empty_database_file_is_an_empty_library(tmp_path):
    library = tmp_path / "L"
    library.mkdir()
    (library / "seqdedup.sqlite").write_bytes(b"")
    d = Deduplicator(window_size=1, library_dir=library)
    assert d.feed([b"a", b"a"]) + d.flush() == [b"a"]
    again = Deduplicator(window_size=1, read_sequences=(library,))
    assert again.feed([b"a", b"b"]) + again.flush() == [b"b"]  # the run above was saved


# -- key settings ------------------------------------------------------------------------
noisy = st.lists(st.sampled_from([b"a 1", b"a 2", b"b 0x1f", b"b 0xee", b"c", b"d 9"]), max_size=50)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(x=noisy, y=noisy, window=st.integers(1, 4))
def test_a_library_saved_with_a_normalisation_matches_the_same_keys_later(
    tmp_path_factory, x, y, window
):
    """X saved with --normalize, then Y read against it with the same keys, skips what
    one run over X then Y skips (each its own stream)."""
    from seqdedup.config.normalize import normalize_py, parse_classes

    from oracle import skipped_flags_streams

    steps = (("normalize", "number,hex"),)
    library = tmp_path_factory.mktemp("lib") / "L"
    run(x, window_size=window, library_dir=library, key_steps=steps)
    out, _ = run(y, window_size=window, read_sequences=(library,), key_steps=steps)
    bits = parse_classes("number,hex")
    flags = skipped_flags_streams(
        [[normalize_py(r, bits) for r in x], [normalize_py(r, bits) for r in y]], window
    )
    assert out == [r for r, s in zip(y, flags[len(x) :], strict=True) if not s]


def test_a_library_is_refused_to_runs_that_make_keys_otherwise(tmp_path):
    library = tmp_path / "L"
    run([b"a 1", b"b 2"], window_size=1, library_dir=library, key_steps=(("normalize", "number"),))
    # The same settings, written otherwise: accepted.
    same = (("normalize", "number"), ("normalize", "number"))
    assert run([b"a 7"], window_size=1, read_sequences=(library,), key_steps=same)[0] == []
    for options, named in [
        ({}, "no key options"),
        ({"skip_chars": 2}, "--skip-chars 2"),
        ({"key_steps": (("normalize", "all"),)}, "--normalize timestamp,uuid,ip,hex,number"),
        ({"key_steps": (("mask", "[0-9]"),)}, "--mask [0-9]"),
        ({"json_key": ("msg",)}, "--json-key msg"),
    ]:
        with pytest.raises(SeqdedupError) as raised:
            Deduplicator(window_size=1, read_sequences=(library,), **options)
        message = str(raised.value)
        assert "saved with keys made by --normalize number" in message
        assert f"this run makes them with {named}" in message


def test_libraries_saved_before_key_settings_were_recorded_are_read(tmp_path):
    library = tmp_path / "L"
    run([b"a 1"], window_size=1, library_dir=library)
    with closing(sqlite3.connect(library / "seqdedup.sqlite")) as db:
        rows = db.execute("SELECT id, config FROM runs").fetchall()
        for row_id, text in rows:
            config = json.loads(text)
            assert config["keys"]["steps"] == []  # recorded now
            del config["keys"]
            db.execute("UPDATE runs SET config = ? WHERE id = ?", (json.dumps(config), row_id))
        db.commit()
    steps = (("normalize", "number"),)
    assert run([b"a 2"], window_size=1, read_sequences=(library,), key_steps=steps)[0] == []


def test_a_library_row_must_hold_exactly_its_records():
    from seqdedup.library.store import check_encoded, decode_records, encode_records

    row = encode_records([b"ab", b"", b"cde"])
    check_encoded(row)
    assert decode_records(row) == [b"ab", b"", b"cde"]
    for damaged in (row + b"x", row[:-1], row[:3], b"", row[:4] + row[8:]):
        with pytest.raises(ValueError):
            check_encoded(damaged)
    if not kernel_built():
        return
    from seqdedup import _kernel  # the kernel's reader agrees on every one of them

    for damaged in (row + b"x", row[:-1], row[:3], b""):
        with pytest.raises(ValueError):
            _kernel.hash_encoded(damaged)


def test_rows_check_on_a_big_endian_machine(monkeypatch):
    """On a big-endian host, lengths are swapped when written and when read: the check
    must swap them too (simulated: both sides believe the host is big-endian)."""
    from seqdedup.library import store as library

    monkeypatch.setattr(library.sys, "byteorder", "big")
    row = library.encode_records([b"ab", b"cde"])
    library.check_encoded(row)
    assert library.decode_records(row) == [b"ab", b"cde"]


def test_absorbed_staging_files_land_as_if_staged_here(tmp_path):
    """Other staging files (the Dask engine's workers') land in the commit with the
    run's own rows, read from where they are: every distinct content once, a content
    staged in two files seen twice, a folded sequence under its id, the count of
    sequences saved over all of them."""
    parts = [
        [([b"a", b"b"], "new", None), ([b"c"], "new", None)],
        [([b"a", b"b"], "new", None), ([b"d", b"e"], "named", b"id-1")],
        [],
    ]
    paths = []
    for k, rows in enumerate(parts):
        path = tmp_path / f"part-{k}"
        staged = saving.StagingFile(str(path))
        for records, kind, digest in rows:
            if digest is None:
                staged.add(records, kind)
            else:
                staged.add_encoded(encode_records(records), len(records), kind, digest)
        staged.close()
        paths.append(path)
    writer = saving.LibraryWriter(tmp_path / "L")
    writer.add([b"c"], "new")  # this run's own: the same content as a worker's
    for path in paths:
        writer.absorb(path)
    saved = writer.commit({"window_size": 2}, {})
    with closing(sqlite3.connect(tmp_path / "L" / DB_NAME)) as db:
        rows = db.execute("SELECT records, kind, count FROM sequences").fetchall()
    held = sorted((decode_records(records), kind, count) for records, kind, count in rows)
    assert held == [
        ([b"a", b"b"], "new", 2),
        ([b"c"], "new", 2),
        ([b"d", b"e"], "repeat", 1),
    ]
    assert saved == 3
    assert all(path.exists() for path in paths)  # (the caller removes its files)


# -- a minimum size ------------------------------------------------------------------------
sized_records = st.lists(st.sampled_from([b"", b"a", b"bb", b"ccc", b"dddddd"]), max_size=40)


def record_size(record: object) -> int:
    return len(record) + 1  # type: ignore[arg-type]


@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    x=sized_records,
    y=sized_records,
    z=sized_records,
    window=st.integers(1, 3),
    min_size=st.integers(1, 12),
    history=st.sampled_from([None, 100]),
)
def test_runs_under_a_minimum_size_continue_from_the_library(
    tmp_path_factory, x, y, z, window, min_size, history
):
    """What a run saves holds every stretch the rule compares, so later runs skip what
    they would have skipped after it (X saved; Y read and saved; Z read)."""
    from oracle import skipped_flags_sized

    library = tmp_path_factory.mktemp("lib") / "L"
    sized = {"window_size": window, "min_size": min_size}

    def expected(records, library_runs, history=None):
        flags = skipped_flags_sized([records], window, min_size, record_size, history, library_runs)
        return [r for r, s in zip(records, flags, strict=True) if not s]

    out_x, _ = run(x, library_dir=library, **sized)
    assert out_x == expected(x, [])
    only_read, _ = run(y, max_history=history, read_sequences=(library,), **sized)
    out_y, _ = run(y, max_history=history, library_dir=library, **sized)
    assert out_y == only_read == expected(y, [x], history)
    out_z, _ = run(z, read_sequences=(library,), **sized)
    assert out_z == expected(z, [x, y])


def test_a_library_is_used_only_under_the_minimum_size_it_was_saved_with(tmp_path):
    library = tmp_path / "L"
    run([b"a 1", b"b 2"], window_size=1, min_size=8, library_dir=library)
    assert run([b"a 1", b"b 2"], window_size=1, min_size=8, read_sequences=(library,))[0] == []
    for options, named in [
        ({}, "no minimum size"),
        ({"min_size": 9}, "--min-bytes 9"),
        ({"min_size": 8, "size_unit": "tokens"}, "--min-tokens 8"),
    ]:
        with pytest.raises(SeqdedupError) as raised:
            Deduplicator(window_size=1, read_sequences=(library,), **options)
        assert str(raised.value).endswith(
            f"was saved under --min-bytes 8, this run has {named}: use the same minimum size, "
            "or another library"
        )
    # and a library saved without one is not read under one
    plain = tmp_path / "P"
    run([b"a 1"], window_size=1, library_dir=plain)
    with pytest.raises(SeqdedupError, match="saved under no minimum size, this run has --min-"):
        Deduplicator(window_size=1, min_size=8, read_sequences=(plain,))


def test_long_new_stretches_under_a_minimum_size_overlap_by_the_longest_stretch(
    tmp_path, monkeypatch
):
    """Rows of new material overlap by CAP - 1 records: every stretch the rule compares
    (up to CAP records) lies inside one row, so a later run finds it."""
    from seqdedup.engine.sized import CAP

    monkeypatch.setattr(saving, "STRETCH_CHUNK", 8)  # (rows of 2 * CAP records)

    records = [b"r%d" % k for k in range(3 * CAP + 500)]
    library = tmp_path / "L"
    huge = {"window_size": 1, "min_size": 10**12}  # only CAP records make a stretch large
    run(records, library_dir=library, **huge)
    rows = library_rows(library)
    assert len(rows) > 1 and max(length for _, length in rows) <= 2 * CAP
    # a CAP-record stretch across the first row's end is found again, one record less not
    across = records[2 * CAP - 100 : 3 * CAP - 100]
    assert run(across, read_sequences=(library,), **huge)[0] == []
    assert run(across[1:], read_sequences=(library,), **huge)[0] == across[1:]
