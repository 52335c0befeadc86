"""Looking after a library: info and prune, in-process and through seqdedup-library."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
from contextlib import closing
from datetime import UTC, datetime, timedelta

import pytest

from seqdedup import Deduplicator
from seqdedup.library.admin import describe_library, prune_library
from seqdedup.library.store import DB_NAME
from test_library import expected, old_layout_library

from conftest import library_command, user_env

pytestmark = pytest.mark.usefixtures("engine")


def save(library, records, window=2):
    d = Deduplicator(window_size=window, library_dir=library)
    return d.feed(records) + d.flush()


def age_runs(library, days):
    """Make every run so far look ``days`` older."""
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        for run_id, started, finished in db.execute("SELECT id, started, finished FROM runs"):
            older = [
                (datetime.fromisoformat(t) - timedelta(days=days)).isoformat(timespec="seconds")
                for t in (started, finished)
            ]
            db.execute("UPDATE runs SET started = ?, finished = ? WHERE id = ?", (*older, run_id))
        db.commit()


def rows(library):
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        return db.execute("SELECT kind, length, count FROM sequences ORDER BY kind").fetchall()


OLD = [b"old%d" % i for i in range(10)]
SHARED = [b"shared%d" % i for i in range(5)]
NEW = [b"new%d" % i for i in range(7)]


def test_describe_counts_what_the_library_holds(tmp_path):
    library = tmp_path / "L"
    save(library, [*OLD, b"x", *OLD[:4]])
    (library / "trace.txt").write_bytes(b"a\nb\n")
    info = describe_library(library)
    held = rows(library)
    assert info["sequences"] == {
        "new": sum(1 for kind, _, _ in held if kind == "new"),
        "repeat": sum(1 for kind, _, _ in held if kind == "repeat"),
    }
    assert info["sequences"]["repeat"] == 1  # OLD[:4] repeated once
    assert (
        info["records"] == sum(length for _, length, _ in held) == 12 + 4
    )  # OLD, x, OLD[0] (window 'x old0' is new); the piece
    assert info["runs"] == 1 and info["plain_files"] == 1 and info["plain_bytes"] == 4
    assert info["disk_bytes"] == (library / DB_NAME).stat().st_size
    assert info["oldest_last_seen"] == info["last_run"]


def test_prune_drops_only_what_no_recent_run_saw(tmp_path):
    library = tmp_path / "L"
    save(library, [*OLD, *SHARED])  # run 1, "ten days ago"
    save(library, [b"-", *OLD[:3]])  # matches part of run 1's material
    age_runs(library, 10)
    save(library, [*SHARED, *NEW])  # run 3, today: sees SHARED again
    before = describe_library(library)
    trial = prune_library(library, 5, dry_run=True)
    assert describe_library(library) == before  # a dry run deletes nothing
    result = prune_library(library, 5)
    assert (result["sequences"], result["records"]) == (trial["sequences"], trial["records"])
    # Run 1's stretch (OLD + SHARED) was matched by run 3, so it stays; run 2's new
    # stretch "- old0" was last seen ten days ago (its OLD[:3] was counted, not saved).
    assert result["sequences"] == 1 and result["records"] == 2
    assert describe_library(library)["records"] == before["records"] - 2
    # Everything run 3 relied on is still there.
    d = Deduplicator(window_size=2, read_sequences=(library,))
    assert d.feed([*OLD, *SHARED, *NEW]) + d.flush() == []
    assert prune_library(library, 5)["sequences"] == 0


def test_prune_everything_gives_the_space_back(tmp_path):
    library = tmp_path / "L"
    save(library, [b"line %d with some text" % i for i in range(60_000)])
    big = (library / DB_NAME).stat().st_size
    result = prune_library(library, 0, now=datetime.now(UTC) + timedelta(seconds=5))
    assert result["sequences"] > 0 and result["disk_bytes_before"] == big
    assert result["disk_bytes_after"] < big / 10
    assert describe_library(library)["records"] == 0
    assert save(library, [b"a", b"b", b"a", b"b"]) == [b"a", b"b"]  # still a library


def test_prune_an_earlier_layout_library(tmp_path):
    library, _ = old_layout_library(tmp_path, finished="2020-01-01T00:00:00+00:00")
    assert describe_library(library)["oldest_last_seen"] == "2020-01-01T00:00:00+00:00"
    assert prune_library(library, 30)["sequences"] == 1
    assert describe_library(library)["records"] == 0


def test_missing_or_empty_libraries(tmp_path):
    from seqdedup import SeqdedupError

    with pytest.raises(SeqdedupError, match="does not exist"):
        describe_library(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SeqdedupError, match="not a directory"):
        prune_library(tmp_path / "file", 1)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert describe_library(empty)["records"] == 0
    assert prune_library(empty, 1)["sequences"] == 0
    with pytest.raises(SeqdedupError, match="0 or more"):
        prune_library(empty, -1)


def run_library(*args):
    """``seqdedup-library ARGS`` by its ``main`` in this process (what it writes and
    says is the point here; the tests of `show` run the installed command)."""
    from seqdedup.cli import library as library_cli

    out, err = io.StringIO(), io.StringIO()
    try:
        status = library_cli.main([str(arg) for arg in args], out, err)
    except SystemExit as stop:  # (argparse's own exit, after what it printed to err)
        status = stop.code if isinstance(stop.code, int) else 1
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def test_seqdedup_library_command(tmp_path):
    library = tmp_path / "L"
    save(library, [*OLD, *OLD])
    info = run_library("info", str(library))
    assert info.returncode == 0, info.stderr
    lines = dict(line.split("  ", 1) for line in info.stdout.splitlines())
    assert lines["runs"].strip() == "1"
    assert lines["records"].strip().startswith("21 ")  # stretch (11) + repeated piece (10)
    document = json.loads(run_library("info", str(library), "--json").stdout)
    assert document["records"] == 21 and document["runs"] == 1
    dry = run_library("prune", str(library), "--unseen-days", "0", "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("would delete ")
    assert json.loads(run_library("info", str(library), "--json").stdout) == document
    pruned = json.loads(run_library("prune", str(library), "--unseen-days", "1", "--json").stdout)
    assert pruned["sequences"] == 0  # the run was seconds ago


@pytest.mark.parametrize(
    "args",
    [
        ["info", "/nonexistent/L"],
        ["prune", "/nonexistent/L", "--unseen-days", "1"],
        ["prune", ".", "--unseen-days", "soon"],
        ["prune", "."],
        ["frobnicate"],
        [],
    ],
)
def test_seqdedup_library_errors_are_one_line(args):
    result = run_library(*args)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("seqdedup-library: ")


def test_a_run_does_not_grow_a_library_with_what_it_holds(tmp_path):
    library = tmp_path / "L"
    log = [b"request %d" % (i % 50) for i in range(400)]
    save(library, log, window=3)
    held = rows(library)
    assert save(library, log, window=3) == expected(log, 3, library=[log])
    after = rows(library)
    assert [(kind, length) for kind, length, _ in after] == [(k, n) for k, n, _ in held]
    assert sum(c for *_, c in after) > sum(c for *_, c in held)  # sightings counted


def test_every_fold_line_can_be_expanded_with_show(tmp_path):
    """A folded run's sequence is in the library under the id its line names, even
    when key options make its records differ from run to run; `show` prints it."""
    library = tmp_path / "L"
    steps = [b"open", b"read", b"parse", b"close"]
    block = [b"%d ERROR in %s" % (t, k) for t, k in zip(range(10, 14), steps, strict=True)]
    again = [b"%d ERROR in %s" % (t, k) for t, k in zip(range(20, 24), steps, strict=True)]
    d = Deduplicator(
        window_size=2,
        library_dir=library,
        fold=True,
        fold_format="{id} {length}",
        key_steps=(("normalize", "number"),),
    )
    out = d.feed([b"start", *block, b"mid", *again, *again, b"end"]) + d.flush()
    folds = [line for line in out if line.endswith(b" 4")]
    assert len(folds) == 1
    ident = folds[0].split()[0].decode()
    shown = subprocess.run(
        [*library_command(), "show", str(library), ident],
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == b"".join(record + b"\n" for record in again)  # as first folded
    document = show_json(library, ident[:6])
    assert document["id"].startswith(ident) and document["length"] == 4
    assert document["records"] == [record.decode() for record in again]


def show_json(library, ident):
    done = subprocess.run(
        [*library_command(), "show", str(library), ident, "--json"],
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("ident", "message"),
    [
        ("zz", "'zz' is not a sequence id: give at least 4 of its hex digits"),
        ("abc", "'abc' is not a sequence id"),
        ("ffffffff", "holds no sequence with id ffffffff"),
    ],
)
def test_show_errors_are_one_line(tmp_path, ident, message):
    library = tmp_path / "L"
    save(library, OLD)
    done = subprocess.run(
        [*library_command(), "show", str(library), ident],
        capture_output=True,
        env=user_env(),
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == b""
    error = done.stderr.decode()
    assert error.count("\n") == 1 and message in error, error


def test_prune_refuses_a_database_that_is_no_library(tmp_path):
    """An SQLite file that is not a library: pruned, it says so (exit 1, one line), as
    info and show refuse it, instead of "deleted 0 sequences"."""
    library = tmp_path / "L"
    library.mkdir()
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.commit()
    done = run_library("prune", str(library), "--unseen-days", "1")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "is not a seqdedup library" in done.stderr


def test_info_refuses_a_row_that_claims_more_records_than_it_holds(tmp_path):
    library = tmp_path / "L"
    save(library, OLD)
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        db.execute("UPDATE sequences SET length = 1000000000 WHERE rowid = 1")
        db.commit()
    done = run_library("info", str(library))
    assert done.returncode == 1 and done.stdout == ""
    assert "is damaged" in done.stderr and "1,000,000,000 records" in done.stderr


def test_show_json_gives_the_records_bytes_exactly(tmp_path):
    """Invalid UTF-8 is shown as U+FFFD in the text, and given exactly in base64."""
    import base64

    library = tmp_path / "L"
    records = [b"ok %d" % i for i in range(3)] + [b"bad \xff\xfe"]
    save(library, records + records, window=2)
    with closing(sqlite3.connect(library / DB_NAME)) as db:
        ident = db.execute("SELECT hex(digest) FROM sequences LIMIT 1").fetchone()[0]
    document = json.loads(run_library("show", str(library), ident[:12], "--json").stdout)
    exact = [base64.b64decode(r) for r in document["records_base64"]]
    assert b"bad \xff\xfe" in exact
    assert [r.encode() for r in document["records"]] != exact  # the text is only a view
    assert document["records"] == [r.decode("utf-8", "replace") for r in exact]
