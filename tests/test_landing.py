"""How a run's staged sequences land (library.landing): a new library is the staging
file itself, written once; into an existing one (or one made meanwhile) the rows merge,
every distinct content once, its sightings counted."""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import closing

from hypothesis import given, settings
from hypothesis import strategies as st

from seqdedup.library import save as saving
from seqdedup.library.store import DB_NAME, decode_records

from conftest import examples


def rows_of(library):
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        rows = db.execute("SELECT records, kind, count, run_id, last_run FROM sequences")
        return sorted(
            (tuple(decode_records(records)), kind, count, run, last)
            for records, kind, count, run, last in rows
        )


def staged_by(directory, rows, commit=True):
    """A writer of ``directory`` that staged ``rows`` ((records, kind, id) each)."""
    writer = saving.LibraryWriter(directory)
    for records, kind, digest in rows:
        writer.add(records, kind, digest)
    if commit:
        writer.commit({"window_size": 1}, {})
    return writer


def test_a_new_library_is_the_staging_file_itself(tmp_path):
    """Nothing is copied: the staging file's inode becomes the library's, with the
    permissions the umask gives a new file, and no staging file is left."""
    library = tmp_path / "L"
    writer = staged_by(library, [([b"a", b"b"], "new", None)], commit=False)
    staged = os.stat(writer._staging_path).st_ino
    old = os.umask(0o027)
    try:
        writer.commit({"window_size": 1}, {})
    finally:
        os.umask(old)
    database = library / DB_NAME
    assert os.stat(database).st_ino == staged
    # (made while the umask was 022 or whatever the test runs under: the run's own)
    assert stat.S_IMODE(os.stat(database).st_mode) == 0o666 & ~old
    assert sorted(p.name for p in library.iterdir()) == [DB_NAME]
    assert rows_of(library) == [((b"a", b"b"), "new", 1, 1, None)]
    with closing(sqlite3.connect(database)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT id FROM runs").fetchall() == [(1,)]


def test_a_library_made_while_the_run_staged_is_merged_into(tmp_path):
    """Two runs stage into one new library at once: the first to finish makes it, the
    other merges into it (its sightings added, its named-only row adding none)."""
    library = tmp_path / "L"
    late = staged_by(
        library,
        [([b"a"], "new", None), ([b"a"], "repeat", None), ([b"n"], "named", b"id-n")],
        commit=False,
    )
    staged_by(library, [([b"a"], "new", None), ([b"n"], "named", b"id-n")])
    late.commit({"window_size": 1}, {})
    assert rows_of(library) == [((b"a",), "new", 3, 1, 2), ((b"n",), "repeat", 1, 1, 2)]
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (2,)


contents = st.sampled_from([[b"a"], [b"b"], [b"a", b"b"], [b"c"]])
staged_rows = st.lists(st.tuples(contents, st.sampled_from(["new", "repeat", "named"])), max_size=8)


def as_rows(drawn):
    # (a named sequence's id: the digest of its records, as without key options)
    from seqdedup.library.store import digest_of, encode_records

    return [
        (records, kind, digest_of(encode_records(records)) if kind == "named" else None)
        for records, kind in drawn
    ]


def expected_after(runs):
    """The library's rows after ``runs`` saved in turn, by the rule of one sighting per
    staged row, a named row none (landed after the sightings)."""
    held: dict[tuple[bytes, ...], list] = {}
    for run_id, rows in enumerate(runs, 1):
        for records, kind, _ in sorted(rows, key=lambda row: row[1] == "named"):
            key = tuple(records)
            if key in held:
                held[key][2] += kind != "named"
                held[key][4] = run_id
            else:
                held[key] = [key, "repeat" if kind == "named" else kind, 1, run_id, None]
    return sorted(tuple(row) for row in held.values())


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(staged_rows, min_size=1, max_size=3))
def test_runs_in_turn_land_what_the_rule_says(tmp_path_factory, drawn_runs):
    """Any runs saved in turn (the first makes the library, the rest merge)."""
    library = tmp_path_factory.mktemp("landing") / "L"
    runs = [as_rows(drawn) for drawn in drawn_runs]
    for rows in runs:
        staged_by(library, rows)
    held = [
        (key, kind, count, run, None if last == run else last)
        for key, kind, count, run, last in rows_of(library)
    ]
    assert held == [
        (key, kind, count, run, None if last in (None, run) else last)
        for key, kind, count, run, last in expected_after(runs)
    ]
